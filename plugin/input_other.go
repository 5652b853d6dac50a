//go:build !linux

package plugin

import (
	"errors"
	"fmt"
	"runtime"
)

// Input is the compiled-in input on a system other than Linux, where
// procwalk has nothing to read: a Telegraf built for every system (macOS,
// Windows, the BSDs) compiles with inputs.procwalk, and Init says why it
// cannot run. It keeps the Linux Input's TOML options (TestOtherInput
// checks them: on Linux the session options come from the embedded
// session.Options, flat here), so that a configuration shared by a fleet
// parses and the error is this one, not Telegraf's "fields were not used".
type Input struct {
	Proc                string   `toml:"proc"`
	Schema              string   `toml:"schema"`
	Kinds               []string `toml:"session_kinds"`
	TmuxSockets         []string `toml:"tmux_sockets"`
	CgroupRoot          string   `toml:"cgroup_root"`
	DangerPercent       float64  `toml:"danger_percent"`
	Trees               []string `toml:"trees"`
	GroupsFile          string   `toml:"groups"`
	Fold                []string `toml:"fold"`
	Agents              []string `toml:"agents"`
	AgentTranscripts    []string `toml:"agent_transcripts"`
	AgentContextWindows []string `toml:"agent_context_windows"`
	AgentActiveWithin   string   `toml:"agent_active_within"`
	AgentBusyCPU        float64  `toml:"agent_busy_cpu"`
	AgentTurnTimeout    string   `toml:"agent_turn_timeout"`
	AgentEndedKeep      string   `toml:"agent_ended_keep"`
	AgentFirstRead      string   `toml:"agent_first_read"`
	AgentPrices         string   `toml:"agent_prices"`
	PSS                 bool     `toml:"pss"`
	IO                  bool     `toml:"io"`
	Swap                bool     `toml:"swap"`
	ProcessTop          int      `toml:"process_top"`
	ProcessTopBy        string   `toml:"process_top_by"`
	ProcessMatch        string   `toml:"process_match"`
	ProcstatPattern     string   `toml:"procstat_pattern"`
	ProcstatExe         string   `toml:"procstat_exe"`
	ProcstatUser        string   `toml:"procstat_user"`
	ProcstatTagWith     []string `toml:"procstat_tag_with"`
	SkipSelfMetrics     bool     `toml:"skip_self_metrics"`
	Passwd              string   `toml:"passwd"`
	SourceMode          string   `toml:"source"`

	// Log is set by the Telegraf adapter, as on Linux.
	Log Logger `toml:"-"`
}

// SampleConfig is the commented [[inputs.procwalk]] section.
func (*Input) SampleConfig() string { return sampleConfig }

// Init fails: see errNotLinux.
func (*Input) Init() error { return errNotLinux() }

// Gather fails as Init does (Telegraf never calls it after a failed Init).
func (*Input) Gather(Accumulator) error { return errNotLinux() }

// errNotLinux says why inputs.procwalk cannot run here and what to do. It
// wraps errors.ErrUnsupported.
func errNotLinux() error {
	return fmt.Errorf("inputs.procwalk needs Linux: it reads /proc and cgroup files, and this Telegraf runs on %s; "+
		"keep [[inputs.procwalk]] in the configuration of Linux hosts only: %w", runtime.GOOS, errors.ErrUnsupported)
}
