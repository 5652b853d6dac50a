//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/scripting/ruletest"
	"github.com/procwalk/procwalk/scripting/runner"
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

func newTestCommand(g *globals, e *env) *ffcli.Command {
	c := &testCommand{g: g, e: e}
	fs := newFlagSet("test", g, e.stderr)
	c.s.register(fs)
	return &ffcli.Command{
		Name:       "test",
		ShortUsage: "procwalk test FILE|DIR...",
		ShortHelp:  "run rule tests: a rule over given frames, its alerts, kills and metrics checked",
		LongHelp:   helpText("test"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *testCommand) exec(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErrorf("name test files or folders, as in procwalk test rules/")
	}
	limits, err := c.s.limits.Check()
	if err != nil {
		return scriptError(err)
	}
	protected, err := runner.Protected(cmdline.SplitList(c.s.protect))
	if err != nil {
		return scriptError(err)
	}
	files, err := ruletest.Files(args)
	if err != nil {
		return usageErrorf("%v", err)
	}
	opt := ruletest.Options{Limits: limits, Protected: protected, Bundled: func(name string) ([]byte, bool) {
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
