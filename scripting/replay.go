//go:build linux

package scripting

import (
	"context"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// ReplayKiller is the Killer of a run on frames of another time (a
// recording, a rule test's input): each kill is played on the run's
// snapshot as procwalk's Killer would have planned it then (kill.Rehearse)
// and reported as a dry run, dated at the snapshot's time. Nothing is sent:
// the pids of a recording are not this host's processes.
type ReplayKiller struct {
	// Base is the kill configuration (protected list, requester, audit).
	Base kill.Config
	// Snapshot returns the snapshot of the run asking.
	Snapshot func() *procwalk.Snapshot
}

// Kill rehearses one termination.
func (k ReplayKiller) Kill(_ context.Context, scope kill.Scope, opts KillOptions) (*kill.Report, error) {
	cfg := k.Base
	if opts.Signal != 0 {
		cfg.Signal = opts.Signal
	}
	if opts.Grace > 0 {
		cfg.Grace = opts.Grace
	}
	if opts.Requester != "" {
		cfg.Requester = opts.Requester
	}
	snap := k.Snapshot()
	at := time.Time{}
	if snap != nil {
		at = snap.Time
	}
	return kill.Rehearse(cfg, snap, scope, at)
}
