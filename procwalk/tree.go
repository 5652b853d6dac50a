//go:build linux

package procwalk

import "slices"

// tree.go links the processes of a Snapshot by ppid, in the same pass that
// read them. It never uses /proc/<pid>/task/<tid>/children: that file needs
// CONFIG_PROC_CHILDREN, which most kernels lack.

// buildTree fills the parent and child links. A process whose parent is not
// in the snapshot (pid 1, kthreadd, or a parent hidden from us) is a root. A
// ppid cycle, possible only in a corrupt fixture, is cut so walks end.
func (s *Snapshot) buildTree() {
	n := len(s.Procs)
	s.parent = make([]int32, n)
	s.firstChild = make([]int32, n)
	s.nextSibling = make([]int32, n)
	for i := range s.Procs {
		s.parent[i] = int32(s.Index(s.Procs[i].PPID))
		if s.Procs[i].PPID == s.Procs[i].ID.PID {
			s.parent[i] = -1
		}
		s.firstChild[i] = -1
		s.nextSibling[i] = -1
	}
	s.cutCycles()
	// Link children in descending order so each list ends up ascending.
	for i := n - 1; i >= 0; i-- {
		if p := s.parent[i]; p >= 0 {
			s.nextSibling[i] = s.firstChild[p]
			s.firstChild[p] = int32(i)
		}
	}
}

func (s *Snapshot) cutCycles() {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(s.Procs))
	for i := range s.Procs {
		j := int32(i)
		for j >= 0 && state[j] == unseen {
			state[j] = onPath
			if p := s.parent[j]; p >= 0 && state[p] == onPath {
				s.parent[j] = -1 // closes a cycle: make j a root
			}
			j = s.parent[j]
		}
		for j := int32(i); j >= 0 && state[j] == onPath; j = s.parent[j] {
			state[j] = done
		}
	}
}

// members returns those of procs that point into s.Procs: a caller may
// hand a Monitor processes of an older snapshot it still holds.
func (s *Snapshot) members(procs []*Process) []*Process {
	owns := func(p *Process) bool {
		i := s.Index(p.ID.PID)
		return i >= 0 && &s.Procs[i] == p
	}
	if !slices.ContainsFunc(procs, func(p *Process) bool { return !owns(p) }) {
		return procs
	}
	var own []*Process
	for _, p := range procs {
		if owns(p) {
			own = append(own, p)
		}
	}
	return own
}

// Index returns the position of pid in Procs, or -1. Like every lookup of
// the tree (Process, Lookup, Parent, Children ...), it panics with
// ErrRecycled on a snapshot whose storage its Monitor recycled.
func (s *Snapshot) Index(pid int) int {
	s.check()
	lo, hi := 0, len(s.Procs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.Procs[m].ID.PID < pid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.Procs) && s.Procs[lo].ID.PID == pid {
		return lo
	}
	return -1
}

// check panics with ErrRecycled when s's storage was recycled.
func (s *Snapshot) check() {
	if s.recycled {
		panic(ErrRecycled)
	}
}

// ParentIndex returns the index in Procs of the parent of Procs[i], or -1
// for a root. With FirstChildIndex and NextSiblingIndex it walks the tree by
// index, without a lookup per step: the session kinds do so on every gather.
func (s *Snapshot) ParentIndex(i int32) int32 { return s.parent[i] }

// FirstChildIndex returns the index in Procs of the first child (lowest pid)
// of Procs[i], or -1.
func (s *Snapshot) FirstChildIndex(i int32) int32 { return s.firstChild[i] }

// NextSiblingIndex returns the index in Procs of the next child of Procs[i]'s
// parent after it, or -1.
func (s *Snapshot) NextSiblingIndex(i int32) int32 { return s.nextSibling[i] }

// Process returns the process with pid, or nil when the snapshot lacks it.
func (s *Snapshot) Process(pid int) *Process {
	if i := s.Index(pid); i >= 0 {
		return &s.Procs[i]
	}
	return nil
}

// Lookup returns the process with id: nil when the pid is absent or now
// belongs to another process.
func (s *Snapshot) Lookup(id ProcID) *Process {
	if p := s.Process(id.PID); p != nil && p.ID == id {
		return p
	}
	return nil
}

// Parent returns the parent of pid in the snapshot, or nil for a root.
func (s *Snapshot) Parent(pid int) *Process {
	if i := s.Index(pid); i >= 0 && s.parent[i] >= 0 {
		return &s.Procs[s.parent[i]]
	}
	return nil
}

// Children returns the direct children of pid, in pid order.
func (s *Snapshot) Children(pid int) []*Process { return s.AppendChildren(nil, pid) }

// AppendChildren appends the direct children of pid, in pid order, to dst
// and returns it: a walk of a big tree reuses one slice as its stack
// instead of allocating one per parent.
func (s *Snapshot) AppendChildren(dst []*Process, pid int) []*Process {
	i := s.Index(pid)
	if i < 0 {
		return dst
	}
	for c := s.firstChild[i]; c >= 0; c = s.nextSibling[c] {
		dst = append(dst, &s.Procs[c])
	}
	return dst
}

// Ancestors returns the parent of pid, its parent and so on up to a root.
func (s *Snapshot) Ancestors(pid int) []*Process {
	i := s.Index(pid)
	if i < 0 {
		return nil
	}
	var out []*Process
	for p := s.parent[i]; p >= 0; p = s.parent[p] {
		out = append(out, &s.Procs[p])
	}
	return out
}

// Roots returns the processes without a parent in the snapshot.
func (s *Snapshot) Roots() []*Process {
	s.check()
	var out []*Process
	for i := range s.Procs {
		if s.parent[i] < 0 {
			out = append(out, &s.Procs[i])
		}
	}
	return out
}

// Walk calls fn for pid and every descendant, depth first in pid order, with
// depth 0 for pid itself. fn returning false skips that process's children.
func (s *Snapshot) Walk(pid int, fn func(p *Process, depth int) bool) {
	i := s.Index(pid)
	if i < 0 {
		return
	}
	s.WalkIndex(int32(i), 0, fn)
}

// WalkIndex is Walk from Procs[i], whose depth is given: for a caller
// that already holds the index.
func (s *Snapshot) WalkIndex(i int32, depth int, fn func(*Process, int) bool) {
	if !fn(&s.Procs[i], depth) {
		return
	}
	for c := s.firstChild[i]; c >= 0; c = s.nextSibling[c] {
		s.WalkIndex(c, depth+1, fn)
	}
}

// Descendants returns every process below pid (not pid itself), depth first.
func (s *Snapshot) Descendants(pid int) []*Process {
	var out []*Process
	s.Walk(pid, func(p *Process, depth int) bool {
		if depth > 0 {
			out = append(out, p)
		}
		return true
	})
	return out
}

// Subtree sums pid and all its descendants.
func (s *Snapshot) Subtree(pid int) Totals {
	var t Totals
	s.Walk(pid, func(p *Process, _ int) bool {
		t.Add(p)
		return true
	})
	return t
}
