package procwalk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// execute.go carries a Plan out: the first signal, the grace during which
// exits are seen on the pidfds and a growing scope is re-walked, then
// SIGSTOP, a last re-walk and SIGKILL for whatever is left.

// victim is a target being terminated.
type victim struct {
	out Outcome
	h   handle
}

// execution is the state of one Execute.
type execution struct {
	k      *Killer
	cfg    KillConfig
	plan   *Plan
	report *Report
	live   []*victim
	known  map[ProcID]bool
	// refused are the members refused so far, which shield their
	// descendants in a tree scope.
	refused map[ProcID]error
	start   time.Time
}

// Execute carries out plan: the first signal to every target, re-walks of a
// growing scope while waiting up to the grace, then SIGSTOP (so nothing
// forks any more), a last re-walk and SIGKILL for whatever is left. A plan
// without targets signals nothing. With DryRun nothing is sent and every
// target is reported as ResultDryRun.
// When ctx ends during the grace, waiting stops: SIGKILL is not sent and the
// live targets are reported as ResultInterrupted; so are those not yet seen
// gone when ctx ends after SIGKILL.
func (k *Killer) Execute(ctx context.Context, plan *Plan) *Report {
	cfg := k.Config()
	x := &execution{
		k: k, cfg: cfg, plan: plan, known: make(map[ProcID]bool), refused: make(map[ProcID]error), start: time.Now(),
		report: &Report{Scope: plan.Scope, Session: plan.Session, DryRun: cfg.DryRun},
	}
	for _, o := range plan.Skipped {
		x.known[o.ID] = true
		if o.Result == ResultProtected {
			x.refused[o.ID] = o.Err
		}
		x.finish(&o)
	}
	if cfg.DryRun {
		planned := []syscall.Signal{cfg.Signal}
		note := "KILL at once"
		if cfg.Signal != syscall.SIGKILL {
			planned = append(planned, syscall.SIGKILL)
			note = fmt.Sprintf("KILL after %s if still alive", cfg.Grace)
		}
		for _, t := range plan.Targets {
			x.finish(&Outcome{Target: t, Result: ResultDryRun, Planned: planned, Note: note})
		}
		x.noteScopeActions()
		return x.report
	}
	if len(plan.Targets) == 0 {
		// Nothing planned, nothing signalled: a scope with no target (all
		// refused, or only zombies) is not re-walked for newcomers.
		x.afterwards(ctx)
		return x.report
	}
	for _, t := range plan.Targets {
		x.known[t.ID] = true
		x.begin(t)
	}
	if cfg.Signal != syscall.SIGKILL {
		x.start = time.Now() // every initial target gets at least the full grace
		x.grace(ctx)
	}
	if ctx.Err() != nil {
		x.stopWaiting(ctx)
		return x.report
	}
	x.kill(ctx)
	x.afterwards(ctx)
	return x.report
}

// begin opens a handle on t and sends the first signal (none when the
// first signal is SIGKILL: the kill stage sends it).
func (x *execution) begin(t Target) {
	v := &victim{out: Outcome{Target: t}}
	h, err := x.k.open(t.ID)
	if err != nil {
		v.out.Result, v.out.Err = resultOf(err), err
		x.finish(&v.out)
		return
	}
	v.h = h
	x.live = append(x.live, v)
	if x.cfg.Signal != syscall.SIGKILL {
		x.send(v, x.cfg.Signal)
	}
}

// send signals v, recording it; a failure finishes v.
func (x *execution) send(v *victim, sig syscall.Signal) bool {
	if err := v.h.Signal(sig); err != nil {
		v.out.Result, v.out.Err = resultOf(err), err
		if v.out.Result == ResultGone && len(v.out.Signals) > 0 {
			v.out.Result, v.out.Err = exitResult(v), nil
			v.out.GoneAfter = time.Since(v.out.SignalledAt)
		}
		x.retire(v)
		return false
	}
	if len(v.out.Signals) == 0 {
		v.out.SignalledAt = time.Now()
	}
	if sig == syscall.SIGKILL {
		v.out.KillAfter = time.Since(v.out.SignalledAt)
	}
	v.out.Signals = append(v.out.Signals, sig)
	return true
}

// grace waits up to the grace period, finishing exits and signalling
// newcomers to a growing scope. It ends early once no target is alive.
func (x *execution) grace(ctx context.Context) {
	deadline := x.start.Add(x.cfg.Grace)
	nextScan := time.Now().Add(x.cfg.Rescan)
	for len(x.live) > 0 && ctx.Err() == nil {
		x.reap(ctx)
		now := time.Now()
		if len(x.live) == 0 || !now.Before(deadline) {
			return
		}
		if x.plan.scope.Grows() && !now.Before(nextScan) {
			for _, t := range x.newcomers() {
				x.begin(t)
			}
			nextScan = now.Add(x.cfg.Rescan)
		}
		if len(x.live) > 0 {
			x.live[0].h.Wait(ctx, min(time.Until(deadline), pollStep))
		}
	}
}

// reap finishes every live victim that has exited.
func (x *execution) reap(ctx context.Context) {
	for _, v := range slices.Clone(x.live) {
		if v.h.Wait(ctx, 0) {
			v.out.Result = exitResult(v)
			v.out.GoneAfter = time.Since(v.out.SignalledAt)
			x.retire(v)
		}
	}
}

func exitResult(v *victim) Result {
	if slices.Contains(v.out.Signals, syscall.SIGKILL) {
		return ResultKilled
	}
	return ResultExited
}

// newcomers re-walks the scope and returns the members not seen before
// that may be signalled; protected ones are finished as refused.
func (x *execution) newcomers() []Target {
	snap, err := x.k.scan(x.plan.scope, x.cfg)
	if err != nil {
		return nil // the walk failed this time; the targets we have still get their signals
	}
	var out []Target
	for _, p := range x.plan.scope.Members(snap, x.known) {
		if x.known[p.ID] {
			continue
		}
		x.known[p.ID] = true
		if p.Zombie() {
			continue
		}
		x.k.readSmaps(p, x.plan.scope, x.cfg)
		if err := x.k.admit(p, snap, &x.plan.rails, x.cfg, x.refused); err != nil {
			x.finish(&Outcome{Target: targetOf(p), Result: ResultProtected, Err: err, Note: "joined during termination"})
			continue
		}
		out = append(out, targetOf(p))
	}
	return out
}

// kill is the second stage. A growing scope is frozen first: SIGSTOP to
// every live target and re-walks until no newcomer appears, so that nothing
// forks between the last walk and SIGKILL (the re-walk runs even when every
// target has exited, to catch what they left behind). A cgroup v2 scope
// without refused members is killed through cgroup.kill instead.
func (x *execution) kill(ctx context.Context) {
	x.reap(ctx)
	if cg := x.cgroupToKill(); cg != "" {
		err := os.WriteFile(cg, []byte("1"), 0)
		if err == nil {
			x.report.Notes = append(x.report.Notes, "wrote 1 to "+cg)
			for _, v := range x.live {
				v.out.Signals = append(v.out.Signals, syscall.SIGKILL)
				v.out.KillAfter = time.Since(v.out.SignalledAt)
				v.out.Note = "killed through " + cg
			}
			x.waitKilled(ctx)
			return
		}
		x.report.Notes = append(x.report.Notes, fmt.Sprintf("cgroup.kill failed, killing members one by one: %v", err))
	}
	if x.plan.scope.Grows() {
		for round := 0; round < maxFreezeRounds; round++ {
			for _, v := range slices.Clone(x.live) {
				if !slices.Contains(v.out.Signals, syscall.SIGSTOP) {
					x.send(v, syscall.SIGSTOP)
				}
			}
			fresh := x.newcomers()
			if len(fresh) == 0 {
				break
			}
			for _, t := range fresh {
				x.begin(t) // the first signal now, SIGSTOP next round
			}
		}
	}
	for _, v := range slices.Clone(x.live) {
		if x.send(v, syscall.SIGKILL) {
			v.h.ReleaseMemory() // best effort: frees memory now, not when the last thread is done
		}
	}
	x.waitKilled(ctx)
}

// waitKilled waits up to KillWait for the live victims; those left survive.
func (x *execution) waitKilled(ctx context.Context) {
	deadline := time.Now().Add(x.cfg.KillWait)
	for len(x.live) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		x.live[0].h.Wait(ctx, min(time.Until(deadline), pollStep))
		x.reap(ctx)
	}
	if ctx.Err() != nil {
		x.stopWaiting(ctx) // Wait returns at once now: do not spin to the deadline
		return
	}
	for _, v := range slices.Clone(x.live) {
		v.out.Result = ResultSurvived
		v.out.Err = fmt.Errorf("pid %d still alive %s after SIGKILL (uninterruptible sleep, or traced)", v.out.ID.PID, x.cfg.KillWait)
		x.retire(v)
	}
	x.live = nil
}

// stopWaiting finishes the live victims as interrupted: ctx ended, the
// caller no longer waits for them.
func (x *execution) stopWaiting(ctx context.Context) {
	for _, v := range slices.Clone(x.live) {
		v.out.Result, v.out.Err = ResultInterrupted, fmt.Errorf("stopped waiting: %w", ctx.Err())
		x.retire(v)
	}
}

// retire finishes v and drops it from the live list.
func (x *execution) retire(v *victim) {
	if v.h != nil {
		v.h.Close()
		v.h = nil
	}
	for i, w := range x.live {
		if w == v {
			x.live = append(x.live[:i], x.live[i+1:]...)
			break
		}
	}
	x.finish(&v.out)
}

// finish records a final outcome and audits it.
func (x *execution) finish(o *Outcome) {
	x.report.Outcomes = append(x.report.Outcomes, *o)
	x.k.audit(o, time.Now(), x.plan.Scope, x.plan.Session)
}

// resultOf maps an open or signal error to a result.
func resultOf(err error) Result {
	switch {
	case errors.Is(err, ErrIdentityChanged):
		return ResultIdentityChanged
	case IsGone(err):
		return ResultGone
	case errors.Is(err, ErrProtected):
		return ResultProtected
	case IsDenied(err):
		return ResultDenied
	}
	return ResultFailed
}
