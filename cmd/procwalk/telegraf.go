//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// telegraf.go is `procwalk telegraf`: line protocol for Telegraf's exec
// input (one batch, then exit) or its execd input (--execd: a batch per
// line on stdin, per SIGHUP/SIGUSR1/SIGUSR2, or per --interval).

type telegrafCommand struct {
	g          *globals
	e          *env
	in         plugin.Input
	execd      bool
	signal     string
	rates      bool
	debug      bool
	keepMemory bool
	kinds      string // --kind
	kindsAlias string // --session-kinds, the same
	tagWith    string
	script     telegrafScript // --script: a Lua script run on every gather (script.go)
}

func newTelegrafCommand(g *globals, e *env) *ffcli.Command {
	c := &telegrafCommand{g: g, e: e}
	fs := newFlagSet("telegraf", g, e.stderr)
	in := &c.in
	fs.BoolVar(&c.execd, "execd", false, "run as a Telegraf execd plugin: gather once per stdin line or --interval until stdin closes")
	cmdline.Spec{Meta: "SIGNAL", Choices: cmdline.Words(plugin.SignalStdin, plugin.SignalNone, plugin.SignalSIGHUP, plugin.SignalSIGUSR1, plugin.SignalSIGUSR2)}.String(fs, &c.signal, "signal", plugin.SignalStdin, "execd: STDIN (gather per stdin line), SIGHUP, SIGUSR1 or SIGUSR2 (gather per signal) or none (gather every --interval), as execd's signal setting")
	fs.BoolVar(&c.rates, "rates", false, "exec mode: scan twice, --interval apart, to emit CPU % and other rates")
	fs.BoolVar(&c.debug, "debug", false, "write D! debug lines to stderr")
	fs.BoolVar(&c.keepMemory, "keep-memory", false, "execd: keep memory between gathers instead of returning it to the kernel after each batch (a garbage collection, and the pages of the process array kept for the next scan): lower CPU, higher resident memory")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words(plugin.SchemaProcwalk, plugin.SchemaProcstat)}.String(fs, &in.Schema, "schema", plugin.SchemaProcwalk, "output schema: procwalk or procstat (Telegraf procstat's measurements)")
	kindsSpec().String(fs, &c.kinds, "kind", strings.Join(plugin.DefaultKinds(), ","), "session kinds to emit, comma-separated: "+strings.Join(session.Kinds(), ", "))
	cmdline.Spec{Meta: "KINDS", Choices: session.Kinds, List: true}.String(fs, &c.kindsAlias, "session-kinds", strings.Join(plugin.DefaultKinds(), ","), "the same as --kind (the name of Telegraf's option, session_kinds)")
	registerSessionOptions(fs, &in.Options)
	fs.BoolVar(&in.IO, "io", false, "read /proc/<pid>/io for read/write bytes (other users' processes need root)")
	fs.BoolVar(&in.Swap, "swap", false, "swap_bytes of sessions: VmSwap, free on a host with no swap in use, else every process's status")
	fs.IntVar(&in.ProcessTop, "process-top", 0, fmt.Sprintf("emit procwalk_process lines for the top N processes of each session (0 to %d)", plugin.MaxTop))
	cmdline.Spec{Meta: "KEY", Choices: plugin.ProcessMetrics, Usage: func() string {
		return "rank processes by: " + strings.Join(plugin.ProcessMetrics(), ", ")
	}}.String(fs, &in.ProcessTopBy, "process-top-by", "rss_bytes", "")
	cmdline.Spec{Meta: "RE"}.String(fs, &in.ProcessMatch, "process-match", "", "rank only processes whose comm or command line matches this regexp")
	cmdline.Spec{Meta: "RE"}.String(fs, &in.ProcstatPattern, "procstat-pattern", "", "procstat schema: processes whose command line matches this regexp (pgrep -f)")
	cmdline.Spec{Meta: "RE"}.String(fs, &in.ProcstatExe, "procstat-exe", "", "procstat schema: processes whose name matches this regexp (pgrep)")
	cmdline.Spec{Meta: "USER"}.String(fs, &in.ProcstatUser, "procstat-user", "", "procstat schema: processes of this user name (pgrep -u)")
	cmdline.Spec{Meta: "LIST", Choices: plugin.ProcstatTagWith, List: true}.String(fs, &c.tagWith, "procstat-tag-with", "", "procstat schema: properties to tag instead of field, comma-separated: "+strings.Join(plugin.ProcstatTagWith(), ", "))
	fs.BoolVar(&in.SkipSelfMetrics, "skip-self-metrics", false, "leave out the procwalk self-metrics line")
	c.script.register(fs)
	return &ffcli.Command{
		Name:       "telegraf",
		ShortUsage: "procwalk telegraf [--execd] [flags]",
		ShortHelp:  "write Telegraf line protocol for inputs.exec or inputs.execd",
		LongHelp:   helpText("telegraf"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *telegrafCommand) exec(ctx context.Context, args []string) (err error) {
	c.g.longRunning = c.execd
	log := plugin.NewLineLogger(c.e.stderr, c.debug)
	if c.execd {
		// Telegraf reads execd's stderr as log lines: a failure to start
		// is an E! line too, with the documented exit code.
		defer func() {
			var ee *exitErr
			if err != nil && !(errors.As(err, &ee) && ee.Err == nil) {
				err = c.g.named(err)
				log.Errorf("%s", printable(err.Error()))
				err = &exitErr{Code: exitCode(err)}
			}
		}()
	}
	if len(args) > 0 {
		return usageErrorf("telegraf takes no arguments, got %q", args)
	}
	// Checked in every mode: a bad --signal in a config shared with exec
	// mode must not wait for the first execd run to be found.
	sig, err := plugin.ParseSignal(c.signal)
	if err != nil {
		return &exitErr{Code: exitUsage, Err: err, Flag: "signal"}
	}
	var gatherSignals chan os.Signal
	if c.execd {
		// Telegraf's signal = "SIGHUP"/"SIGUSR1"/"SIGUSR2" sends one each
		// interval; Go's default for them is to exit. Caught first thing,
		// in every execd mode: each one is a gather, never a death.
		gatherSignals = make(chan os.Signal, 1)
		signal.Notify(gatherSignals, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
		defer signal.Stop(gatherSignals)
	}
	// Telegraf logs execd's stderr lines marked W! as warnings.
	c.g.note = func(n string) { log.Warnf("%s", printable(n)) }
	if c.e.conn != nil {
		c.g.note = func(string) {} // a script worker: the parent said it
	}
	hook, closeScript, err := c.script.attach(ctx, c.g, c.e, &c.in, log)
	if err != nil {
		return err
	}
	defer closeScript()
	if c.e.conn != nil && hook != nil {
		// The worker of the parent's --script: the hook on each frame the
		// parent sends, as watch runs its script; the script's metrics go
		// to the parent's batch, which holds procwalk's own lines.
		return hook.Serve(ctx, exitCode)
	}
	collector, err := c.collector()
	if err != nil {
		return err
	}
	// A closed stdout must end us with EPIPE from Write, which we handle,
	// not with SIGPIPE, which Go raises for writes to fd 1 otherwise.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)

	if c.execd {
		if sig == plugin.SignalNone && c.g.interval <= 0 {
			return usageErrorf("--interval %v: %s gathers every --interval, which must be positive, such as 10s", c.g.interval, c.g.sources.Mention("signal", "none"))
		}
		x := &plugin.Execd{Collector: collector, Stdin: c.e.stdin, Stdout: c.e.stdout, Log: log, Signal: sig, Interval: c.g.interval, Signals: gatherSignals, ReturnMemory: !c.keepMemory, StdinEnded: plugin.StdinEnded(c.e.stdin)}
		err = x.Run(ctx)
		if err != nil {
			// Logged with its marker, so Telegraf shows it as an error;
			// the nil Err keeps main from printing it again unmarked.
			log.Errorf("%v", err)
		}
		plugin.ReleasePipes(c.e.stdout, c.e.stderr)
		if err != nil {
			return &exitErr{Code: exitError}
		}
		return nil
	}
	frame.OneShotGC()
	if c.rates {
		if err := c.waitForRates(ctx, collector); err != nil {
			return err
		}
	}
	err = collector.WriteBatch(c.e.stdout, log)
	switch {
	case err == nil, errors.Is(err, syscall.EPIPE):
		return nil
	case errors.Is(err, plugin.ErrNothingGathered):
		return &exitErr{Code: exitError, Err: err}
	}
	return fmt.Errorf("writing metrics: %w", err)
}

// waitForRates takes the first of two samples and waits --interval.
func (c *telegrafCommand) waitForRates(ctx context.Context, collector *plugin.Collector) error {
	if c.g.interval <= 0 {
		return usageErrorf("--interval %v: %s needs two samples a positive time apart, such as 1s", c.g.interval, c.g.sources.Mention("rates", ""))
	}
	if err := collector.Prime(); err != nil {
		return &exitErr{Code: exitError, Err: err}
	}
	wait := time.NewTimer(c.g.interval)
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted while sampling rates over --interval %v: %w", c.g.interval, context.Cause(ctx))
	case <-wait.C:
		return nil
	}
}

// collector maps the flags onto the plugin's options and lets the plugin
// validate them, so the CLI and the compiled-in input accept the same.
func (c *telegrafCommand) collector() (*plugin.Collector, error) {
	in := &c.in
	in.Proc = c.g.proc
	in.PSS = c.g.pss
	kinds := c.kinds
	if c.g.sources.Winner("kind", "session-kinds") == "session-kinds" {
		kinds = c.kindsAlias
	}
	in.Kinds = cmdline.SplitList(kinds)
	in.ProcstatTagWith = cmdline.SplitList(c.tagWith)
	in.Passwd = c.g.passwd
	in.GatherOnce = !c.execd
	if filepath.Clean(c.g.proc) == procwalk.DefaultRoot {
		// As pgrep leaves itself out: our command line holds the pattern.
		in.SkipPID = os.Getpid()
	}
	if fsys, err := c.g.openFS(); err == nil {
		// Otherwise Init names the bad --proc.
		if in.Source, err = c.g.snapshotSource(fsys); err != nil {
			return nil, err
		}
	}
	if err := in.Init(); err != nil {
		var flag string // the flag whose value err is about
		if oe := (*plugin.OptionError)(nil); errors.As(err, &oe) {
			flag = oe.Flag()
		}
		if errors.Is(err, procwalk.ErrNoProc) {
			return nil, &exitErr{Code: exitError, Err: err, Flag: flag}
		}
		if errors.Is(err, plugin.ErrConfig) {
			return nil, &exitErr{Code: exitUsage, Err: err, Flag: flag}
		}
		return nil, err
	}
	return in.Collector(), nil
}
