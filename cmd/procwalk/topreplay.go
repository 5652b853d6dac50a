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
	fail := func(err error) (*top.ReplaySource, error) {
		r.Close()
		return nil, err
	}
	s, err := top.NewReplaySource(r, printable(path))
	switch {
	case errors.Is(err, top.ErrNoFrame):
		return fail(usageErrorf("--replay %s: %v", path, err))
	case err != nil:
		return fail(usageErrorf("--replay: %v", err))
	}
	if at != "" {
		i, err := runner.FrameAt(r, at, s.Start())
		if err != nil {
			return fail(scriptError(err))
		}
		s.Step(i)
	}
	return s, nil
}
