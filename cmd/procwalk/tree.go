//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"strconv"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// tree.go is `procwalk tree [PID]`: the process tree from one scan, each
// line with its own RSS and the totals of its subtree.

type treeCommand struct {
	g      *globals
	e      *env
	kernel bool
	wide   bool
	json   bool
}

func newTreeCommand(g *globals, e *env) *ffcli.Command {
	c := &treeCommand{g: g, e: e}
	fs := newFlagSet("tree", g, e.stderr)
	fs.BoolVar(&c.kernel, "kernel", false, "include kernel threads")
	fs.BoolVar(&c.wide, "wide", false, "never cut lines to the terminal's width (or COLUMNS)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object: the tree as nested processes, each with its subtree's totals")
	return &ffcli.Command{
		Name:       "tree",
		ShortUsage: "procwalk tree [flags] [PID]",
		ShortHelp:  "draw the process tree with per-subtree totals",
		LongHelp:   helpText("tree"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *treeCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usageErrorf("tree takes at most one PID, got %q", args)
	}
	pid := 0
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return usageErrorf("tree: %q is not a PID (a positive number)", args[0])
		}
		pid = n
	}
	// smaps_rollup takes each target's mmap lock: with --pss it is read
	// after the scan, for the processes drawn alone.
	frame.OneShotGC()
	p, err := c.g.pipeline(frame.Config{NoRates: true})
	if err != nil {
		return err
	}
	f, err := c.g.gather(ctx, p, false)
	if err != nil {
		return err
	}
	snap := f.Snapshot
	roots, shown, err := render.TreeQuery{PID: pid, Kernel: c.kernel, PSS: c.g.pss, JSON: c.json}.Read(f)
	switch {
	case errors.Is(err, render.ErrNoProcess):
		return fmt.Errorf("pid %d is not in %s: it may have exited; procwalk ps lists the pids", pid, c.g.proc)
	case err != nil:
		return err
	}
	if c.json {
		users, _ := c.g.users()
		return render.WriteJSONTree(c.e.stdout, snap, roots, shown, users)
	}
	t := render.TreeTable(snap, roots, shown, c.g.pss)
	if err := printTable(c.e, t, c.e.stdout, c.wide); err != nil {
		return err
	}
	writeVisibilityNote(c.e.stderr, snap)
	return nil
}
