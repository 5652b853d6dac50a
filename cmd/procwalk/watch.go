//go:build linux

package main

import (
	"context"
	"flag"
	"github.com/procwalk/procwalk/procwalk"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/onalert"
	"github.com/procwalk/procwalk/scripting/runner"
)

// watch.go is `procwalk watch SCRIPT|NAME --interval 10s`: the script runs
// every tick against a fresh snapshot, with rates measured since the last
// tick and its procwalk.state kept from tick to tick.

type watchCommand struct {
	g     *globals
	e     *env
	fs    *flag.FlagSet
	f     sessionFlags
	s     scriptFlags
	count int
	// linesOnly keeps stdout for line protocol: print goes to stderr.
	linesOnly bool
	replay    string // --replay: a recording's frames instead of this host's
	onAlert   onAlertFlags
}

// defaultWatchInterval is watch's tick when --interval is not given: the
// global default (1s, made for the two samples of a rate) would rescan
// /proc every second for a rule that acts over minutes.
const defaultWatchInterval = 10 * time.Second

func newWatchCommand(g *globals, e *env) *ffcli.Command {
	c := &watchCommand{g: g, e: e}
	fs := newFlagSet("watch", g, e.stderr)
	// The global --interval is a rate's sampling time; here it is the tick,
	// 10 s unless given: say so in --help.
	iv := fs.Lookup("interval")
	iv.DefValue, iv.Usage = defaultWatchInterval.String(), "time between runs of the script (env PROCWALK_INTERVAL)"
	c.fs = fs
	c.f.register(fs)
	// Registered with the sessions flags, refused below.
	fs.Lookup("no-rates").Usage = "refused: watch measures rates between its ticks"
	c.s.register(fs)
	fs.IntVar(&c.count, "count", 0, "stop after this many ticks (0: run until interrupted)")
	fs.BoolVar(&c.linesOnly, "lines-only", false, "print() to stderr: stdout carries line protocol alone")
	c.onAlert.register(fs)
	cmdline.Path("FILE").String(fs, &c.replay, "replay", "", "run on the frames of this recording (procwalk record) instead of this host's, on the recorded clock; every kill a dry run")
	return &ffcli.Command{
		Name:       "watch",
		ShortUsage: "procwalk watch [flags] SCRIPT|NAME [flags] [-- ARGS...]",
		ShortHelp:  "run a Lua script every --interval: guards and alerts",
		LongHelp:   helpText("watch"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *watchCommand) exec(ctx context.Context, args []string) error {
	c.g.longRunning = true
	call, err := parseScriptCall(c.fs, args)
	if err != nil {
		return err
	}
	interval, intervalGiven := c.g.intervalOr(c.fs, defaultWatchInterval)
	switch {
	case interval <= 0:
		return usageErrorf("--interval %v: want a positive tick such as 10s", interval)
	case c.count < 0:
		return usageErrorf("--count %d: want 0 (no end) or more", c.count)
	case c.f.noRates:
		return usageErrorf("--no-rates does not apply to watch: rates are measured between ticks")
	}
	if err := c.onAlert.check(); err != nil {
		return err
	}
	ctx, stdout, stop := runner.WatchStdout(ctx, c.e.stdout, true)
	defer stop()
	o := c.s.options(c.g, c.e, &c.f, "watch", call, c.replay)
	o.Print = procwalk.EscapingWriter{W: printTo(stdout, c.e.stderr, c.linesOnly)}
	script, err := newScript(o)
	if err != nil {
		return err
	}
	defer script.Close()
	if c.e.conn != nil { // the worker's alerts reach its parent, which runs the commands
		return script.Serve(ctx, exitCode)
	}
	cfg := c.onAlert.Config
	cfg.Host = script.Run.Config().Hostname // a replay's: the recorded host
	alerts := onalert.New(cfg, c.e.stderr)
	defer alerts.Close()
	if alerts != nil {
		script.Run.Out.Alert = alerts.Alert
	}
	if script.Run.Replay != nil && !intervalGiven {
		interval = 0 // every recorded frame
	}
	script.Watch(ctx, stdout, interval, c.count)
	return nil
}

// intervalOr is --interval when it was given to fs (a flag, env or the
// config file), else def: the global default (1s, two samples of a rate)
// is no tick for a command that runs over minutes. given says which.
func (g *globals) intervalOr(fs *flag.FlagSet, def time.Duration) (interval time.Duration, given bool) {
	if cmdline.IsSet(fs, "interval") {
		return g.interval, true
	}
	return def, false
}
