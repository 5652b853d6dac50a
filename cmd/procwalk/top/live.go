//go:build linux

package top

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// live.go is the Source of this host's frames: one pipeline whose frames
// stay valid while the next is gathered (the view shows one meanwhile).

// LiveConfig is what a LiveSource gathers with. Its zero value is not
// enough: Pipeline is the command's (the /proc root, the snapshot source,
// the clock and the memory policy), which the view has no default for.
// Every other field may be left zero.
type LiveConfig struct {
	// Pipeline (required) gathers the frames (frame.HoldLast retention); the source
	// sets its grouper and fields for each gather.
	Pipeline *frame.Pipeline
	// Processes groups what the process views need: the cgroups of the
	// gauges; nil: none (no gauges).
	Processes *session.Grouper
	// NewSessions makes the grouper of every kind the sessions views
	// list: made when they are shown, dropped when they are left (its
	// memory of every session is megabytes). Sessions is the first one,
	// made before the view starts (so that its errors stop the command);
	// nil: made when first needed. Without NewSessions, Sessions is kept
	// for good; without either, a sessions view's Gather fails with
	// ErrNoSessions.
	NewSessions func() (*session.Grouper, error)
	Sessions    *session.Grouper
	// Home is the reference of the cgroup session the gauges show (--cgroup);
	// "": the one procwalk runs in.
	Home string
}

// LiveSource gathers the live view's frames: the view's requests trigger
// the pipeline's driver, which runs on a goroutine of its own until Close
// or its context ends; a request says what the frame needs and what to
// read of it before it is handed over (the rows on screen), all on the
// driver's goroutine.
type LiveSource struct {
	cfg      LiveConfig
	sessions *session.Grouper // nil while no sessions view is shown
	reqs     chan liveRequest
	cur      liveRequest // the driver's, while it gathers for it
	stop     context.CancelFunc
	done     chan struct{}
}

// liveRequest asks the driver for a frame: what it needs, what runs on it
// before it is handed over, and where it goes.
type liveRequest struct {
	need  Need
	shown func(Frame)
	reply chan liveReply
}

type liveReply struct {
	f   Frame
	err error
}

// ErrClosed answers a Gather after the source stopped.
var ErrClosed = errors.New("top: the source is closed")

// ErrNoSessions answers a sessions view's Gather when LiveConfig has no
// grouper for it (neither Sessions nor NewSessions).
var ErrNoSessions = errors.New("top: no sessions grouper: set LiveConfig.NewSessions")

// NewLiveSource starts the driver of cfg.Pipeline, on a goroutine of its
// own until ctx ends or Close. A nil Pipeline panics here, where the
// mistake is, not on the driver's goroutine.
func NewLiveSource(ctx context.Context, cfg LiveConfig) *LiveSource {
	if cfg.Pipeline == nil {
		panic("top: NewLiveSource: LiveConfig.Pipeline is required")
	}
	s := &LiveSource{cfg: cfg, sessions: cfg.Sessions, reqs: make(chan liveRequest), done: make(chan struct{})}
	ctx, s.stop = context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		cfg.Pipeline.Run(ctx, s, s.deliver)
	}()
	return s
}

// Gather asks the driver for a frame for need and waits for it.
func (s *LiveSource) Gather(need Need, shown func(Frame)) (Frame, error) {
	r := liveRequest{need: need, shown: shown, reply: make(chan liveReply, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return Frame{}, ErrClosed
	}
	rep := <-r.reply
	return rep.f, rep.err
}

// Close stops the driver and waits for it.
func (s *LiveSource) Close() {
	s.stop()
	<-s.done
}

// Wait is the driver's Trigger: the next request, whose need it sets on
// the pipeline for the gather. It is for the source's own pipeline alone:
// another caller would take the view's requests. A request it cannot
// serve gets its error, and Wait takes the next.
func (s *LiveSource) Wait(ctx context.Context) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case r := <-s.reqs:
			s.cur = r
		}
		if err := s.prepare(); err != nil {
			s.cur.reply <- liveReply{err: err}
			continue
		}
		return true
	}
}

// prepare sets the pipeline's grouper and fields for the request s.cur.
func (s *LiveSource) prepare() error {
	p, g := s.cfg.Pipeline, s.cfg.Processes
	if s.cur.need.Sessions {
		if s.sessions == nil {
			if s.cfg.NewSessions == nil {
				return ErrNoSessions
			}
			// The view left a process view, dropping its tables of rows
			// (two of 1.2 MB at 10,000 processes): given back first, the
			// memory of every session grouped next takes their place
			// rather than adding to the peak.
			p.Trim()
			var err error
			if s.sessions, err = s.cfg.NewSessions(); err != nil {
				return err
			}
		}
		g = s.sessions
	} else if s.sessions != nil && s.cfg.NewSessions != nil {
		// Left: its memory of every session's members would stay
		// resident, and be stale when the view comes back (kept when
		// it cannot be made again).
		s.sessions = nil
		p.Trim()
	}
	p.SetGrouper(g)
	p.SetFields(s.cur.need.Every)
	return nil
}

// deliver hands a frame to the request it was gathered for, after the
// request's reads.
func (s *LiveSource) deliver(f frame.Frame, err error) error {
	r := s.cur
	s.cur = liveRequest{}
	if err != nil {
		r.reply <- liveReply{err: err}
		return nil
	}
	tf := Frame{Frame: f}
	if s.cfg.Home != "" {
		tf.Home, _ = session.Find(f.Sessions, s.cfg.Home)
	} else if self := f.Snapshot.Process(os.Getpid()); self != nil {
		tf.Home = cgroupSessionOf(f.Sessions, self.ID)
	}
	if r.shown != nil {
		r.shown(tf)
	}
	r.reply <- liveReply{f: tf}
	return nil
}

// cgroupSessionOf is the cgroup session with member id, or nil.
func cgroupSessionOf(sessions []session.Session, id procwalk.ProcID) *session.Session {
	for i := range sessions {
		s := &sessions[i]
		if s.Kind == session.KindCgroup && slices.Contains(s.Members, id) {
			return s
		}
	}
	return nil
}
