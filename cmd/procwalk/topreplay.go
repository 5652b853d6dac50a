//go:build linux

package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/scripting/runner"
)

// topreplay.go is top --replay FILE: the live view over a recording's
// frames instead of this host's, stepped through with [ and ] (a
// top.Stepper). Nothing is killed: the recording's pids are not this
// host's processes.

// replayTopSource serves a recording's frames to the live view: Gather
// returns the frame stepped to, decoded once.
type replayTopSource struct {
	r     *recording.Reader
	path  string
	count int
	first time.Time

	mu   sync.Mutex // Step and Position run on the UI's goroutine, Gather outside it
	at   int        // the frame to show
	seen int        // the frame Gather returned last, and its time
	when time.Time

	recent *recording.Recent // Gather's alone
}

// recentFrames is how many decoded frames the source keeps: about 1 MiB
// each at 2,000 processes.
const recentFrames = 16

// newReplayTopSource opens the recording at path, showing first the last
// frame at or before at ("": the first frame; parseAt's forms).
func newReplayTopSource(path, at string) (*replayTopSource, error) {
	r, err := recording.Open(path)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	s := &replayTopSource{r: r, path: path, recent: recording.NewRecent(r, recentFrames)}
	fail := func(err error) (*replayTopSource, error) {
		r.Close()
		return nil, err
	}
	if s.count, err = r.Len(); err != nil {
		return fail(usageErrorf("--replay: %v", err))
	}
	if s.count == 0 {
		return fail(usageErrorf("--replay %s: the recording has no frame", path))
	}
	f0, err := r.Frame(0)
	if err != nil {
		return fail(usageErrorf("--replay: %v", err))
	}
	s.first, s.when = f0.Snapshot.Time, f0.Snapshot.Time
	if at != "" {
		t, err := runner.ParseAt(at, s.first)
		if err != nil {
			return fail(usageErrorf("%v", err))
		}
		if s.at, err = r.IndexAt(t); err != nil {
			return fail(usageErrorf("--replay: %v", err))
		}
		if s.at < 0 {
			return fail(usageErrorf("--at %s: the recording starts later, at %s", at, s.first.Local().Format(time.RFC3339)))
		}
	}
	return s, nil
}

// Gather returns the frame stepped to; need is what the recording holds.
func (s *replayTopSource) Gather(_ top.Need, shown func(top.Frame)) (top.Frame, error) {
	s.mu.Lock()
	at := s.at
	s.mu.Unlock()
	f, err := s.recent.Frame(at)
	if err != nil {
		return top.Frame{}, err
	}
	tf := top.Frame{Frame: f, AllKinds: true}
	if shown != nil {
		shown(tf)
	}
	s.mu.Lock()
	s.seen, s.when = at, f.Snapshot.Time
	s.mu.Unlock()
	return tf, nil
}

// Step moves the frame to show by frames, within the recording.
func (s *replayTopSource) Step(by int) {
	s.mu.Lock()
	s.at = min(max(s.at+by, 0), s.count-1)
	s.mu.Unlock()
}

// Position names the frame shown.
func (s *replayTopSource) Position() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%s frame %d of %d, %s (+%s)", printable(s.path), s.seen+1, s.count,
		s.when.Local().Format("2006-01-02 15:04:05"), s.when.Sub(s.first).Round(time.Second))
}

func (s *replayTopSource) Close() { s.r.Close() }
