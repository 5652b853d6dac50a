//go:build linux

// Package top is procwalk's live view: a terminal UI (bubbletea) of the
// host's sessions and processes, refreshed from a Source, killing through
// the safe-kill engine. It reads what the screen shows: PSS and USS only of
// the rows on screen (smaps_rollup takes each target's mmap lock).
//
// The core packages stay free of terminal libraries: this package is the
// only one that imports them.
package top

import (
	"context"
	"syscall"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Frame is one refresh: a frame of the source's pipeline and what the
// view adds to it.
type Frame struct {
	frame.Frame
	// Home is the cgroup session the gauges are for (the cgroup or pod
	// procwalk runs in, or the one chosen); nil when there is none.
	Home *session.Session
	// AllKinds says Sessions holds every kind (gathered for a sessions
	// view); without it, only the cgroups the gauges need.
	AllKinds bool
}

// Need says what a frame must hold for the view that will show it, so that
// a Source reads no more: the screen's rows get the rest (Frame.ReadMore).
type Need struct {
	// Sessions asks for every session kind (the sessions views); without
	// it only the cgroup sessions the gauges need.
	Sessions bool
	// Every is what to read of every process besides stat and statm: the
	// command line to filter on, the owner to sort by ...
	Every procwalk.Fields
}

// A Source gathers frames. Gather runs outside the UI's goroutine, one call
// at a time; the frame it returns must stay valid while the UI shows it
// (frame.HoldLast). shown, when not nil, runs on the frame before Gather
// returns it, where the source may read more of it: the view reads the
// rows on screen there (Frame.ReadMore), and their rates come from the
// source's one Sampler.
type Source interface {
	Gather(need Need, shown func(Frame)) (Frame, error)
}

// A Stepper is a Source of frames recorded before (top --replay): [ and ]
// show the previous and the next frame, { and } ten back and forth, and
// the header says which frame is shown. Gather returns the frame stepped
// to, the same one until the next step.
type Stepper interface {
	Step(by int)
	// Position says which frame is shown: "host.pwrec frame 12 of 60,
	// 2026-11-28 03:12:05 (+11s)", escaped.
	Position() string
}

// A Killer ends processes through the safe-kill engine (pid + start time,
// pidfd, TERM then KILL after a grace, protections).
type Killer interface {
	// Checker returns a check saying why a process may not be killed
	// (protected, a kernel thread, procwalk itself), or nil: one for the
	// rows of a frame, which reads what every check needs once.
	Checker() func(p *procwalk.Process) error
	// Kill ends one process; KillTree a process and its descendants;
	// KillSession every member of a session. first is the first signal
	// (SIGTERM, the safe default; SIGKILL skips the grace): KILL follows it
	// after the grace, as it does TERM.
	Kill(ctx context.Context, id procwalk.ProcID, first syscall.Signal) kill.Outcome
	KillTree(ctx context.Context, root procwalk.ProcID, first syscall.Signal) (*kill.Report, error)
	KillSession(ctx context.Context, s *session.Session, first syscall.Signal) (*kill.Report, error)
}
