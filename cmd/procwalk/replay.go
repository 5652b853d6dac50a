//go:build linux

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/scripting/runner"
)

// replay.go is run --replay: the script runs on a recording's frames
// (runner.Replay) instead of this host's.

// replayRun is run --replay: one run per frame, each a fresh run as
// procwalk run would have made then (a line on stderr before each says
// which), or the one frame --at names. It fails (exit 1) when a run
// failed.
func (c *runCommand) replayRun(ctx context.Context, script *runner.Script, stdout *runner.Stdout) error {
	l := &runner.Loop{Run: script.Run, Stdout: stdout, What: "run: frame", Worker: script.Worker(stdout)}
	if l.Worker != nil {
		defer l.Worker.Close()
	}
	rp := script.Run.Replay
	pick, err := c.pickAt(rp)
	if err != nil {
		return err
	}
	frames := l.ReplayRuns(ctx, pick)
	switch {
	case stdout.Gone():
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s interrupted: %w", script.Run.Script.Name, context.Cause(ctx))
	case frames == 0:
		return &exitErr{Code: exitError, Err: fmt.Errorf("--replay %s: no frame to run on", rp.Path)}
	case l.Failed() > 0:
		return &exitErr{Code: exitError, Err: fmt.Errorf("%d of %d runs failed", l.Failed(), frames)}
	}
	return nil
}

// pickAt picks the frame --at names: the last at or before its time, the
// one on screen then; nil without --at (every frame).
func (c *runCommand) pickAt(rp *runner.Replay) (func(frame.Frame) bool, error) {
	if c.at == "" {
		return nil, nil
	}
	r := rp.Reader()
	first, err := r.Frame(0)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	at, err := runner.ParseAt(c.at, first.Snapshot.Time)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	chosen, err := r.IndexAt(at)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	if chosen < 0 {
		return nil, usageErrorf("--at %s: the recording starts later, at %s", c.at, first.Snapshot.Time.Local().Format(time.RFC3339))
	}
	i := -1
	return func(frame.Frame) bool { i++; return i == chosen }, nil
}
