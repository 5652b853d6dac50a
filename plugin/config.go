//go:build linux

package plugin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Schemas a Collector can emit.
const (
	// SchemaProcwalk emits procwalk_session, procwalk_process (opt-in) and
	// procwalk (self metrics).
	SchemaProcwalk = "procwalk"
	// SchemaProcstat emits Telegraf procstat's procstat and procstat_lookup
	// measurements per process, plus procwalk (self metrics).
	SchemaProcstat = "procstat"
)

// Config says what a Collector gathers and emits. The zero value emits the
// procwalk schema with the default session kinds and no process lines.
type Config struct {
	Schema string // SchemaProcwalk ("" means it) or SchemaProcstat

	// Fields are optional /proc files to read beyond those the schema and
	// the session kinds need; procwalk.FieldSmaps here adds PSS and USS.
	Fields procwalk.Fields

	// Group says which sessions to build (procwalk schema). Empty Kinds
	// means DefaultKinds.
	Group session.Config

	Processes ProcessConfig
	Procstat  ProcstatConfig

	// NoSelfMetrics leaves out the procwalk self-metrics line.
	NoSelfMetrics bool

	// SkipPID is a process that the procstat lookups and Processes.Match
	// never select (0: none), as pgrep never selects itself: procwalk
	// telegraf's own, whose command line holds their patterns.
	SkipPID int

	// Users names uids (procstat's user field and lookup); nil shows uids
	// as numbers. Group.Users defaults to it.
	Users *procwalk.Users

	// Source takes the snapshots; nil is a /proc Scanner of the FS. The
	// self-metrics name the source that took each gather (its
	// Snapshot.Source) and why (SourceNote).
	Source procwalk.Source

	// Hook, when set, adds lines to every batch after procwalk's own (a
	// script's metrics and actions, for example).
	Hook Hook
	// HookCopies says Hook keeps nothing of a frame once it returns: it
	// copies what it needs (a script worker gets a copy of each frame over
	// a pipe). The frames' storage is then reused from gather to gather;
	// without it a Collector with a hook keeps every frame (see Hook).
	HookCopies bool
}

// DefaultKinds are the session kinds emitted when none are configured: the
// ones whose names stay few and stable and that cost no /proc file per
// process beyond stat and statm (agents read the cmdline of interpreters
// alone). sid, pgrp and tty sessions come and go with every shell job, which
// would make one series each; user sessions stat every process's /proc
// directory for its owner, so they are asked for by name.
func DefaultKinds() []string {
	return []string{session.KindTmux, session.KindCgroup, session.KindAgent, session.KindTree, session.KindGroup}
}

// ProcessConfig selects procwalk_process lines: the Top members of each
// session ranked By a metric, among those that Match. Top 0 emits none.
type ProcessConfig struct {
	Top   int            // processes per session, at most MaxTop
	By    string         // a ProcessMetrics name; "" means rss_bytes
	Match *regexp.Regexp // on comm or the joined command line; nil matches all
}

// MaxTop bounds ProcessConfig.Top: process lines are for the few processes
// that matter in a session, not a per-process dump.
const MaxTop = 100

// ProcessMetrics are the names ProcessConfig.By accepts: the metrics of
// procwalk's catalogue that a process has, ids (pid, uid ...) aside. Each
// one's short name (rss, cpu ...) is accepted too.
func ProcessMetrics() []string { return metric.Names(rankings()) }

// rankings are the metrics that rank processes.
func rankings() []metric.Desc {
	return slices.DeleteFunc(metric.Processes(), func(d metric.Desc) bool { return d.ID })
}

// processRanking returns the metric to rank processes by ("" means
// rss_bytes), and false for a name ProcessMetrics does not list.
func processRanking(by string) (metric.Desc, bool) {
	if by == "" {
		by = "rss_bytes"
	}
	d, ok := metric.Lookup(by)
	return d, ok && d.OfProcess() && !d.ID
}

// ProcstatConfig selects the processes of the procstat schema, like
// procstat's pattern, exe and user options (at most one; none means every
// process, as procstat's pattern = "." does), and which of procstat's
// tag_with properties become tags instead of fields.
type ProcstatConfig struct {
	Pattern *regexp.Regexp // on the command line joined by spaces (pgrep -f)
	Exe     *regexp.Regexp // on the process name (pgrep)
	User    string         // the owner's user name (pgrep -u)
	TagWith []string       // any of ProcstatTagWith
}

// ProcstatTagWith are the tag_with properties the procstat schema supports.
func ProcstatTagWith() []string { return []string{"cmdline", "pid", "ppid", "status", "user"} }

// procstatFields are the files procstat's default properties (cpu, memory)
// and its always-on fields need.
const procstatFields = procwalk.FieldStatus | procwalk.FieldCmdline | procwalk.FieldIO | procwalk.FieldFDs

// check validates c, naming the first bad option.
func (c *Config) check() error {
	switch c.Schema {
	case "", SchemaProcwalk, SchemaProcstat:
	default:
		return optionErr("schema", fmt.Errorf("%w: "+opt("schema")+" %q: want %q or %q", ErrConfig, c.Schema, SchemaProcwalk, SchemaProcstat))
	}
	p := c.Processes
	if p.Top < 0 || p.Top > MaxTop {
		return optionErr("process_top", fmt.Errorf("%w: "+opt("process_top")+" %d: want 0 (no process lines) to %d", ErrConfig, p.Top, MaxTop))
	}
	rank, ok := processRanking(p.By)
	if !ok {
		return optionErr("process_top_by", fmt.Errorf("%w: "+opt("process_top_by")+" %q: want one of %s", ErrConfig, p.By, strings.Join(ProcessMetrics(), ", ")))
	}
	if rank.Needs&procwalk.FieldSmaps != 0 && c.Fields&procwalk.FieldSmaps == 0 {
		return optionErr("process_top_by", fmt.Errorf("%w: "+opt("process_top_by")+" %q needs PSS/USS: set "+opt("pss")+" to true", ErrConfig, p.By))
	}
	if p.Match != nil && p.Top == 0 {
		return optionErr("process_match", fmt.Errorf("%w: "+opt("process_match")+" is set but "+opt("process_top")+" is 0: set it to how many matching processes to emit per session", ErrConfig))
	}
	s := c.Procstat
	procstatSet := s.Pattern != nil || s.Exe != nil || s.User != "" || len(s.TagWith) > 0
	if c.Schema != SchemaProcstat && procstatSet {
		return optionErr("schema", fmt.Errorf("%w: procstat_* options apply only with %s = %q", ErrConfig, opt("schema"), SchemaProcstat))
	}
	if c.Schema == SchemaProcstat && p.Top > 0 {
		return optionErr("process_top", fmt.Errorf("%w: %s applies only with %s = %q", ErrConfig, opt("process_top"), opt("schema"), SchemaProcwalk))
	}
	set := 0
	for _, on := range []bool{s.Pattern != nil, s.Exe != nil, s.User != ""} {
		if on {
			set++
		}
	}
	if set > 1 {
		return optionErr("procstat_pattern", fmt.Errorf("%w: "+opt("procstat_pattern")+", "+opt("procstat_exe")+" and "+opt("procstat_user")+": set at most one, as procstat uses one lookup", ErrConfig))
	}
	for _, t := range s.TagWith {
		if !slices.Contains(ProcstatTagWith(), t) {
			return optionErr("procstat_tag_with", fmt.Errorf("%w: "+opt("procstat_tag_with")+" %q: want any of %s", ErrConfig, t, strings.Join(ProcstatTagWith(), ", ")))
		}
	}
	return nil
}

// opt names an option both ways users set it: the Telegraf TOML key and the
// procwalk telegraf flag, e.g. "process_top (--process-top)".
func opt(key string) string { return key + " (--" + session.OptionFlag(key) + ")" }

// OptionError is a bad value of an option. Its message names the option
// both ways (opt); Key says which, for a caller that points at it.
type OptionError struct {
	Key string // the Telegraf key, e.g. "process_top"
	Err error
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Flag is the option's procwalk telegraf flag, without its dashes.
func (e *OptionError) Flag() string { return session.OptionFlag(e.Key) }

// optionErr is err, about the option key.
func optionErr(key string, err error) error { return &OptionError{Key: key, Err: err} }
