//go:build linux

package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripting/runner"
	"github.com/procwalk/procwalk/scripts"
)

// run.go is `procwalk run SCRIPT|NAME [-- ARGS]`: one run of a Lua script
// against one snapshot (two, --interval apart, for rates).

type runCommand struct {
	g    *globals
	e    *env
	fs   *flag.FlagSet // parses flags written after the script's name too
	f    sessionFlags
	s    scriptFlags
	list bool
	show string // --show NAME: print a bundled script
	api  bool
	// linesOnly keeps stdout for line protocol: print goes to stderr.
	linesOnly bool
	replay    string // --replay: a recording's frames instead of this host's
	at        string // --at: the one frame of --replay to run on
}

func newRunCommand(g *globals, e *env) *ffcli.Command {
	c := &runCommand{g: g, e: e}
	fs := newFlagSet("run", g, e.stderr)
	c.fs = fs
	c.f.register(fs)
	c.s.register(fs)
	fs.BoolVar(&c.list, "list", false, "list the bundled scripts and what each does")
	cmdline.Spec{Choices: scripts.Names}.String(fs, &c.show, "show", "", "print bundled script NAME, a template to start a script of your own from")
	fs.BoolVar(&c.api, "api", false, "print the Lua API reference: every function and method, its arguments and what it returns, one line each; the fields of processes and sessions")
	fs.BoolVar(&c.linesOnly, "lines-only", false, "print() to stderr: stdout carries line protocol alone")
	cmdline.Path("FILE").String(fs, &c.replay, "replay", "", "run on each frame of this recording (procwalk record) instead of this host, on the recorded clock; every kill a dry run")
	fs.StringVar(&c.at, "at", "", "with --replay, run on the frame shown at this time only: +90s (from the first frame), 03:12, or an RFC 3339 time")
	return &ffcli.Command{
		Name:       "run",
		ShortUsage: "procwalk run [flags] SCRIPT|NAME [flags] [-- ARGS...] | --list | --api",
		ShortHelp:  "run a Lua script once: reports, rules, actions",
		LongHelp:   helpText("run"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *runCommand) exec(ctx context.Context, args []string) error {
	if c.show != "" {
		if len(args) > 0 {
			return usageErrorf("--show takes no script to run, got %q", args)
		}
		return showScript(c.e.stdout, c.show)
	}
	if c.api {
		if len(args) > 0 {
			return usageErrorf("--api takes no script, got %q", args)
		}
		_, err := io.WriteString(c.e.stdout, scripting.ReferenceAt(c.e.outputWidth(c.e.stdout, false)))
		return err
	}
	if c.list {
		if len(args) > 0 {
			return usageErrorf("--list takes no script, got %q", args)
		}
		scripts.WriteList(c.e.stdout, c.e.outputWidth(c.e.stdout, false))
		return nil
	}
	call, err := parseScriptCall(c.fs, args)
	if err != nil {
		return err
	}
	ctx, stdout, stop := runner.WatchStdout(ctx, c.e.stdout, false)
	defer stop()
	if c.at != "" && c.replay == "" {
		return usageErrorf("--at %s needs --replay FILE: it names a frame of a recording", c.at)
	}
	o := c.s.options(c.g, c.e, &c.f, "run", call, c.replay)
	o.Print = procwalk.EscapingWriter{W: printTo(stdout, c.e.stderr, c.linesOnly)}
	script, err := newScript(o)
	if err != nil {
		return err
	}
	defer script.Close()
	switch {
	case c.e.conn != nil:
		return script.Serve(ctx, exitCode)
	case script.Run.Replay != nil:
		return scriptError(script.ReplayRuns(ctx, stdout, c.at))
	}
	f, err := c.g.gather(ctx, script.Run.Pipeline, !c.f.noRates)
	if err != nil {
		if stdout.Gone() {
			return nil // nobody reads: done, as watch is
		}
		return err
	}
	// One run, in a worker when isolated: a run that fails there says what
	// the worker's memory peaked at.
	return script.Once(ctx, f, stdout)
}

// printTo is where Lua's print goes under run and watch: stdout, the
// report's place, or stderr with --lines-only.
func printTo(stdout, stderr io.Writer, linesOnly bool) io.Writer {
	if linesOnly {
		return stderr
	}
	return stdout
}

// scriptPipeline is the pipeline of run and watch, cfg's (runner.New
// says what it reads and keeps) grouping every session kind as the
// session flags say.
func scriptPipeline(g *globals, f *sessionFlags, users *procwalk.Users, cfg frame.Config) (*frame.Pipeline, error) {
	fsys, err := g.openFS()
	if err != nil {
		return nil, err
	}
	gc, err := f.groupConfig(nil, users)
	if err != nil {
		return nil, err
	}
	if cfg.Grouper, err = session.NewGrouper(fsys, gc); err != nil {
		return nil, usageErrorf("%v", err)
	}
	return g.pipeline(cfg)
}

// lineEncoder is the plugin's line-protocol encoder, for a script's lines.
type lineEncoder struct{}

func (lineEncoder) AppendMetric(dst []byte, measurement string, tags map[string]string, fields map[string]any, t time.Time) ([]byte, error) {
	return plugin.AppendMetric(dst, measurement, tags, fields, t)
}

func (lineEncoder) AppendActions(dst []byte, events ...kill.ActionEvent) ([]byte, error) {
	return plugin.AppendActions(dst, events...)
}
