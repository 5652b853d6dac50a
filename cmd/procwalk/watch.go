//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/onalert"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/scripting"
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
	fs.StringVar(&c.replay, "replay", "", "run on the frames of this recording (procwalk record) instead of this host's, on the recorded clock; every kill a dry run")
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
	ctx, stdout, stop := watchStdout(ctx, c.e.stdout, true)
	defer stop()
	sr, err := newScriptRun(c.g, &c.f, &c.s, call, "watch", true, c.e, printTo(stdout, c.e.stderr, c.linesOnly), c.replay)
	if err != nil {
		return err
	}
	defer sr.close()
	if c.e.conn == nil { // the worker's alerts reach its parent, which runs the commands
		cfg := c.onAlert.Config
		cfg.Host = sr.cfg.Hostname // a replay's: the recorded host
		alerts := onalert.New(cfg, c.e.stderr)
		defer alerts.Close()
		if alerts != nil {
			sr.out.alert = alerts.Alert
		}
	}
	w := &watchLoop{sr: sr, e: c.e, stdout: stdout}
	switch {
	case c.e.conn != nil:
		return serveWorker(ctx, c.e, c.g, sr.limits, func(ctx context.Context, f frame.Frame) (string, error) {
			return sr.runFrame(ctx, f, c.e.stdout)
		})
	case c.s.isolated(c.e):
		w.worker = sr.worker(stdout, scripting.WorkerGatherWait)
		defer w.worker.Close()
	}
	if sr.replay != nil {
		if !intervalGiven {
			interval = 0 // every recorded frame
		}
		w.replayWatch(ctx, interval, c.count)
		return nil
	}
	w.loop(ctx, interval, c.count)
	return nil
}

// intervalOr is --interval when it was given to fs (a flag, env or the
// config file), else def: the global default (1s, two samples of a rate)
// is no tick for a command that runs over minutes. given says which.
func (g *globals) intervalOr(fs *flag.FlagSet, def time.Duration) (interval time.Duration, given bool) {
	interval = def
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "interval" {
			interval, given = g.interval, true
		}
	})
	return interval, given
}

// watchLoop is the state kept across ticks: (in sr) the pipeline, the Lua
// state and the session grouper, or the worker running the script.
type watchLoop struct {
	sr     *scriptRun
	e      *env
	stdout *readerGone
	failed int               // consecutive failed ticks
	worker *scripting.Worker // runs the ticks when scripts are isolated
	// what names a tick in a failure's line: "watch: tick" unless set.
	what        string
	failedTotal int
}

// loop ticks until ctx ends, count ticks have run, or stdout is closed:
// the pipeline's driver, a frame every interval from the first at once.
// Ticks that a slow run overlaps are skipped, not queued.
func (w *watchLoop) loop(ctx context.Context, interval time.Duration, count int) {
	n := 0
	w.sr.pipeline.Run(ctx, frame.Count(frame.Every(interval, true), count), func(f frame.Frame, err error) error {
		n++
		if !w.tick(ctx, n, f, err) {
			return frame.ErrStop
		}
		return nil
	})
}

// tick runs the script once on f, here or in the worker, and reports
// whether to go on: only a closed stdout stops the loop; every other
// failure (gatherErr: the gather's) is logged and the next tick goes on.
func (w *watchLoop) tick(ctx context.Context, n int, f frame.Frame, gatherErr error) bool {
	if ctx.Err() != nil {
		return false
	}
	var note string
	var err error
	switch {
	case gatherErr != nil:
		err = fmt.Errorf("scanning /proc: %w", gatherErr)
	case w.worker != nil:
		var d scripting.WorkerDone
		if d, err = w.worker.Tick(ctx, f); err == nil {
			note, err = d.Note, doneErr(d)
		}
		// The run's lines, kept by the worker's parent side until it ended.
		if ferr := w.sr.out.flush(w.stdout); ferr != nil && !closedPipe(ferr) && err == nil {
			err = fmt.Errorf("writing metrics: %w", ferr)
		}
	default:
		note, err = w.sr.runFrame(ctx, f, w.stdout)
	}
	switch {
	case w.stdout.Gone():
		return false // nobody reads any more
	case ctx.Err() != nil: // interrupted mid-run: not the script's fault
	case err != nil:
		w.fail(n, err)
	default:
		w.failed = 0
		if note != "" && n == 1 {
			fmt.Fprintf(w.e.stderr, "procwalk: %s\n", note)
		}
	}
	return true
}

// fail logs a failed tick; a run of failures says how many in a row.
func (w *watchLoop) fail(n int, err error) {
	w.failed++
	w.failedTotal++
	var ee *exitErr
	if errors.As(err, &ee) && ee.Err != nil {
		err = ee.Err
	}
	suffix := ""
	if w.failed > 1 {
		suffix = fmt.Sprintf(" (%d failed ticks in a row)", w.failed)
	}
	// One line, escaped: the message may name a process, and holds the
	// script's traceback.
	what := w.what
	if what == "" {
		what = "watch: tick"
	}
	fmt.Fprintf(w.e.stderr, "procwalk: %s %d failed%s: %s\n", what, n, suffix, printable(err.Error()))
}
