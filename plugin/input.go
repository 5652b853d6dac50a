//go:build linux

package plugin

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
	"github.com/procwalk/procwalk/procwalk/session"
)

// DefaultPasswd is the user database Input reads for uid -> name.
const DefaultPasswd = "/etc/passwd"

// Input is procwalk as a Telegraf input: its fields are the TOML options of
// sample.conf. Fill them (Telegraf does, from its config), call Init once,
// then Gather once per interval. The zero value plus Init emits the procwalk
// schema's sessions from /proc.
type Input struct {
	Proc   string `toml:"proc"`
	Schema string `toml:"schema"`
	// The session options (session_kinds, tmux_sockets, cgroup_root,
	// danger_percent, trees, groups, agents, agent_*), the struct
	// procwalk's own flags fill too; danger_percent 0 means the default.
	session.Options
	PSS             bool     `toml:"pss"`
	IO              bool     `toml:"io"`
	Swap            bool     `toml:"swap"`
	ProcessTop      int      `toml:"process_top"`
	ProcessTopBy    string   `toml:"process_top_by"`
	ProcessMatch    string   `toml:"process_match"`
	ProcstatPattern string   `toml:"procstat_pattern"`
	ProcstatExe     string   `toml:"procstat_exe"`
	ProcstatUser    string   `toml:"procstat_user"`
	ProcstatTagWith []string `toml:"procstat_tag_with"`
	SkipSelfMetrics bool     `toml:"skip_self_metrics"`
	Passwd          string   `toml:"passwd"`
	// SourceMode picks the snapshot source as procwalk's --source does:
	// "proc", "bpf" or "auto" ("" is auto). Unused when Source is set.
	SourceMode string `toml:"source"`

	// Log receives grouping notes at debug level; the Telegraf adapter sets
	// it to Telegraf's logger. Nil logs nothing.
	Log Logger `toml:"-"`

	// Hook adds lines to every gather (see Config.Hook); set it before Init.
	Hook Hook `toml:"-"`
	// HookCopies says Hook keeps nothing of a frame once it returns (see
	// Config.HookCopies).
	HookCopies bool `toml:"-"`

	// SkipPID is a process the procstat lookups and process_match never
	// select (see Config.SkipPID): procwalk telegraf sets its own pid. The
	// compiled-in input is Telegraf itself, which procstat would select.
	SkipPID int `toml:"-"`

	// Source takes the snapshots (see Config.Source); nil is the one
	// SourceMode chooses at Init. procwalk telegraf sets the one its
	// --source chose.
	Source procwalk.Source `toml:"-"`

	// GatherOnce says Gather is called once: procwalk telegraf without
	// --execd, a process per gather, sets it. The sessions' grouper then
	// keeps nothing for a next gather (session.Config.Once).
	GatherOnce bool `toml:"-"`

	collector *Collector
	chosen    *bpfsource.Chosen // what Init chose by SourceMode, to Close
}

// SampleConfig is the commented [[inputs.procwalk]] section.
func (*Input) SampleConfig() string { return sampleConfig }

// Init checks every option, naming the first bad one, and prepares the
// collector that Gather uses.
func (in *Input) Init() error {
	cfg, fs, err := in.config()
	if err != nil {
		return err
	}
	in.Close() // a second Init chooses again
	if cfg.Source == nil {
		// Choose fails only for a mode config has checked. A BPF
		// source that is not allowed or fails to load is /proc and
		// one warning.
		if in.chosen, err = bpfsource.Choose(fs, in.SourceMode); err != nil {
			return optionErr("source", fmt.Errorf("%w: %s: %w", ErrConfig, opt("source"), err))
		}
		if in.chosen.Warn && in.Log != nil {
			in.Log.Warnf("%s", in.chosen.Why)
		}
		cfg.Source = in.chosen.Source
	}
	c, err := NewCollector(fs, cfg)
	if err != nil {
		in.Close()
		return err
	}
	in.collector = c
	return nil
}

// Close unloads the BPF program Init loaded, if it did. Telegraf has no
// call for it: its programs go when Telegraf exits.
func (in *Input) Close() error {
	if in.chosen == nil {
		return nil
	}
	err := in.chosen.Close()
	in.chosen = nil
	return err
}

// Collector is the collector Init prepared: exec and execd modes drive it
// directly. Nil before Init.
func (in *Input) Collector() *Collector { return in.collector }

// Gather gathers once. Partial failures (a session source that could not be
// read, a hook error) go to acc.AddError; the error is returned only when
// nothing could be gathered.
func (in *Input) Gather(acc Accumulator) error {
	if in.collector == nil {
		return fmt.Errorf("%w: Gather called before Init", ErrConfig)
	}
	return in.collector.Accumulate(acc, in.Log)
}

// config turns the options into a Config and opens the procfs root.
func (in *Input) config() (Config, procwalk.FS, error) {
	cfg := Config{Schema: in.Schema, NoSelfMetrics: in.SkipSelfMetrics, Hook: in.Hook, HookCopies: in.HookCopies, SkipPID: in.SkipPID, Source: in.Source}
	root := in.Proc
	if root == "" {
		root = procwalk.DefaultRoot
	}
	fs, err := procwalk.NewFS(root)
	if err != nil {
		return cfg, fs, optionErr("proc", fmt.Errorf("%w: %s: %w", ErrConfig, opt("proc"), err))
	}
	if in.SourceMode != "" && !slices.Contains(bpfsource.Modes(), in.SourceMode) {
		return cfg, fs, optionErr("source", fmt.Errorf("%w: %s %q: want one of %s", ErrConfig, opt("source"), in.SourceMode, strings.Join(bpfsource.Modes(), ", ")))
	}
	opts := in.Options
	opts.DangerPercent = cmp.Or(opts.DangerPercent, session.DefaultDangerPercent) // 0: unset
	if cfg.Group, err = opts.Config(); err != nil {
		var oe *session.OptionError
		if errors.As(err, &oe) {
			err = oe.Rename(opt(oe.Option))
			if oe.Option == "danger_percent" {
				err = fmt.Errorf("%w (0 means %v)", err, session.DefaultDangerPercent)
			}
		}
		if oe != nil {
			return cfg, fs, optionErr(oe.Option, fmt.Errorf("%w: %w", ErrConfig, err))
		}
		return cfg, fs, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cfg.Group.Once = in.GatherOnce
	if in.PSS {
		cfg.Fields |= procwalk.FieldSmaps
	}
	if in.IO {
		cfg.Fields |= procwalk.FieldIO
	}
	if in.Swap {
		cfg.Fields |= procwalk.FieldSwap
	}
	cfg.Processes = ProcessConfig{Top: in.ProcessTop, By: in.ProcessTopBy}
	for _, re := range []struct {
		key, expr string
		dst       **regexp.Regexp
	}{
		{"process_match", in.ProcessMatch, &cfg.Processes.Match},
		{"procstat_pattern", in.ProcstatPattern, &cfg.Procstat.Pattern},
		{"procstat_exe", in.ProcstatExe, &cfg.Procstat.Exe},
	} {
		if re.expr == "" {
			continue
		}
		if *re.dst, err = regexp.Compile(re.expr); err != nil {
			return cfg, fs, optionErr(re.key, fmt.Errorf("%w: %s: %w", ErrConfig, opt(re.key), err))
		}
	}
	// Without the default user database, users show as numeric uids; a
	// database asked for by name must be readable.
	if in.Passwd == "" || in.Passwd == DefaultPasswd {
		cfg.Users, _ = procwalk.ReadUsers(DefaultPasswd)
	} else if cfg.Users, err = procwalk.ReadUsers(in.Passwd); err != nil {
		return cfg, fs, optionErr("passwd", fmt.Errorf("%w: %s: %w", ErrConfig, opt("passwd"), err))
	}
	cfg.Procstat.User = in.ProcstatUser
	cfg.Procstat.TagWith = in.ProcstatTagWith
	return cfg, fs, nil
}
