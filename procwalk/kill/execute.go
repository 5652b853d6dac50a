//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// execute.go carries a Plan out: the first signal, the grace during which
// exits are seen on the pidfds and a growing scope is re-walked, then
// SIGSTOP, a last re-walk and SIGKILL for whatever is left.

// victim is a target being terminated.
type victim struct {
	out Outcome
	h   handle
	// stopped: freeze sent SIGSTOP and thaw has not sent SIGCONT since.
	stopped bool
	// held: the keeper (the sentinel) holds its pidfd.
	held bool
}

// execution is the state of one Execute.
type execution struct {
	k      *Killer
	cfg    Config
	plan   *Plan
	report *Report
	live   []*victim
	known  map[procwalk.ProcID]bool
	// refused are the members refused so far, which shield their
	// descendants in a tree scope.
	refused map[procwalk.ProcID]error
	start   time.Time
	// pl takes the re-walks: the plan's pipeline (a new one for a Plan
	// built by hand).
	pl *frame.Pipeline
	// frozen is the cgroup.freeze file written 1 by freezeCgroup, until
	// thaw writes 0.
	frozen string
	// mixed are the process groups whose targets freeze never stops: they
	// hold processes that are no targets (see mixedGroups). The plan's,
	// then the last re-walk's.
	mixed map[int]bool
	// keeper holds what is stopped or frozen, so that it runs again should
	// procwalk die first; nil until first needed, or when there is none
	// (keepTried: asked already).
	keeper    keeper
	keepTried bool
}

// Execute carries out plan: the first signal to every target, re-walks of a
// growing scope while waiting up to the grace, then SIGKILL for whatever is
// left. A growing scope (a tree, a group, a session, a cgroup) is stopped
// before each signal and continued after it (see freeze and signalFrozen):
// no member can fork a child the walks have not seen while it dies of the
// signal, a child that would be orphaned and leave the scope unsignalled.
// After SIGKILL a last walk reports any member still alive as ResultEscaped
// (see recheck). A plan without targets signals nothing. With DryRun nothing
// is sent and every target is reported as ResultDryRun.
// When ctx ends during the grace, waiting stops: SIGKILL is not sent and the
// live targets are reported as ResultInterrupted; so are those not yet seen
// gone when ctx ends after SIGKILL.
func (k *Killer) Execute(ctx context.Context, plan *Plan) *Report {
	cfg := k.Config()
	x := &execution{
		k: k, cfg: cfg, plan: plan, known: make(map[procwalk.ProcID]bool), refused: make(map[procwalk.ProcID]error), start: time.Now(),
		report: &Report{Scope: plan.Scope, Session: plan.Session, DryRun: cfg.DryRun},
	}
	x.pl = plan.pipeline
	x.mixed = plan.mixed
	if x.pl == nil {
		x.pl = k.pipeline()
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
			o := &Outcome{Target: t, Result: ResultDryRun, Planned: planned, Note: note}
			if err := k.probe(t.ID); err != nil {
				o.Result, o.Err, o.Note = resultOf(err), err, "a real run would be refused"
			}
			x.finish(o)
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
	defer x.letGo()
	for _, t := range plan.Targets {
		x.known[t.ID] = true
		x.enlist(t)
	}
	if cfg.Signal != syscall.SIGKILL {
		x.signalFrozen(ctx)
		x.start = time.Now() // every initial target gets at least the full grace
		x.grace(ctx)
	}
	if ctx.Err() != nil {
		x.stopWaiting(ctx)
		return x.report
	}
	x.kill(ctx)
	if ctx.Err() == nil {
		x.recheck()
	}
	x.afterwards(ctx)
	return x.report
}

// enlist opens a handle on t and makes it a live victim; nothing is sent.
// In a growing scope, a target the walk saw in its first clock tick that
// looks like another process now (it exec'd, or its pid was reused within
// the tick) is forgotten rather than refused: the next walk reads it again
// and decides whether the process holding the pid now is of the scope (a
// daemon's `setsid` that became `sleep` is), and the last one reports it
// if it is and still runs.
func (x *execution) enlist(t Target) {
	v := &victim{out: Outcome{Target: t}}
	h, err := x.k.open(t.ID)
	if err == nil {
		if err = x.k.sameYoung(t); err != nil {
			h.Close()
			if x.plan.scope.Grows() {
				delete(x.known, t.ID)
				return
			}
		}
	}
	if err != nil {
		v.out.Result, v.out.Err = resultOf(err), err
		x.finish(&v.out)
		return
	}
	v.h = h
	x.live = append(x.live, v)
}

// signalFrozen sends the first signal to every live victim that has not
// had it yet. A growing scope is frozen first and continued afterwards: a
// member that dies of the signal cannot have forked a child the walks
// missed, and one that survives it (a handler, the signal ignored) resumes
// with its children still below it, where the next re-walk finds them.
func (x *execution) signalFrozen(ctx context.Context) {
	if x.plan.scope.Grows() && !x.freezeCgroup(ctx, "the first signal") {
		x.freeze(ctx)
	}
	for _, v := range slices.Clone(x.live) {
		if !slices.Contains(v.out.Signals, x.cfg.Signal) {
			x.send(v, x.cfg.Signal)
		}
	}
	x.thaw()
}

// probe checks, for a dry run, that a real run could signal id: it opens
// and verifies a handle and sends signal 0 (nothing) through it, so a
// process of another user is refused (EPERM) as the real run would be.
// Under a foreign root (a fixture) nothing is checked.
func (k *Killer) probe(id procwalk.ProcID) error {
	if k.selfPID < 0 {
		return nil
	}
	h, err := k.open(id)
	if err != nil {
		return err
	}
	defer h.Close()
	return h.Signal(0)
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
			if fresh := x.newcomers(); len(fresh) > 0 {
				for _, t := range fresh {
					x.enlist(t)
				}
				x.signalFrozen(ctx)
			}
			nextScan = time.Now().Add(x.cfg.Rescan)
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
	f, before, err := x.k.scan(x.pl, x.plan.scope, x.cfg)
	if err != nil {
		return nil // the walk failed this time; the targets we have still get their signals
	}
	snap := f.Snapshot
	var fresh []*procwalk.Process
	for _, p := range x.plan.scope.Members(snap, x.known) {
		if !x.known[p.ID] {
			x.known[p.ID] = true
			fresh = append(fresh, p)
		}
	}
	x.k.readSmaps(f, fresh, x.plan.scope, x.cfg)
	var out []Target
	for _, p := range fresh {
		if p.Zombie() {
			continue
		}
		if err := x.k.admit(p, snap, &x.plan.rails, x.cfg, x.refused); err != nil {
			x.finish(&Outcome{Target: targetOf(p), Result: ResultProtected, Err: err, Note: "joined during termination"})
			continue
		}
		t := targetOf(p)
		x.k.pinYoung(&t, before, snap.Host.ClockTicks)
		out = append(out, t)
	}
	targets := slices.Clone(out)
	for _, v := range x.live {
		targets = append(targets, v.out.Target)
	}
	x.mixed = mixedGroups(snap, targets)
	return out
}

// kill is the second stage. A growing scope is stopped first, frozen with
// cgroup.freeze or member by member (see freezeCgroup and freeze), so that
// nothing forks between the last walk and SIGKILL (the walk runs even when
// every target has exited, to catch what they left behind); the newcomers
// it finds get SIGKILL alone. SIGKILL goes to each victim through its own
// verified pidfd, never to a cgroup as a whole: a process moved into a
// cgroup after the last walk is not killed unchecked (it is reported as
// left there instead, see cgroupLeft).
func (x *execution) kill(ctx context.Context) {
	x.reap(ctx)
	if x.plan.scope.Grows() && !x.freezeCgroup(ctx, "SIGKILL") {
		x.freeze(ctx)
	}
	if x.k.hooks.beforeKill != nil {
		x.k.hooks.beforeKill()
	}
	for _, v := range slices.Clone(x.live) {
		if x.send(v, syscall.SIGKILL) {
			v.stopped = false   // SIGKILL ends a stopped process too: no SIGCONT needed
			v.h.ReleaseMemory() // best effort: frees memory now, not when the last thread is done
		}
	}
	x.thaw() // a frozen cgroup's members die of SIGKILL frozen or not; thawed, nothing stays frozen
	x.waitKilled(ctx)
}

// freeze stops the scope: SIGSTOP to every live victim, parents first,
// then, once each has stopped, a re-walk; the newcomers it finds are
// enlisted and stopped in turn, until a walk finds none or after
// maxFreezeRounds (a scope still growing then is signalled as it stands,
// and recheck reports what escaped). Waiting until each has stopped
// matters: a fork in progress when SIGSTOP arrives completes first, and
// its child must be in /proc before the walk that finds nothing new.
func (x *execution) freeze(ctx context.Context) {
	for round := 0; round < maxFreezeRounds && ctx.Err() == nil; round++ {
		if !x.holdVictims() {
			return // not stopped: signalled as they run, and the last walk reports what escaped
		}
		for _, v := range slices.Clone(x.live) {
			if x.mixed[v.out.PGRP] {
				x.note(fmt.Sprintf("process group %d was not stopped around the signals: it holds processes that are no targets, and the kernel sends SIGHUP to every process of a group that loses its last link to its session while a member is stopped", v.out.PGRP))
				continue
			}
			if !v.stopped && x.send(v, syscall.SIGSTOP) {
				v.stopped = true
			}
		}
		x.waitStopped(ctx)
		if x.k.hooks.stopped != nil {
			x.k.hooks.stopped()
		}
		fresh := x.newcomers()
		if len(fresh) == 0 {
			return
		}
		for _, t := range fresh {
			x.enlist(t)
		}
	}
}

// holdVictims has the keeper hold every live victim not held yet, before
// they are stopped; false when it cannot (no sentinel, no pidfd), and
// then nothing may be stopped.
func (x *execution) holdVictims() bool {
	var hs []handle
	var vs []*victim
	for _, v := range x.live {
		if !v.held {
			hs, vs = append(hs, v.h), append(vs, v)
		}
	}
	if len(vs) == 0 {
		return true
	}
	kp := x.keep()
	if kp == nil {
		return false
	}
	if err := kp.procs(hs); err != nil {
		x.note("the scope was not stopped around the signals: " + err.Error())
		return false
	}
	for _, v := range vs {
		v.held = true
	}
	return true
}

// keep returns the execution's keeper, asking the Killer for it once; nil
// (noted) when there is none.
func (x *execution) keep() keeper {
	if !x.keepTried {
		x.keepTried = true
		var err error
		if x.keeper, err = x.k.newKeeper(); err != nil {
			x.note("the scope was not stopped around the signals: " + err.Error())
		}
	}
	return x.keeper
}

// letGo ends the execution's hold: whatever may still be stopped or
// frozen is continued and thawed, by the execution and then, as a safety
// net, by the keeper.
func (x *execution) letGo() {
	x.thaw()
	if x.keeper != nil {
		if err := x.keeper.release(true); err != nil {
			x.note("the sentinel did not confirm that nothing is left stopped: " + err.Error())
		}
	}
}

// waitStopped waits, up to stopWait, until every live victim sent SIGSTOP
// has stopped or exited. One in uninterruptible sleep may stop later: the
// walk then runs without it.
func (x *execution) waitStopped(ctx context.Context) {
	deadline := time.Now().Add(stopWait)
	pending := slices.DeleteFunc(slices.Clone(x.live), func(v *victim) bool { return !v.stopped })
	for ctx.Err() == nil {
		pending = slices.DeleteFunc(pending, func(v *victim) bool { return v.h == nil || v.h.Stopped() })
		if len(pending) == 0 || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(stopPoll)
	}
}

// thaw sends SIGCONT to every live victim freeze stopped, and thaws the
// cgroup freezeCgroup froze: a stopped or frozen process acts on a pending
// SIGTERM only once continued.
func (x *execution) thaw() {
	if x.frozen != "" {
		if err := os.WriteFile(x.frozen, []byte("0"), 0); err != nil {
			x.report.Notes = append(x.report.Notes, fmt.Sprintf("thawing %s: %v", x.frozen, err))
		}
		x.frozen = ""
	}
	for _, v := range slices.Clone(x.live) {
		if v.stopped && x.send(v, syscall.SIGCONT) {
			v.stopped = false
		}
	}
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
	case procwalk.IsGone(err):
		return ResultGone
	case errors.Is(err, ErrProtected):
		return ResultProtected
	case procwalk.IsDenied(err):
		return ResultDenied
	}
	return ResultFailed
}

// recheck walks the scope once more after SIGKILL and reports each process
// of it still alive that was never a target as ResultEscaped: a member of
// the scope that joined after the last walk (for a cgroup, anything the
// cgroup holds then), or an orphan, one forked by a
// member that died before a walk saw the child, adopted by init or a
// subreaper and so no longer below the tree. An orphan is known by its
// process group (one a signalled target leads) and its start (after the
// plan's walk). Nothing is signalled: neither can be verified as part of the
// scope any more. Processes the plan would refuse are left out.
func (x *execution) recheck() {
	if !x.plan.scope.Grows() {
		return
	}
	f, _, err := x.k.scan(x.pl, x.plan.scope, x.cfg)
	if err != nil {
		x.report.Notes = append(x.report.Notes, "cannot walk /proc after the end to check that nothing of the scope is left: "+err.Error())
		return
	}
	snap := f.Snapshot
	// Only a group a signalled target leads: a target that shares its
	// parent's group (a command run without job control, a test's child)
	// shares it with processes that were never part of the scope.
	signalled := make(map[int]bool)
	for _, o := range x.report.Outcomes {
		if len(o.Signals) > 0 {
			signalled[o.ID.PID] = true
		}
	}
	pgrps := make(map[int]bool)
	for _, o := range x.report.Outcomes {
		if len(o.Signals) > 0 && signalled[o.PGRP] {
			pgrps[o.PGRP] = true
		}
	}
	// Process.Start counts from the boot time in whole seconds.
	since := x.plan.taken.Add(-time.Second)
	candidates := x.plan.scope.Members(snap, x.known)
	for i := range snap.Procs {
		if p := &snap.Procs[i]; pgrps[p.PGRP] && !p.Start.Before(since) {
			candidates = append(candidates, p)
		}
	}
	refused := maps.Clone(x.refused)
	for _, p := range candidates {
		if x.known[p.ID] || p.Zombie() || p.Kernel {
			continue
		}
		x.known[p.ID] = true
		if x.k.admit(p, snap, &x.plan.rails, x.cfg, refused) != nil {
			continue // one the plan leaves alone on purpose
		}
		x.finish(&Outcome{Target: targetOf(p), Result: ResultEscaped,
			Err: fmt.Errorf("%w: pid %d (%s), parent %d, process group %d", ErrEscaped, p.ID.PID, p.Comm, p.PPID, p.PGRP)})
	}
	x.cgroupLeft(func(pid int) bool { return snap.Process(pid) != nil })
}

// note records a scope-wide action or the reason one was not taken, once.
func (x *execution) note(s string) {
	if !slices.Contains(x.report.Notes, s) {
		x.report.Notes = append(x.report.Notes, s)
	}
}
