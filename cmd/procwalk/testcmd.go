//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/scripting/ruletest"
	"github.com/procwalk/procwalk/scripts"
)

// testcmd.go is `procwalk test PATH...`: rule tests (scripting/ruletest),
// each a rule over input frames and the alerts, kills and metrics it must
// make at given times.

type testCommand struct {
	g *globals
	e *env
	s scriptFlags
}

const testHelp = `Runs rule tests: each FILE (a folder: every *.ruletest file in it) names a
rule, its input frames (a recording, or a few lines per frame describing
sessions and processes over time) and the alerts, kills and metrics it
must make at given times. The rule runs as watch --replay would run it:
on the frames' clock, every kill a dry run planned on its frame, never
sent. A test passes when every expectation holds, no alert or kill came
that none expects, and no run failed; a failing test shows, time by
time, what was expected and not got (-) and what was got and not
expected (+).

  rule memory-guard -- limit=2GiB ticks=3
  at 0s
    session tmux:build
      100 bash rss=5MiB
        102 cc1 rss=2.5GiB
  every 10s until 30s
  expect 20s kill pid=102 outcome=dry_run
  expect 20s alert severity=warning session=build

A test file has one statement a line, # comments:
  rule NAME [-- ARGS]      a bundled script, or a file beside the test
  mode watch|run           one state across the frames (watch, the
                           default), or a fresh run each frame
  user NAME UID            a user name, for user=NAME and p.user
  host cpus=N mem=SIZE     the host (4 CPUs, 16GiB unless given)
  at TIME                  a frame (0s, 90s, 5m from the first): the one
                           before, changed by the lines indented below
    session KIND:NAME k=v  its members: the processes under it and their
                           descendants
    PID [NAME] k=v ...     a process: new (named), or a known one changed;
                           indented below another, its child
    exit PID               the process has exited
  every STEP until TIME    frames like the last one, STEP apart
  replay FILE              the frames of a recording instead
  expect TIME alert k=v    an alert with these tags and fields (message,
                           severity, kind, session, pid, comm, value ...)
  expect TIME kill k=v     a kill's outcome (pid, comm, outcome, signals)
  expect TIME emit M k=v   an emitted metric M
  expect TIME print "T"    a printed line holding T (log "T": logged)
Process keys: ppid pgrp sid tty comm cmdline exe cwd cgroup user uid state
threads kernel rss vsize shared swap pss uss read_bytes write_bytes
cpu_time fds oom_score age; rates are measured between frames, or set:
cpu growth read_rate write_rate. Session keys: status status_for why
model context_percent context_window context_used and token counts
(agents), memory_limit memory_usage cpu_quota (cgroups), any other an
attribute. k~REGEXP matches a regular expression; numbers compare as
numbers. Alerts and kills are checked at every frame, emits at the times
an expectation names their measurement. scripting/README.md, "Testing
rules", says more.

EXAMPLES
  procwalk test rules/
  procwalk test memory-guard.ruletest agents.ruletest

EXIT CODES
  0  every test passed
  1  a test failed
  2  usage: no file named, a file that cannot be read or does not parse,
     a rule that does not compile`

func newTestCommand(g *globals, e *env) *ffcli.Command {
	c := &testCommand{g: g, e: e}
	fs := newFlagSet("test", g, e.stderr)
	c.s.register(fs)
	return &ffcli.Command{
		Name:       "test",
		ShortUsage: "procwalk test FILE|DIR...",
		ShortHelp:  "run rule tests: a rule over given frames, its alerts, kills and metrics checked",
		LongHelp:   testHelp,
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *testCommand) exec(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErrorf("name test files or folders, as in procwalk test rules/")
	}
	limits, err := c.s.limits()
	if err != nil {
		return err
	}
	kc, err := c.s.killConfig("test", false, nil)
	if err != nil {
		return err
	}
	files, err := testFiles(args)
	if err != nil {
		return err
	}
	opt := ruletest.Options{Limits: limits, Protected: kc.Protected, Bundled: func(name string) ([]byte, bool) {
		s, ok := scripts.Lookup(name)
		return s.Source, ok
	}}
	failed := 0
	for _, path := range files {
		r, err := ruletest.RunFile(ctx, path, opt)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return usageErrorf("%v", err)
		}
		if r.Pass() {
			fmt.Fprintf(c.e.stdout, "ok    %s (%d frames, %d expectations)\n", printable(path), r.Frames, r.Checked)
			continue
		}
		failed++
		fmt.Fprintf(c.e.stdout, "FAIL  %s (%d frames)\n", printable(path), r.Frames)
		for _, e := range r.Errors {
			fmt.Fprintf(c.e.stdout, "  run failed %s\n", printable(e))
		}
		for _, line := range strings.Split(strings.TrimSuffix(r.Diff, "\n"), "\n") {
			if line != "" {
				fmt.Fprintln(c.e.stdout, printable(line))
			}
		}
	}
	if failed > 0 {
		return &exitErr{Code: exitError, Err: fmt.Errorf("%d of %d rule tests failed", failed, len(files))}
	}
	return nil
}

// testFiles expands folders into their *.ruletest files, in name order.
func testFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "*.ruletest"))
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if len(found) == 0 {
			return nil, usageErrorf("%s: no *.ruletest file in this folder", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
