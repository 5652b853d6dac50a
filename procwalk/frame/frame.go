//go:build linux

package frame

import (
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Frame is what one gather saw: the snapshot of every process (with rates
// since the gather before), its sessions, the host's figures and what
// grouping could not do. A Frame of a Pipeline lives until the pipeline
// recycles its memory (see Retention); using it after that panics, naming
// both generations, rather than showing another gather's processes.
type Frame struct {
	// Snapshot is the scan: every visible process, its tree, what could
	// not be seen (Visibility).
	Snapshot *procwalk.Snapshot
	// Sessions are the snapshot grouped by the pipeline's Grouper, in the
	// order Grouper.Group reports them; nil without a Grouper.
	Sessions []session.Session
	// System is the host's load, memory and pressure, read with the
	// snapshot when the pipeline's Config.System asks; zero otherwise.
	System procwalk.System
	// Notes say what grouping could not do (no tmux server, no cgroupfs):
	// information for a person, not errors.
	Notes []string
	// Generation numbers a pipeline's scans from 1 (Prime's scans, which
	// make no frame, count too); 0 for a frame made elsewhere (decoded
	// from a worker's pipe, replayed from a file).
	Generation uint64
	// Duration is how long the pipeline's Gather took: the scan (the
	// snapshot's own Duration), sampling, grouping and the host's figures;
	// 0 for a frame made elsewhere.
	Duration time.Duration

	// owner is the pipeline that gathered the frame, nil elsewhere; more
	// reads fields of a frame made elsewhere (nil: none are read).
	owner *Pipeline
	more  Reader
}

// A Reader reads fields of a frame's processes that its scan did not.
type Reader interface {
	ReadMore(procs []*procwalk.Process, f procwalk.Fields) error
}

// ReadMore reads fields f of procs, processes of this frame, that its scan
// did not read: a costly file for the few a consumer shows (the rows on
// screen, a session's top members) rather than for every process. Of a
// pipeline's newest frame, io and smaps_rollup read this way get rates from
// the pipeline's one Sampler (procwalk.Monitor.ReadMore). A frame made
// elsewhere reads through its Reader, or not at all.
func (f Frame) ReadMore(procs []*procwalk.Process, fields procwalk.Fields) error {
	if f.owner != nil {
		f.owner.check(f.Generation)
		return f.owner.monitor.ReadMoreOf(f.Snapshot, procs, fields)
	}
	if f.more != nil {
		return f.more.ReadMore(procs, fields)
	}
	return nil
}

// ReadMembersSmaps reads smaps_rollup of the members of s, a session of
// this frame, alone (each read takes the target's mmap lock), and adds
// their PSS and USS to s's totals. PSS growth needs smaps in both samples:
// a session read this way has none.
func (f Frame) ReadMembersSmaps(s *session.Session) error {
	members := make([]*procwalk.Process, 0, len(s.Members))
	for _, id := range s.Members {
		if p := f.Snapshot.Lookup(id); p != nil {
			members = append(members, p)
		}
	}
	if err := f.ReadMore(members, procwalk.FieldSmaps); err != nil {
		return err
	}
	for _, p := range members {
		s.Totals.AddSmaps(p)
	}
	return nil
}

// WithReader returns f, made elsewhere than a pipeline (decoded, replayed),
// reading more fields through r.
func (f Frame) WithReader(r Reader) Frame {
	f.owner, f.more = nil, r
	return f
}

// Check panics when f's memory was recycled by its pipeline: a consumer
// that kept a frame past its retention would read another gather's
// processes through it. Frame's methods check on their own; a consumer
// that keeps a frame across calls may check before using its fields.
func (f Frame) Check() {
	if f.owner != nil {
		f.owner.check(f.Generation)
	}
}

// RecycledError is the panic value of a frame used after its pipeline
// recycled its memory.
type RecycledError struct {
	Generation, Newest uint64
	Retention          Retention
}

func (e *RecycledError) Error() string {
	return fmt.Sprintf("frame %d used after its memory was recycled: the pipeline is at frame %d and its retention (%s) keeps no older frame valid", e.Generation, e.Newest, e.Retention)
}
