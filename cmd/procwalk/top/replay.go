//go:build linux

package top

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/procwalk/procwalk/procwalk/recording"
)

// replay.go is the Source of a recording's frames (top --replay) instead
// of this host's, stepped through with [ and ] (a Stepper).

// ReplaySource serves a recording's frames to the live view: Gather
// returns the frame stepped to, decoded once. Nothing in it can be
// killed: the recording's pids are not this host's processes.
type ReplaySource struct {
	r     *recording.Reader
	name  string // the recording's, escaped
	count int
	first time.Time

	mu   sync.Mutex // Step and Position run on the UI's goroutine, Gather outside it
	at   int        // the frame to show
	seen int        // the frame Gather returned last, and its time
	when time.Time

	recent *recording.Recent // Gather's alone
}

// ErrNoFrame is NewReplaySource's error for a recording without a frame.
var ErrNoFrame = errors.New("the recording has no frame")

// recentFrames is how many decoded frames the source keeps: about 1 MiB
// each at 2,000 processes.
const recentFrames = 16

// NewReplaySource serves the frames of r, named name (escaped) in the
// header, from the first (Step goes to another: recording.Reader.IndexAt
// finds the one shown at a time). It fails when r has no frame.
func NewReplaySource(r *recording.Reader, name string) (*ReplaySource, error) {
	s := &ReplaySource{r: r, name: name, recent: recording.NewRecent(r, recentFrames)}
	var err error
	if s.count, err = r.Len(); err != nil {
		return nil, err
	}
	if s.count == 0 {
		return nil, ErrNoFrame
	}
	f0, err := r.Frame(0)
	if err != nil {
		return nil, err
	}
	s.first, s.when = f0.Snapshot.Time, f0.Snapshot.Time
	return s, nil
}

// Gather returns the frame stepped to; need is what the recording holds.
func (s *ReplaySource) Gather(_ Need, shown func(Frame)) (Frame, error) {
	s.mu.Lock()
	at := s.at
	s.mu.Unlock()
	f, err := s.recent.Frame(at)
	if err != nil {
		return Frame{}, err
	}
	tf := Frame{Frame: f, AllKinds: true}
	if shown != nil {
		shown(tf)
	}
	s.mu.Lock()
	s.seen, s.when = at, f.Snapshot.Time
	s.mu.Unlock()
	return tf, nil
}

// Step moves the frame to show by frames, within the recording.
func (s *ReplaySource) Step(by int) {
	s.mu.Lock()
	s.at = min(max(s.at+by, 0), s.count-1)
	s.mu.Unlock()
}

// Position names the frame shown.
func (s *ReplaySource) Position() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%s frame %d of %d, %s (+%s)", s.name, s.seen+1, s.count,
		s.when.Local().Format("2006-01-02 15:04:05"), s.when.Sub(s.first).Round(time.Second))
}

// Start is the time of the recording's first frame.
func (s *ReplaySource) Start() time.Time { return s.first }

// Header is the recording's header (its host's user names ...).
func (s *ReplaySource) Header() recording.Header { return s.r.Header() }

// Close closes the recording.
func (s *ReplaySource) Close() { s.r.Close() }
