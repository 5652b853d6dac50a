//go:build linux

package procwalk

import (
	"os"
	"slices"
	"testing"
)

func TestTreeFixture(t *testing.T) {
	s := fixtureSnapshot(t, 0)
	parents := []struct{ pid, want int }{
		{111, 110}, {110, 101}, {101, 100}, {100, 1}, {121, 120}, {3, 2}, {205, 1},
		{1, 0}, {2, 0}, // roots
		{400, 0},  // its parent 300 vanished
		{300, 0},  // not in the snapshot
		{9999, 0}, // never existed
	}
	for _, tt := range parents {
		got := 0
		if p := s.Parent(tt.pid); p != nil {
			got = p.ID.PID
		}
		if got != tt.want {
			t.Errorf("Parent(%d) = %d; want %d", tt.pid, got, tt.want)
		}
	}
	children := []struct {
		pid  int
		want []int
	}{
		{1, []int{100, 200, 201, 202, 203, 204, 205, 303}},
		{100, []int{101, 102}},
		{101, []int{110}},
		{2, []int{3}},
		{111, []int{}},
		{121, []int{}},
		{9999, []int{}},
	}
	for _, tt := range children {
		if got := pids(s.Children(tt.pid)); !slices.Equal(got, tt.want) {
			t.Errorf("Children(%d) = %v; want %v", tt.pid, got, tt.want)
		}
	}
	ancestors := []struct {
		pid  int
		want []int
	}{
		{111, []int{110, 101, 100, 1}},
		{121, []int{120, 102, 100, 1}},
		{3, []int{2}},
		{1, []int{}},
		{400, []int{}},
		{9999, []int{}},
	}
	for _, tt := range ancestors {
		if got := pids(s.Ancestors(tt.pid)); !slices.Equal(got, tt.want) {
			t.Errorf("Ancestors(%d) = %v; want %v", tt.pid, got, tt.want)
		}
	}
	if got, want := pids(s.Descendants(100)), []int{101, 110, 111, 102, 120, 121}; !slices.Equal(got, want) {
		t.Errorf("Descendants(100) = %v; want %v (depth first, pid order)", got, want)
	}
	if got := pids(s.Descendants(111)); len(got) != 0 {
		t.Errorf("Descendants(leaf) = %v", got)
	}
	if got, want := pids(s.Roots()), []int{1, 2, 400}; !slices.Equal(got, want) {
		t.Errorf("Roots() = %v; want %v", got, want)
	}
	if got := len(s.Descendants(1)) + len(s.Descendants(2)) + len(s.Descendants(400)) + 3; got != len(s.Procs) {
		t.Errorf("roots and their descendants cover %d processes; want all %d", got, len(s.Procs))
	}
}

func TestTreeWalk(t *testing.T) {
	s := fixtureSnapshot(t, 0)
	type visit struct{ pid, depth int }
	var got []visit
	s.Walk(100, func(p *Process, depth int) bool {
		got = append(got, visit{p.ID.PID, depth})
		return true
	})
	want := []visit{{100, 0}, {101, 1}, {110, 2}, {111, 3}, {102, 1}, {120, 2}, {121, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Walk(100) = %v; want %v", got, want)
	}
	// Returning false skips a process's children, not its siblings.
	got = nil
	s.Walk(100, func(p *Process, depth int) bool {
		got = append(got, visit{p.ID.PID, depth})
		return p.ID.PID != 101
	})
	want = []visit{{100, 0}, {101, 1}, {102, 1}, {120, 2}, {121, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Walk(100) skipping 101 = %v; want %v", got, want)
	}
	called := false
	s.Walk(300, func(*Process, int) bool { called = true; return true })
	if called {
		t.Error("Walk of an absent pid called fn")
	}
}

func TestSubtreeFixture(t *testing.T) {
	page := uint64(os.Getpagesize())
	s := fixtureSnapshot(t, AllFields|FieldSmaps)
	got := s.Subtree(100)
	// Literal sums over 100 101 102 110 111 120 121 (fixture values).
	want := Totals{
		Procs:      7,
		Threads:    10, // python3 has 4
		Zombies:    1,
		RSSBytes:   (1200 + 900 + 950 + 2000 + 30000 + 5000 + 0) * page,
		PSSBytes:   (2000 + 1200 + 1300 + 5000 + 100000 + 15000) << 10,
		USSBytes:   (1800 + 900 + 970 + 6248 + 91000 + 14500) << 10, // Private_Clean+Private_Dirty+Private_Hugetlb
		SwapBytes:  (64 + 1024) << 10,
		ReadBytes:  4096 + 0 + 8192 + 1048576 + 52428800 + 2097152 + 0,
		WriteBytes: 8192 + 4096 + 0 + 524288 + 6291456 + 4194304 + 0,
		SmapsRead:  6, // not the zombie
		IORead:     7,
	}
	cpu := got.CPUSeconds
	got.CPUSeconds = 0
	if got != want {
		t.Errorf("Subtree(100) =\n %+v\nwant\n %+v", got, want)
	}
	// (250+130 + 40+25 + 55+30 + 1234+567 + 98765+4321 + 7000+300 + 12+3) ticks / 100.
	if d := cpu - 1127.32; d > 1e-9 || d < -1e-9 {
		t.Errorf("Subtree(100).CPUSeconds = %v; want 1127.32", cpu)
	}

	pane := s.Subtree(101)
	if pane.Procs != 3 || pane.RSSBytes != (900+2000+30000)*page || pane.PSSBytes != (1200+5000+100000)<<10 {
		t.Errorf("Subtree(101) = %+v; want 3 procs, RSS %d, PSS %d", pane, (900+2000+30000)*page, (1200+5000+100000)<<10)
	}
	if leaf := s.Subtree(121); leaf.Procs != 1 || leaf.Zombies != 1 || leaf.RSSBytes != 0 || leaf.SmapsRead != 0 {
		t.Errorf("Subtree(zombie) = %+v", leaf)
	}
	if none := s.Subtree(300); none != (Totals{}) {
		t.Errorf("Subtree(absent) = %+v; want zero", none)
	}
}

func TestSnapshotLookup(t *testing.T) {
	s := fixtureSnapshot(t, 0)
	if p := s.Lookup(ProcID{111, 160100}); p == nil || p.Comm != "cc1" {
		t.Errorf("Lookup(111@160100) = %v", p)
	}
	if p := s.Lookup(ProcID{111, 1}); p != nil {
		t.Errorf("Lookup of pid 111 with another start time = %v; want nil (pid reused)", p.ID)
	}
	if p := s.Process(300); p != nil {
		t.Errorf("Process(vanished) = %v", p.ID)
	}
}

// handSnapshot builds a snapshot from pid -> ppid pairs, sorted by pid.
func handSnapshot(links [][2]int) *Snapshot {
	s := &Snapshot{}
	for _, l := range links {
		s.Procs = append(s.Procs, Process{ID: ProcID{PID: l[0]}, PPID: l[1], Threads: 1, RSSBytes: 4096})
	}
	slices.SortFunc(s.Procs, func(a, b Process) int { return a.ID.PID - b.ID.PID })
	s.buildTree()
	return s
}

func TestTreeCorruptCycles(t *testing.T) {
	// Impossible on a live kernel, possible in a corrupt fixture or a torn
	// read: 10 -> 12 -> 11 -> 10, 13 its own parent, 14 hangs off the
	// cycle, 20 <-> 21, and 30 -> 31 -> 32 -> 30 entered from 33.
	s := handSnapshot([][2]int{{10, 12}, {11, 10}, {12, 11}, {13, 13}, {14, 12}, {20, 21}, {21, 20}, {30, 32}, {31, 30}, {32, 31}, {33, 31}})
	roots := s.Roots()
	// Each cycle is cut exactly once: four roots (one per cycle, 13 alone).
	if len(roots) != 4 {
		t.Fatalf("Roots() = %v; want one per cycle", pids(roots))
	}
	seen := map[int]int{}
	for _, r := range roots {
		s.Walk(r.ID.PID, func(p *Process, depth int) bool {
			seen[p.ID.PID]++
			if depth > len(s.Procs) {
				t.Fatalf("Walk(%d) is going round a cycle", r.ID.PID)
			}
			return true
		})
	}
	for _, p := range s.Procs {
		if seen[p.ID.PID] != 1 {
			t.Errorf("pid %d reached %d times from the roots; want once", p.ID.PID, seen[p.ID.PID])
		}
		if n := len(s.Ancestors(p.ID.PID)); n >= len(s.Procs) {
			t.Errorf("Ancestors(%d) has %d entries: a cycle", p.ID.PID, n)
		}
	}
	if got := s.Subtree(13); got.Procs != 1 {
		t.Errorf("Subtree(self-parent 13) = %d procs; want 1", got.Procs)
	}
	total := 0
	for _, r := range roots {
		total += s.Subtree(r.ID.PID).Procs
	}
	if total != len(s.Procs) {
		t.Errorf("subtrees of the roots sum to %d processes; want %d", total, len(s.Procs))
	}
}

func TestTreeEmptyAndMissingParents(t *testing.T) {
	s := handSnapshot(nil)
	if len(s.Roots()) != 0 || s.Parent(1) != nil || s.Children(1) != nil || s.Subtree(1) != (Totals{}) {
		t.Error("empty snapshot answers with processes")
	}
	s = handSnapshot([][2]int{{5, 4}, {7, 5}, {9, 8}})
	if got := pids(s.Roots()); !slices.Equal(got, []int{5, 9}) {
		t.Errorf("Roots() = %v; want [5 9]", got)
	}
	if got := s.Subtree(5); got.Procs != 2 || got.RSSBytes != 8192 {
		t.Errorf("Subtree(5) = %+v", got)
	}
}
