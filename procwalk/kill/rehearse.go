//go:build linux

package kill

import (
	"fmt"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// rehearse.go plays a kill against a snapshot taken before (a recording's
// frame, a rule test's input): what Plan would have decided on it, reported
// as a dry run. Nothing is read from /proc and nothing is signalled, so a
// replay can never reach a process of the host it runs on.

// Rehearse returns the report of a dry run of a kill of scope on snap, its
// audit events (cfg.Audit) dated at: each member admitted as Plan admits
// (pid 1, kernel threads and the protected list refused, a tree cut below
// a refused process) is ResultDryRun with the signals it would have got.
// procwalk's own pid and ancestors mean nothing in another snapshot: no
// rule of them applies.
func Rehearse(cfg Config, snap *procwalk.Snapshot, scope Scope, at time.Time) (*Report, error) {
	if cfg.Protected != nil {
		if err := ValidateProtected(cfg.Protected); err != nil {
			return nil, err
		}
	}
	if cs, ok := scope.(*CgroupScope); ok {
		if err := cs.validate(); err != nil {
			return nil, err
		}
	}
	cfg.DryRun = true
	k := &Killer{cfg: cfg, selfPID: -1}
	cfg = k.Config()
	rails := guardRails{self: -1, ancestors: map[int]bool{}}
	_, rails.cutsTrees = scope.(TreeScope)
	r := &Report{Scope: scope.String(), Session: sessionOf(scope), DryRun: true}
	add := func(o Outcome) {
		r.Outcomes = append(r.Outcomes, o)
		k.audit(&o, at, r.Scope, r.Session)
	}
	root, hasRoot := rootOf(scope)
	if hasRoot && snap.Lookup(root) == nil {
		o := Outcome{Target: Target{ID: root}, Result: ResultGone, Err: fmt.Errorf("pid %d: %w", root.PID, procwalk.ErrGone)}
		if q := snap.Process(root.PID); q != nil {
			o.Result = ResultIdentityChanged
			o.Err = fmt.Errorf("%w: pid %d is now %s started at tick %d, not tick %d", ErrIdentityChanged, root.PID, q.Comm, q.ID.StartTicks, root.StartTicks)
		}
		add(o)
	}
	planned := []syscall.Signal{cfg.Signal}
	note := "KILL at once"
	if cfg.Signal != syscall.SIGKILL {
		planned = append(planned, syscall.SIGKILL)
		note = fmt.Sprintf("KILL after %s if still alive", cfg.Grace)
	}
	refused := make(map[procwalk.ProcID]error)
	for _, m := range scope.Members(snap, nil) {
		if m.Zombie() {
			if hasRoot && m.ID == root {
				add(Outcome{Target: targetOf(m), Result: ResultGone,
					Err: fmt.Errorf("pid %d has exited (zombie waiting for its parent): %w", m.ID.PID, procwalk.ErrGone)})
			}
			continue
		}
		if err := k.admit(m, snap, &rails, cfg, refused); err != nil {
			add(Outcome{Target: targetOf(m), Result: ResultProtected, Err: err})
			continue
		}
		add(Outcome{Target: targetOf(m), Result: ResultDryRun, Planned: planned, Note: note})
	}
	return r, nil
}
