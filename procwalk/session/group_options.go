//go:build linux

package session

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// group_options.go turns settings given as text (flags, a Telegraf config
// file) into a GroupConfig: the one place they are parsed and checked, for
// the CLI and the Telegraf plugin alike.

// Options are the settings of a GroupConfig as a person writes them: one
// struct for procwalk's flags (sessions, top, telegraf ...) and the Telegraf
// input's TOML (the tags; plugin.Input embeds it). Durations and sizes are
// text, parsed by Config, so that a bad one is an OptionError naming its
// option. The zero value builds the zero GroupConfig, but for DangerPercent
// (give DefaultDangerPercent).
type Options struct {
	Kinds       []string `toml:"session_kinds"` // session kinds; empty means all
	TmuxSockets []string `toml:"tmux_sockets"`  // names (tmux -L) or paths (tmux -S)
	// CgroupRoot is where cgroupfs is mounted; "" means DefaultCgroupRoot.
	// When set, it must be a directory.
	CgroupRoot string `toml:"cgroup_root"`
	// DangerPercent is the danger threshold, above 0 and at most 100.
	DangerPercent       float64  `toml:"danger_percent"`
	Trees               []string `toml:"trees"`                 // [NAME=]SPEC each (ParseTreeSpec)
	GroupsFile          string   `toml:"groups"`                // group rules (LoadGroupRules); "" for none
	Fold                []string `toml:"fold"`                  // NAME=KIND:REGEX each (ParseFoldRule)
	Agents              []string `toml:"agents"`                // NAME=REGEX each, added to DefaultAgents
	AgentTranscripts    []string `toml:"agent_transcripts"`     // NAME=PARSER:DIR each (WithTranscripts)
	AgentContextWindows []string `toml:"agent_context_windows"` // FAMILY=TOKENS each (ContextWindows)
	// The agent status thresholds (AgentStatusConfig): durations such as
	// "10s" or "5m", a CPU percentage; "" and 0 are the defaults.
	AgentActiveWithin string  `toml:"agent_active_within"`
	AgentBusyCPU      float64 `toml:"agent_busy_cpu"`
	AgentTurnTimeout  string  `toml:"agent_turn_timeout"`
	AgentEndedKeep    string  `toml:"agent_ended_keep"`
	// AgentFirstRead bounds a transcript's first read: a size (ParseBytes)
	// or "all"; "" is the default. It sets AgentStatus.FirstReadBytes.
	AgentFirstRead string `toml:"agent_first_read"`
	// AgentPrices is a price table file (LoadPriceTable) for agents'
	// cost_usd; "" for none. It sets AgentStatus.Prices.
	AgentPrices string          `toml:"agent_prices"`
	Users       *procwalk.Users `toml:"-"`
}

// OptionError is a bad GroupOptions setting. Option is its name as a
// Telegraf option ("danger_percent", "trees"); callers name it their own
// way (Rename) before showing it.
type OptionError struct {
	Option string
	// Value, when set, follows the name: the bad value, or what is wrong
	// with a list ("has an empty entry").
	Value string
	Err   error
}

func (e *OptionError) Error() string {
	if e.Value != "" {
		return e.Option + " " + e.Value + ": " + e.Err.Error()
	}
	return e.Option + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// Rename returns the error with the option called name, e.g. a flag.
func (e *OptionError) Rename(name string) *OptionError {
	c := *e
	c.Option = name
	return &c
}

// Flag is the procwalk flag that sets the option, without its dashes
// (OptionFlag).
func (e *OptionError) Flag() string { return OptionFlag(e.Option) }

// OptionFlag is the procwalk flag that sets option, a key of Options (and
// of the Telegraf input), without its dashes: a repeatable option's flag
// is singular (--tree, --agent, --agent-transcript,
// --agent-context-window), session_kinds is --kind, any other is the key
// with dashes.
func OptionFlag(option string) string {
	switch option {
	case "trees":
		return "tree"
	case "agents":
		return "agent"
	case "agent_transcripts":
		return "agent-transcript"
	case "agent_context_windows":
		return "agent-context-window"
	case "session_kinds":
		return "kind"
	}
	return strings.ReplaceAll(option, "_", "-")
}

// agentStatusOption names the option of an AgentStatusConfig field.
func agentStatusOption(field string) string {
	switch field {
	case "ActiveWithin":
		return "agent_active_within"
	case "BusyCPUPercent":
		return "agent_busy_cpu"
	case "TurnTimeout":
		return "agent_turn_timeout"
	case "FirstReadBytes":
		return "agent_first_read"
	default:
		return "agent_context_windows"
	}
}

// Config checks o and builds its GroupConfig. An error is an *OptionError.
func (o Options) Config() (Config, error) {
	bad := func(option, value string, err error) (Config, error) {
		return Config{}, &OptionError{Option: option, Value: value, Err: err}
	}
	for _, k := range o.Kinds {
		if !slices.Contains(Kinds(), k) {
			return bad("session_kinds", fmt.Sprintf("%q", k), fmt.Errorf("want any of %s", strings.Join(Kinds(), ", ")))
		}
	}
	for _, s := range o.TmuxSockets {
		if strings.TrimSpace(s) == "" {
			return bad("tmux_sockets", "has an empty entry", fmt.Errorf("give tmux socket names (-L) or paths (-S)"))
		}
	}
	if o.CgroupRoot != "" {
		if st, err := os.Stat(o.CgroupRoot); err != nil || !st.IsDir() {
			return bad("cgroup_root", fmt.Sprintf("%q", o.CgroupRoot), fmt.Errorf("not a directory: give where cgroupfs is mounted, or leave it out for %s", DefaultCgroupRoot))
		}
	}
	if err := CheckDangerPercent(o.DangerPercent); err != nil {
		return bad("danger_percent", fmt.Sprint(o.DangerPercent), err)
	}
	cfg := Config{Kinds: o.Kinds, CgroupRoot: o.CgroupRoot, DangerPercent: o.DangerPercent, Users: o.Users,
		Tmux: TmuxConfig{Sockets: o.TmuxSockets}, AgentStatus: AgentStatusConfig{BusyCPUPercent: o.AgentBusyCPU}}
	for _, d := range []struct {
		option, value string
		dst           *time.Duration
	}{
		{"agent_active_within", o.AgentActiveWithin, &cfg.AgentStatus.ActiveWithin},
		{"agent_turn_timeout", o.AgentTurnTimeout, &cfg.AgentStatus.TurnTimeout},
		{"agent_ended_keep", o.AgentEndedKeep, &cfg.AgentStatus.EndedKeep},
	} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil {
			return bad(d.option, fmt.Sprintf("%q", d.value), errors.New("want a duration such as 10s or 5m"))
		}
		*d.dst = v
	}
	if len(o.Agents) > 0 {
		cfg.Agents = DefaultAgents()
		for _, a := range o.Agents {
			rule, err := ParseAgentRule(a)
			if err != nil {
				return bad("agents", "", err)
			}
			cfg.Agents = append(cfg.Agents, rule)
		}
	}
	var err error
	if o.AgentFirstRead != "" {
		if cfg.AgentStatus.FirstReadBytes, err = ParseFirstRead(o.AgentFirstRead); err != nil {
			return bad("agent_first_read", fmt.Sprintf("%q", o.AgentFirstRead), err)
		}
	}
	if f := cfg.AgentStatus.badField(); f != nil {
		value, problem := f.value, f.problem
		if f.field == "FirstReadBytes" && o.AgentFirstRead != "" {
			value, problem = fmt.Sprintf("%q", o.AgentFirstRead), o.AgentFirstRead+" "+problem // as given
		}
		return bad(agentStatusOption(f.field), value, errors.New(problem))
	}
	if o.AgentPrices != "" {
		if cfg.AgentStatus.Prices, err = LoadPriceTable(o.AgentPrices); err != nil {
			return bad("agent_prices", fmt.Sprintf("%q", o.AgentPrices), err)
		}
	}
	if cfg.AgentStatus.ContextWindows, err = ContextWindows(o.AgentContextWindows); err != nil {
		return bad("agent_context_windows", "", err)
	}
	if cfg.Agents, err = WithTranscripts(cfg.Agents, o.AgentTranscripts); err != nil {
		return bad("agent_transcripts", "", err)
	}
	for _, t := range o.Trees {
		spec, err := ParseTreeSpec(t)
		if err != nil {
			return bad("trees", "", err)
		}
		cfg.Trees = append(cfg.Trees, spec)
	}
	for _, f := range o.Fold {
		rule, err := ParseFoldRule(f)
		if err != nil {
			return bad("fold", "", err)
		}
		cfg.Fold = append(cfg.Fold, rule)
	}
	if o.GroupsFile != "" {
		if cfg.Groups, err = LoadGroupRules(o.GroupsFile); err != nil {
			return bad("groups", "", err)
		}
	}
	return cfg, nil
}
