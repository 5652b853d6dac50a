package procwalk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// terminate.go is the two-stage terminate: the first signal (TERM unless
// configured otherwise) to every target, a grace period during which exits
// are seen by polling pidfds and the scope is re-walked for newcomers, then
// SIGKILL through the same pidfds for whatever is left.
//
// Usage:
//
//	k := procwalk.NewKiller(fs, procwalk.KillConfig{Requester: "cli"})
//	plan, err := k.Plan(procwalk.TreeScope{Root: id})  // nothing is signalled yet
//	report := k.Execute(ctx, plan)                      // or k.Terminate(ctx, id)

// Defaults of KillConfig.
const (
	DefaultGrace    = 5 * time.Second
	DefaultKillWait = 5 * time.Second
	// defaultRescan paces the re-walks that find processes joining a scope
	// during termination: a full /proc scan costs a few milliseconds.
	defaultRescan = 100 * time.Millisecond
	// maxFreezeRounds bounds the SIGSTOP/re-walk rounds before SIGKILL; a
	// tree that still grows after that many rounds is killed as it stands.
	maxFreezeRounds = 8
)

// KillConfig configures a Killer. The zero value is useful: SIGTERM, 5 s
// grace, the default protected list, requester "procwalk".
type KillConfig struct {
	// Signal is the first signal; 0 means SIGTERM. SIGKILL skips the grace.
	Signal syscall.Signal
	// Grace is how long targets get to exit after the first signal before
	// SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// KillWait is how long to wait for exits after SIGKILL before reporting
	// survivors; 0 means DefaultKillWait.
	KillWait time.Duration
	// DryRun plans and reports exactly what would be signalled, sending
	// nothing.
	DryRun bool
	// Force overrides the protected list, never the hard rules (procwalk,
	// its ancestors, pid 1, kernel threads).
	Force bool
	// Protected are name globs (path.Match) matched against the comm,
	// argv[0]'s base name and an interpreter's script; nil means
	// DefaultProtected(). An empty non-nil slice protects nothing beyond the
	// hard rules.
	Protected []string
	// Requester names who asked, for the audit trail: "cli", "guard",
	// "rule:<name>"; "" means "procwalk".
	Requester string
	// SelfPID is procwalk's own pid for the hard rules; 0 means os.Getpid()
	// when the FS is this pid namespace's procfs. Under a foreign root (a
	// fixture, another namespace's /proc) our pid means nothing there, and
	// nothing can be signalled anyway (OpenProc refuses): no self rule.
	SelfPID int
	// Fields are read in addition in the plan's snapshot, e.g. FieldSmaps
	// for PSS in the audit events.
	Fields Fields
	// Audit receives an event per outcome as it becomes final; nil drops
	// them (the Report still has the outcomes).
	Audit func(ActionEvent)
	// Rescan paces the re-walks of a growing scope; 0 means 100ms.
	Rescan time.Duration
}

// handle is what the Killer needs of an open process; *ProcHandle is one.
type handle interface {
	Signal(syscall.Signal) error
	Wait(ctx context.Context, d time.Duration) bool
	ReleaseMemory() error
	Close() error
}

// Killer terminates processes safely. It holds no state between calls and
// is safe for concurrent use.
type Killer struct {
	fs   FS
	cfg  KillConfig
	open func(ProcID) (handle, error)
	// tmux runs tmux with args; tests replace it.
	tmux func(ctx context.Context, args ...string) error
	// selfPID is os.Getpid() under our own procfs, -1 under a foreign root.
	selfPID int
}

// NewKiller returns a Killer acting on the processes of fs, which must be
// the procfs of procwalk's own pid namespace (OpenProc checks).
func NewKiller(fs FS, cfg KillConfig) (*Killer, error) {
	if cfg.Protected != nil {
		if err := ValidateProtected(cfg.Protected); err != nil {
			return nil, err
		}
	}
	if cfg.Signal < 0 || cfg.Grace < 0 || cfg.KillWait < 0 || cfg.Rescan < 0 {
		return nil, fmt.Errorf("bad kill config: negative signal or duration")
	}
	k := &Killer{fs: fs, cfg: cfg, tmux: runTmux, selfPID: -1}
	if fs.checkOwnNamespace() == nil {
		k.selfPID = os.Getpid()
	}
	k.open = func(id ProcID) (handle, error) {
		h, err := fs.OpenProc(id)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	return k, nil
}

// WithRequester returns a copy of k whose audit events name requester (a
// rule name, say), sharing everything else.
func (k *Killer) WithRequester(requester string) *Killer {
	c := *k
	c.cfg.Requester = requester
	return &c
}

// Config returns the configuration with defaults filled in.
func (k *Killer) Config() KillConfig {
	c := k.cfg
	if c.Signal == 0 {
		c.Signal = syscall.SIGTERM
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.KillWait == 0 {
		c.KillWait = DefaultKillWait
	}
	if c.Protected == nil {
		c.Protected = DefaultProtected()
	}
	if c.Requester == "" {
		c.Requester = "procwalk"
	}
	if c.SelfPID == 0 {
		c.SelfPID = k.selfPID
	}
	if c.Rescan == 0 {
		c.Rescan = defaultRescan
	}
	return c
}

// Plan is what a termination will do: the targets to signal, parents before
// children, and the members it will leave alone, with the reason.
type Plan struct {
	Scope   string
	Session string
	Targets []Target
	// Skipped are members that will not be signalled: refused (protected)
	// or, for a single process or tree root, already gone or reused.
	Skipped []Outcome
	// Partial is set when processes were hidden from the plan's snapshot
	// (hidepid without root, stat denied): members may be missing.
	Partial bool

	scope Scope
	rails guardRails
}

// Plan scans /proc and decides, for every member of scope, whether it will
// be signalled. Nothing is signalled.
func (k *Killer) Plan(scope Scope) (*Plan, error) {
	if cs, ok := scope.(*CgroupScope); ok {
		if err := cs.validate(); err != nil {
			return nil, err
		}
	}
	cfg := k.Config()
	snap, err := k.fs.Snapshot(FieldCmdline | cfg.Fields | scope.Fields())
	if err != nil {
		return nil, err
	}
	p := &Plan{Scope: scope.String(), Session: sessionOf(scope), scope: scope,
		Partial: hidesProcesses(snap.Visibility)}
	p.rails = guardRails{self: cfg.SelfPID, ancestors: k.fs.ancestry(cfg.SelfPID)}
	_, p.rails.cutsTrees = scope.(TreeScope)
	for _, a := range snap.Ancestors(cfg.SelfPID) {
		p.rails.ancestors[a.ID.PID] = true
	}
	members := scope.Members(snap, nil)
	if root, ok := rootOf(scope); ok && snap.Lookup(root) == nil {
		o := Outcome{Target: Target{ID: root}, Result: ResultGone, Err: fmt.Errorf("pid %d: %w", root.PID, ErrGone)}
		if q := snap.Process(root.PID); q != nil {
			o.Target = targetOf(q)
			o.Target.ID = root
			o.Result = ResultIdentityChanged
			o.Err = fmt.Errorf("%w: pid %d is now %s started at tick %d, not tick %d", ErrIdentityChanged, root.PID, q.Comm, q.ID.StartTicks, root.StartTicks)
		}
		p.Skipped = append(p.Skipped, o)
	}
	root, hasRoot := rootOf(scope)
	refused := make(map[ProcID]error)
	for _, m := range members {
		if m.Zombie() {
			// Exited already; only a process asked for by id is worth a line.
			if hasRoot && m.ID == root {
				p.Skipped = append(p.Skipped, Outcome{Target: targetOf(m), Result: ResultGone,
					Err: fmt.Errorf("pid %d has exited (zombie waiting for its parent): %w", m.ID.PID, ErrGone)})
			}
			continue
		}
		if err := k.admit(m, snap, &p.rails, cfg, refused); err != nil {
			p.Skipped = append(p.Skipped, Outcome{Target: targetOf(m), Result: ResultProtected, Err: err})
			continue
		}
		p.Targets = append(p.Targets, targetOf(m))
	}
	return p, nil
}

// admit returns why member p of scope may not be signalled, or nil, and
// records a refusal in refused. In a tree scope a refused process shields
// its descendants (members come parents first): the tree is cut there, so
// that `kill --tree 1` or the tree of the tmux server signals nothing
// rather than every process below it.
func (k *Killer) admit(p *Process, snap *Snapshot, rails *guardRails, cfg KillConfig, refused map[ProcID]error) error {
	err := k.check(p, rails, cfg)
	if err == nil && rails.cutsTrees {
		err = shieldedBy(p, snap, refused)
	}
	if err != nil {
		refused[p.ID] = err
	}
	return err
}

// shieldedBy returns the refusal of p when its parent was refused.
func shieldedBy(p *Process, snap *Snapshot, refused map[ProcID]error) error {
	parent := snap.Process(p.PPID)
	if parent == nil || refused[parent.ID] == nil {
		return nil
	}
	var why *ProtectedError
	errors.As(refused[parent.ID], &why)
	return &ProtectedError{PID: p.ID.PID, Comm: p.Comm, Hard: why != nil && why.Hard,
		Reason: fmt.Sprintf("it runs under pid %d (%s), which is protected, in the tree", parent.ID.PID, parent.Comm)}
}

// Check returns why p may not be signalled (wrapping ErrProtected), or nil.
// It applies the hard rules and, unless Force, the protected list.
func (k *Killer) Check(p *Process) error {
	cfg := k.Config()
	rails := guardRails{self: cfg.SelfPID, ancestors: k.fs.ancestry(cfg.SelfPID)}
	return k.check(p, &rails, cfg)
}

func (k *Killer) check(p *Process, rails *guardRails, cfg KillConfig) error {
	if err := rails.hardRule(p); err != nil {
		return err
	}
	if !cfg.Force {
		if pat := matchProtected(p, cfg.Protected); pat != "" {
			return &ProtectedError{PID: p.ID.PID, Comm: p.Comm, Reason: fmt.Sprintf("it matches the protected name %q", pat)}
		}
	}
	return nil
}

func rootOf(s Scope) (ProcID, bool) {
	switch s := s.(type) {
	case ProcessScope:
		return s.ID, true
	case TreeScope:
		return s.Root, true
	}
	return ProcID{}, false
}

func sessionOf(s Scope) string {
	switch s := s.(type) {
	case ProcessScope:
		return s.Session
	case *SessionScope:
		return s.Ref
	}
	return ""
}

// Report is what Execute did.
type Report struct {
	Scope    string
	Session  string
	DryRun   bool
	Outcomes []Outcome
	// Notes are scope-wide actions: a cgroup.kill write, tmux kill-session.
	Notes []string
}

// Err summarises the outcomes that are not Done: nil when every target is
// gone (or, in a dry run, would be signalled). The message lists them as
// "pid 42 (sleep) refused_protected"; the error wraps the Err of the first
// one, so errors.Is finds its sentinel (ErrProtected, ErrIdentityChanged,
// ErrDenied ...) and its text says why.
func (r *Report) Err() error {
	var bad []string
	var first error
	for _, o := range r.Outcomes {
		if o.Result.Done() {
			continue
		}
		bad = append(bad, fmt.Sprintf("pid %d (%s) %s", o.ID.PID, o.Comm, o.Result))
		if first == nil && o.Err != nil {
			first = o.Err
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if first == nil {
		first = errors.New("no reason recorded")
	}
	return fmt.Errorf("%d of %d targets not terminated (%s); first: %w", len(bad), len(r.Outcomes), strings.Join(bad, ", "), first)
}

// Terminate terminates one process: first signal, grace, SIGKILL.
func (k *Killer) Terminate(ctx context.Context, id ProcID) Outcome {
	plan, err := k.Plan(ProcessScope{ID: id})
	if err != nil {
		o := Outcome{Target: Target{ID: id}, Result: ResultFailed, Err: err}
		k.audit(&o, time.Now(), "process "+id.String(), "")
		return o
	}
	r := k.Execute(ctx, plan)
	if len(r.Outcomes) == 0 { // cannot happen: a process scope yields a target or a skip
		return Outcome{Target: Target{ID: id}, Result: ResultFailed, Err: fmt.Errorf("pid %d: no outcome", id.PID)}
	}
	return r.Outcomes[0]
}

// TerminateScope plans and executes in one call.
func (k *Killer) TerminateScope(ctx context.Context, scope Scope) (*Report, error) {
	plan, err := k.Plan(scope)
	if err != nil {
		return nil, err
	}
	return k.Execute(ctx, plan), nil
}

func (k *Killer) audit(o *Outcome, at time.Time, scope, session string) {
	if k.cfg.Audit == nil {
		return
	}
	requester := k.cfg.Requester
	if requester == "" {
		requester = "procwalk"
	}
	k.cfg.Audit(o.event(at, requester, scope, session, k.cfg.DryRun))
}

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
		x.begin(ctx, t)
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
func (x *execution) begin(ctx context.Context, t Target) {
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
				x.begin(ctx, t)
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
	snap, err := x.k.fs.Snapshot(FieldCmdline | x.cfg.Fields | x.plan.scope.Fields())
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
				x.begin(ctx, t) // the first signal now, SIGSTOP next round
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

// cgroupToKill returns the cgroup.kill file to write, or "" when the scope
// is not a cgroup v2 one, the file is missing, or the write would hit a
// process that is not one of the live victims. cgroup.kill kills every
// process in the cgroup and its descendants, unchecked: it is used only
// when a fresh, complete scan finds nothing else there (a refused member,
// a process outside the session, one hidden from us).
func (x *execution) cgroupToKill() string {
	cs := cgroupOf(x.plan.scope)
	if cs == nil || len(x.live) == 0 {
		return ""
	}
	f := x.cgroupKillFile(cs)
	if f == "" || !x.cgroupHoldsOnlyVictims(cs) {
		return ""
	}
	return f
}

// cgroupOf returns the v2 cgroup of a cgroup or cgroup session scope.
func cgroupOf(s Scope) *CgroupScope {
	var cs *CgroupScope
	switch s := s.(type) {
	case *CgroupScope:
		cs = s
	case *SessionScope:
		cs = s.Cgroup
	}
	if cs == nil || cs.Hierarchy != "" {
		return nil
	}
	return cs
}

// cgroupKillFile is the cgroup.kill file of cs, or "" when there is none.
func (x *execution) cgroupKillFile(cs *CgroupScope) string {
	mount := cs.Mount
	if mount == "" {
		mount = x.k.fs.cgroup2Mount()
	}
	if mount == "" {
		return ""
	}
	f := strings.TrimSuffix(mount, "/") + "/" + strings.Trim(cs.Path, "/") + "/cgroup.kill"
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// cgroupHoldsOnlyVictims scans /proc and reports whether every live
// process in cs is a live victim, and the scan saw every process.
func (x *execution) cgroupHoldsOnlyVictims(cs *CgroupScope) bool {
	snap, err := x.k.fs.Snapshot(FieldCgroup)
	if err != nil || hidesProcesses(snap.Visibility) {
		return false
	}
	live := make(map[ProcID]bool, len(x.live))
	for _, v := range x.live {
		live[v.out.ID] = true
	}
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if p.Kernel || p.Zombie() {
			continue
		}
		if p.Read&FieldCgroup == 0 || cs.contains(p) && !live[p.ID] {
			return false // not ours, or we cannot tell
		}
	}
	return true
}

// hidesProcesses reports whether a scan may have missed processes: hidepid
// hid other users' ones, or their stat was denied.
func hidesProcesses(v Visibility) bool {
	return v.OthersHidden || v.Denied["stat"] > 0 || v.Denied["statm"] > 0
}

// noteScopeActions says, in a dry run, which scope-wide actions a real run
// may take besides the signals.
func (x *execution) noteScopeActions() {
	if len(x.plan.Targets) == 0 {
		return
	}
	if cs := cgroupOf(x.plan.scope); cs != nil {
		if f := x.cgroupKillFile(cs); f != "" {
			x.report.Notes = append(x.report.Notes, "would write 1 to "+f+" at the KILL stage, if the cgroup then holds only these targets")
		}
	}
	if s, ok := x.plan.scope.(*SessionScope); ok && s.Tmux {
		x.report.Notes = append(x.report.Notes, "would run tmux kill-session -t "+s.Name+" once every member is gone")
	}
}

// afterwards runs scope-wide clean-up: tmux kill-session once every member
// of a tmux session is gone.
func (x *execution) afterwards(ctx context.Context) {
	s, ok := x.plan.scope.(*SessionScope)
	if !ok || !s.Tmux {
		return
	}
	for _, o := range x.report.Outcomes {
		if !o.Result.Done() {
			x.report.Notes = append(x.report.Notes, "tmux session "+s.Name+" kept: not every member is gone")
			return
		}
	}
	socket := s.Attrs[AttrSocket]
	// "=" asks tmux for an exact name match, not a prefix.
	if err := x.k.tmux(ctx, "-S", socket, "kill-session", "-t", "="+s.Name); err != nil {
		x.report.Notes = append(x.report.Notes, fmt.Sprintf("tmux kill-session -t %s: %v (the session may already have ended with its last pane)", s.Name, err))
		return
	}
	x.report.Notes = append(x.report.Notes, "tmux kill-session -t "+s.Name)
}

func runTmux(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "tmux", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
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
