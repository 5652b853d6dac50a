//go:build linux

package kill

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// scope.go names the sets of processes a Killer can terminate: one process,
// a tree, a process group, a session, a cgroup. A scope lists its members in
// a Snapshot; the Killer asks again while it waits, so processes that join
// during termination (children forked by a member handling SIGTERM) are
// signalled too.

// Scope is a set of processes to terminate.
type Scope interface {
	// String describes the scope for logs: "tree 1234@5678", "pgrp 42".
	String() string
	// Fields are the optional fields the scope needs in its snapshots.
	Fields() procwalk.Fields
	// Members returns the scope's processes in s. known holds every process
	// already targeted (alive or not), so that a tree can follow the
	// children of members whose own parent has exited.
	Members(s *procwalk.Snapshot, known map[procwalk.ProcID]bool) []*procwalk.Process
	// Grows reports whether processes can join after the plan was made;
	// only then does the Killer re-walk while it waits.
	Grows() bool
}

// ProcessScope is one process. Session, when set ("tmux:build"), labels
// its audit event.
type ProcessScope struct {
	ID      procwalk.ProcID
	Session string
}

func (s ProcessScope) String() string          { return "process " + s.ID.String() }
func (s ProcessScope) Fields() procwalk.Fields { return 0 }
func (s ProcessScope) Grows() bool             { return false }

func (s ProcessScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	if p := snap.Lookup(s.ID); p != nil {
		return []*procwalk.Process{p}
	}
	return nil
}

// TreeScope is a process and all its descendants, parents listed before
// their children. A refused member (protected, procwalk's ancestor ...)
// shields its own descendants: the tree is cut there, so the tree of pid 1
// or of the tmux server signals nothing. Children forked while the tree is
// being terminated are followed from every member that is still alive; a
// child whose parent
// exits before the next re-walk is adopted by init or a subreaper and can
// no longer be told apart from unrelated processes: use a cgroup scope when
// that matters.
type TreeScope struct {
	Root procwalk.ProcID
}

func (s TreeScope) String() string          { return "tree " + s.Root.String() }
func (s TreeScope) Fields() procwalk.Fields { return 0 }
func (s TreeScope) Grows() bool             { return true }

func (s TreeScope) Members(snap *procwalk.Snapshot, known map[procwalk.ProcID]bool) []*procwalk.Process {
	seen := make(map[procwalk.ProcID]bool)
	var out []*procwalk.Process
	walkFrom := func(pid int) {
		snap.Walk(pid, func(p *procwalk.Process, _ int) bool {
			if seen[p.ID] {
				return false
			}
			seen[p.ID] = true
			out = append(out, p)
			return true
		})
	}
	if snap.Lookup(s.Root) != nil {
		walkFrom(s.Root.PID)
	}
	// Known members still alive under the same identity keep their
	// children in the scope after the root has gone.
	for _, id := range sortedIDs(known) {
		if snap.Lookup(id) != nil {
			walkFrom(id.PID)
		}
	}
	return out
}

// GroupScope is a process group: every process whose pgrp is PGRP. Forked
// children inherit the group, so the members found while waiting include
// them wherever their parent is.
type GroupScope struct {
	PGRP int
}

func (s GroupScope) String() string          { return fmt.Sprintf("pgrp %d", s.PGRP) }
func (s GroupScope) Fields() procwalk.Fields { return 0 }
func (s GroupScope) Grows() bool             { return true }

func (s GroupScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	var out []*procwalk.Process
	for i := range snap.Procs {
		if p := &snap.Procs[i]; p.PGRP == s.PGRP && !p.Kernel {
			out = append(out, p)
		}
	}
	return parentsFirst(snap, out)
}

// SessionScope is the members of a session of any kind (see Session), with
// the descendants they fork while being terminated. With KillTmuxSession,
// a tmux session is also removed with `tmux kill-session` once every member
// is gone, so no empty panes linger (remain-on-exit). A cgroup session's
// members are its cgroup's, read again at every walk (see CgroupScope):
// whatever is placed in the session when a walk runs is of the scope,
// however it got there (a daemon double-forked out of the tree, a process
// started by a unit's other processes).
type SessionScope struct {
	Ref    string // "KIND:NAME"
	IDs    []procwalk.ProcID
	Kind   string
	Name   string
	Attrs  map[string]string
	Cgroup *CgroupScope // set for a cgroup session
	Tmux   bool         // kill-session was asked and the session is a tmux one
}

// NewSessionScope returns the scope of s. killTmuxSession asks, for a tmux
// session, to run `tmux kill-session` once its processes are gone.
func NewSessionScope(s *session.Session, killTmuxSession bool) *SessionScope {
	sc := &SessionScope{Ref: s.Ref(), IDs: slices.Clone(s.Members), Kind: s.Kind, Name: s.Name, Attrs: s.Attrs}
	sc.Tmux = killTmuxSession && s.Kind == session.KindTmux && s.Attrs[session.AttrSocket] != ""
	if s.Kind == session.KindCgroup && s.Attrs[session.AttrCgroup] != "" {
		sc.Cgroup = &CgroupScope{Path: s.Attrs[session.AttrCgroup], session: true, v1: s.Attrs[session.AttrCgroupVer] == "1"}
	}
	return sc
}

func (s *SessionScope) String() string { return "session " + s.Ref }
func (s *SessionScope) Grows() bool    { return true }

func (s *SessionScope) Fields() procwalk.Fields {
	if s.Cgroup != nil {
		return procwalk.FieldCgroup
	}
	return 0
}

func (s *SessionScope) Members(snap *procwalk.Snapshot, known map[procwalk.ProcID]bool) []*procwalk.Process {
	if s.Cgroup != nil {
		return s.Cgroup.Members(snap, known)
	}
	seen := make(map[procwalk.ProcID]bool, len(s.IDs))
	var out []*procwalk.Process
	add := func(p *procwalk.Process) {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	for _, id := range s.IDs {
		if p := snap.Lookup(id); p != nil {
			add(p)
		}
	}
	// Children forked by live members since the session was built.
	for _, id := range append(slices.Clone(s.IDs), sortedIDs(known)...) {
		if snap.Lookup(id) == nil {
			continue
		}
		for _, d := range snap.Descendants(id.PID) {
			add(d)
		}
	}
	return parentsFirst(snap, out)
}

// CgroupScope is every process in a cgroup and its descendant cgroups. Path
// is the cgroup path as /proc/<pid>/cgroup shows it ("/system.slice/x.service").
// Hierarchy "" means the unified (v2) hierarchy, the "0::" line; otherwise a
// v1 controller list as it appears in the line ("memory", "name=systemd").
// Membership is read again at every walk, so a process that left the tree
// (double-forked, reparented to init) but not the cgroup stays in the
// scope, and after the end every process the cgroup's cgroup.procs still
// lists is reported: a member alive as escaped, one procwalk cannot see
// (outside its pid namespace, hidden) in Report.Left; the cgroup is
// emptied, or the report says what is left.
// On v2 the cgroup is frozen with cgroup.freeze (Linux 5.2+) around each
// signal, when it holds no refused member and no process outside
// procwalk's pid namespace: frozen, nothing in it forks, one walk finds
// every member, and each is signalled through its own verified pidfd
// (cgroup.kill, which kills whatever is in the cgroup when it is written,
// is never used: a process moved in after the last check would die
// unverified).
type CgroupScope struct {
	Path      string
	Hierarchy string
	// Mount is the cgroup2 mount point; "" means found in
	// <proc>/self/mountinfo.
	Mount string

	// session: the members are the processes placed in the cgroup session
	// Path as session.Group places them (session.CgroupSession), on the v1
	// hierarchies when v1, else on the unified one.
	session bool
	v1      bool
}

func (s *CgroupScope) String() string          { return "cgroup " + s.Path }
func (s *CgroupScope) Fields() procwalk.Fields { return procwalk.FieldCgroup }
func (s *CgroupScope) Grows() bool             { return true }

func (s *CgroupScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	var out []*procwalk.Process
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if !p.Kernel && s.contains(p) {
			out = append(out, p)
		}
	}
	return parentsFirst(snap, out)
}

// v2 reports whether the scope's cgroup is on the unified hierarchy.
func (s *CgroupScope) v2() bool {
	if s.session {
		return !s.v1
	}
	return s.Hierarchy == ""
}

func (s *CgroupScope) contains(p *procwalk.Process) bool {
	if s.session {
		dir, line, ok := session.CgroupSession(p.Cgroups)
		return ok && dir == s.Path && (line.HierarchyID == 0) != s.v1
	}
	for _, l := range p.Cgroups {
		if s.Hierarchy == "" && l.HierarchyID != 0 || s.Hierarchy != "" && l.Controllers != s.Hierarchy {
			continue
		}
		if l.Path == s.Path || strings.HasPrefix(l.Path, strings.TrimSuffix(s.Path, "/")+"/") {
			return true
		}
	}
	return false
}

// line returns the cgroup line of p that places it in the scope, which
// names the scope's hierarchy; ok is false when p is no member.
func (s *CgroupScope) line(p *procwalk.Process) (procwalk.CgroupLine, bool) {
	if s.session {
		dir, line, ok := session.CgroupSession(p.Cgroups)
		return line, ok && dir == s.Path && (line.HierarchyID == 0) != s.v1
	}
	for _, l := range p.Cgroups {
		if (s.Hierarchy == "") == (l.HierarchyID == 0) && (s.Hierarchy == "" || l.Controllers == s.Hierarchy) {
			return l, s.contains(p)
		}
	}
	return procwalk.CgroupLine{}, false
}

// inScope reports whether the cgroup at path (a directory of the scope's
// hierarchy, as /proc/<pid>/cgroup shows it) holds members of the scope:
// it is Path or below it, and for a session it places its processes in
// the session (a plain path's child cgroups are sessions of their own).
func (s *CgroupScope) inScope(path string) bool {
	if path != s.Path && !strings.HasPrefix(path, strings.TrimSuffix(s.Path, "/")+"/") {
		return false
	}
	return !s.session || session.CgroupSessionDir(path) == s.Path
}

// validate refuses the root cgroup, which holds every process.
func (s *CgroupScope) validate() error {
	if strings.Trim(s.Path, "/") == "" {
		return fmt.Errorf("%w: refusing to target the root cgroup %q: it holds every process", procwalk.ErrBadTarget, s.Path)
	}
	return nil
}

// parentsFirst orders procs by depth in snap, then pid: signalling parents
// first stops them from respawning the children signalled after them.
func parentsFirst(snap *procwalk.Snapshot, procs []*procwalk.Process) []*procwalk.Process {
	depth := make(map[int]int, len(procs))
	for _, p := range procs {
		depth[p.ID.PID] = len(snap.Ancestors(p.ID.PID))
	}
	slices.SortStableFunc(procs, func(a, b *procwalk.Process) int {
		return cmp.Or(cmp.Compare(depth[a.ID.PID], depth[b.ID.PID]), cmp.Compare(a.ID.PID, b.ID.PID))
	})
	return procs
}

func sortedIDs(m map[procwalk.ProcID]bool) []procwalk.ProcID {
	out := make([]procwalk.ProcID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b procwalk.ProcID) int { return cmp.Compare(a.PID, b.PID) })
	return out
}

// Biggest returns up to n (every one when n < 0) of procs as seen in s,
// largest by metric d first, in the order every ranking follows (see
// metric.Compare): a process without a value for d (its smaps_rollup
// refused, say) after every one with a value, ties by the lower pid.
// Kernel threads and zombies are skipped. Protection is the Killer's
// business: pair it with Killer.Check to pick among killable processes.
func Biggest(s *procwalk.Snapshot, procs []*procwalk.Process, n int, d *metric.Desc) []*procwalk.Process {
	out := make([]*procwalk.Process, 0, len(procs))
	for _, p := range procs {
		if !p.Kernel && !p.Zombie() {
			out = append(out, p)
		}
	}
	metric.Sort(s, out, d)
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// BiggestIn is Biggest over the members of a session (or any set of
// ProcIDs) as found in snap; members that have exited or whose pid was
// reused are skipped. Read what d needs (d.Needs) in snap.
func BiggestIn(snap *procwalk.Snapshot, members []procwalk.ProcID, n int, d *metric.Desc) []*procwalk.Process {
	procs := make([]*procwalk.Process, 0, len(members))
	for _, id := range members {
		if p := snap.Lookup(id); p != nil {
			procs = append(procs, p)
		}
	}
	return Biggest(snap, procs, n, d)
}
