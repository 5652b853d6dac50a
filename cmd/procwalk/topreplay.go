//go:build linux

package main

import (
	"errors"

	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/scripting/runner"
)

// topreplay.go is top --replay FILE: the live view over a recording's
// frames instead of this host's (top.ReplaySource).

// newReplayTopSource opens the recording at path, showing first the last
// frame at or before at ("": the first frame; runner.ParseAt's forms).
func newReplayTopSource(path, at string) (*top.ReplaySource, error) {
	r, err := recording.Open(path)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	src, err := top.NewReplaySource(r, printable(path), 0)
	if err != nil {
		r.Close()
		return nil, usageErrorf("--replay %s: %v", path, err)
	}
	if at != "" {
		i, err := replayFrameAt(r, at)
		if err != nil {
			r.Close()
			return nil, err
		}
		src.Step(i)
	}
	return src, nil
}

// replayFrameAt is the index of the frame of r that --at names: the last
// at or before its time, the one on screen then (a relative time counts
// from the first frame).
func replayFrameAt(r *recording.Reader, at string) (int, error) {
	first, err := r.Frame(0)
	if err != nil {
		return 0, usageErrorf("--replay: %v", err)
	}
	t, err := runner.ParseAt(at, first.Snapshot.Time)
	if err != nil {
		return 0, usageErrorf("%v", err)
	}
	i, err := r.IndexAt(t)
	switch {
	case errors.Is(err, recording.ErrStartsLater):
		return 0, usageErrorf("--at %s: %v", at, err)
	case err != nil:
		return 0, usageErrorf("--replay: %v", err)
	}
	return i, nil
}
