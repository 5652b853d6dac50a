//go:build linux

package kill

import (
	"errors"
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// plan.go decides what a termination will do before anything is sent: the
// members of the scope, each admitted as a target or refused (hard rules,
// the protected list, a tree cut below a refused process).

// Plan is what a termination will do: the targets to signal, parents before
// children, and the members it will leave alone, with the reason. Execute a
// Plan from one goroutine at a time: its re-walks share the plan's pipeline.
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
	// taken is when the plan's walk started.
	taken time.Time
	// pipeline took the plan's walk; the execution's re-walks reuse it
	// (its Scanner's rules: bounded reads, and a process whose read is
	// still blocked is not read again).
	pipeline *frame.Pipeline
	// cgroupDir is the directory of a cgroup scope's cgroup ("" for other
	// scopes, or when its hierarchy is not mounted here).
	cgroupDir string
	// mixed are the process groups of targets that also hold a live
	// process that is no target, as the plan's walk saw them (see
	// mixedGroups).
	mixed map[int]bool
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
	if scope.Grows() && !cfg.DryRun && cfg.Sentinel != nil {
		cfg.Sentinel.Start() // now, so that no walk takes it for a member; a failure is noted when it is needed
	}
	pl := k.pipeline()
	f, before, err := k.scan(pl, scope, cfg)
	if err != nil {
		return nil, err
	}
	snap := f.Snapshot
	p := &Plan{Scope: scope.String(), Session: sessionOf(scope), scope: scope,
		Partial: hidesProcesses(snap.Visibility), taken: snap.Time, pipeline: pl}
	p.rails = guardRails{self: cfg.SelfPID, sentinel: cfg.Sentinel.PID(), ancestors: k.fs.Ancestors(cfg.SelfPID)}
	_, p.rails.cutsTrees = scope.(TreeScope)
	for _, a := range snap.Ancestors(cfg.SelfPID) {
		p.rails.ancestors[a.ID.PID] = true
	}
	members := scope.Members(snap, nil)
	if cs := cgroupOf(scope); cs != nil {
		p.cgroupDir = k.cgroupDir(cs, members)
	}
	if root, ok := rootOf(scope); ok && snap.Lookup(root) == nil {
		o := Outcome{Target: Target{ID: root}, Result: ResultGone, Err: fmt.Errorf("pid %d: %w", root.PID, procwalk.ErrGone)}
		if k.fs.Hidden(root.PID) {
			o.Result, o.Err = ResultDenied, fmt.Errorf("pid %d: %w: it runs but /proc hides it from this user (hidepid): its identity cannot be verified; run as root", root.PID, procwalk.ErrDenied)
		}
		if q := snap.Process(root.PID); q != nil {
			// The event names the process asked for: nothing of the new
			// one (its args, RSS) goes under that identity; the reason
			// says who holds the pid now.
			o.Result = ResultIdentityChanged
			o.Err = fmt.Errorf("%w: pid %d is now %s started at tick %d, not tick %d", ErrIdentityChanged, root.PID, q.Comm, q.ID.StartTicks, root.StartTicks)
		}
		p.Skipped = append(p.Skipped, o)
	}
	root, hasRoot := rootOf(scope)
	refused := make(map[procwalk.ProcID]error)
	k.readSmaps(f, members, scope, cfg)
	for _, m := range members {
		if m.Zombie() {
			// Exited already; only a process asked for by id is worth a line.
			if hasRoot && m.ID == root {
				p.Skipped = append(p.Skipped, Outcome{Target: targetOf(m), Result: ResultGone,
					Err: fmt.Errorf("pid %d has exited (zombie waiting for its parent): %w", m.ID.PID, procwalk.ErrGone)})
			}
			continue
		}
		if err := k.admit(m, snap, &p.rails, cfg, refused); err != nil {
			p.Skipped = append(p.Skipped, Outcome{Target: targetOf(m), Result: ResultProtected, Err: err})
			continue
		}
		t := targetOf(m)
		k.pinYoung(&t, before, snap.Host.ClockTicks)
		p.Targets = append(p.Targets, t)
	}
	p.mixed = mixedGroups(snap, p.Targets)
	return p, nil
}

// pipeline is a plan's: its walk and its execution's re-walks, each frame
// kept (a walk's processes are compared with the next's), no rates.
func (k *Killer) pipeline() *frame.Pipeline {
	return frame.New(k.fs, frame.Config{NoRates: true, Memory: frame.Memory{Retention: frame.KeepAll}})
}

// mixedGroups returns the process groups of targets that the kill could
// orphan while they hold a process that is no target (a member the plan
// refused, a process outside the scope). When a process group loses its
// last link to its session (a member whose parent is in another group of
// the same session: a shell job's leader) while one of its members is
// stopped, the kernel sends SIGHUP and SIGCONT to every process of the
// group, which ends those that are no targets. So the targets of these
// groups are never stopped (see execution.freeze). A group is left out
// when it holds targets alone (the SIGHUP then reaches targets only), has
// no link (it is orphaned already: nothing can orphan it again), or has a
// link the kill does not break (neither end a target: procwalk or guard
// in its own job's group; pid 1 is never such an end, see below).
func mixedGroups(snap *procwalk.Snapshot, targets []Target) map[int]bool {
	isTarget := make(map[procwalk.ProcID]bool, len(targets))
	type group struct{ bystander, linked, stable bool }
	groups := make(map[int]*group)
	for _, t := range targets {
		isTarget[t.ID] = true
		groups[t.PGRP] = &group{}
	}
	for i := range snap.Procs {
		p := &snap.Procs[i]
		g := groups[p.PGRP]
		if g == nil || p.Kernel || p.Zombie() {
			continue
		}
		if !isTarget[p.ID] {
			g.bystander = true
		}
		if q := snap.Process(p.PPID); q != nil && !q.Zombie() && q.PGRP != p.PGRP && q.SID == p.SID {
			g.linked = true
			// A child of pid 1 is no lasting link: the kernel skips a
			// member whose parent is the global init when it asks
			// whether a group is orphaned (will_become_orphaned_pgrp),
			// and in a pid namespace it counts; either way the group
			// stays mixed, which costs only the freeze. (Members left
			// by a killed leader are reparented to pid 1, and a test
			// run in pid 1's session lost a refused member to the
			// SIGHUP so.)
			if !isTarget[p.ID] && !isTarget[q.ID] && q.ID.PID != 1 {
				g.stable = true
			}
		}
	}
	mixed := make(map[int]bool)
	for pgrp, g := range groups {
		if g.bystander && g.linked && !g.stable {
			mixed[pgrp] = true
		}
	}
	return mixed
}

// scan walks /proc for a plan or a re-walk of scope. smaps_rollup, when
// asked for, is left to readSmaps: reading it walks a process's page tables
// under its memory-map lock, which the scope's members are worth and the
// rest of the host is not.
// before is the boot clock when the walk began (see pinYoung).
// pl is the plan's pipeline, for its walk and every re-walk: its Scanner
// knows which reads are still blocked, and does not start another on those
// processes.
func (k *Killer) scan(pl *frame.Pipeline, scope Scope, cfg Config) (f frame.Frame, before time.Duration, err error) {
	before = bootClock()
	pl.SetFields((procwalk.FieldCmdline | cfg.Fields | scope.Fields()) &^ procwalk.FieldSmaps)
	f, err = pl.Gather()
	return f, before, err
}

// readSmaps reads the smaps_rollup of members, processes of f, when the
// config or scope asks for it, each read bounded as a scan's are (a
// process stuck holding its memory-map lock is left without PSS, marked
// ReadTimedOut, and the plan goes on); a denied or vanished member is left
// without PSS too.
func (k *Killer) readSmaps(f frame.Frame, members []*procwalk.Process, scope Scope, cfg Config) {
	if (cfg.Fields|scope.Fields())&procwalk.FieldSmaps == 0 {
		return
	}
	live := make([]*procwalk.Process, 0, len(members))
	for _, m := range members {
		if !m.Zombie() {
			live = append(live, m)
		}
	}
	f.ReadMore(live, procwalk.FieldSmaps)
}

// admit returns why member p of scope may not be signalled, or nil, and
// records a refusal in refused. In a tree scope a refused process shields
// its descendants (members come parents first): the tree is cut there, so
// that `kill --tree 1` or the tree of the tmux server signals nothing
// rather than every process below it.
func (k *Killer) admit(p *procwalk.Process, snap *procwalk.Snapshot, rails *guardRails, cfg Config, refused map[procwalk.ProcID]error) error {
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
func shieldedBy(p *procwalk.Process, snap *procwalk.Snapshot, refused map[procwalk.ProcID]error) error {
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
func (k *Killer) Check(p *procwalk.Process) error { return k.Checker()(p) }

// Checker returns Check for many processes at once: procwalk's ancestry
// (its stat files) is read once, when it is called, not per process. A
// live view checks the rows of one frame with it.
func (k *Killer) Checker() func(p *procwalk.Process) error {
	cfg := k.Config()
	rails := guardRails{self: cfg.SelfPID, sentinel: cfg.Sentinel.PID(), ancestors: k.fs.Ancestors(cfg.SelfPID)}
	return func(p *procwalk.Process) error { return k.check(p, &rails, cfg) }
}

func (k *Killer) check(p *procwalk.Process, rails *guardRails, cfg Config) error {
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

func rootOf(s Scope) (procwalk.ProcID, bool) {
	switch s := s.(type) {
	case ProcessScope:
		return s.ID, true
	case TreeScope:
		return s.Root, true
	}
	return procwalk.ProcID{}, false
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

// hidesProcesses reports whether a scan may have missed processes: hidepid
// hid other users' ones, or their stat was denied.
func hidesProcesses(v procwalk.Visibility) bool {
	return v.OthersHidden || v.Denied["stat"] > 0 || v.Denied["statm"] > 0
}
