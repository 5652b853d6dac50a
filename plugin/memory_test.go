//go:build linux

package plugin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// memory_test.go checks what keeps execd's memory flat from gather to
// gather: the Collector hands each snapshot's Process array back to its
// scanner, unless a hook may keep the snapshot.

// manyProcesses writes a /proc tree of n processes, pid 1 and its n-1
// sleeping children, each with a stat and a statm, and returns its root.
func manyProcesses(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"stat", "meminfo"} {
		b, err := os.ReadFile(filepath.Join(fixtureProc, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid := 1; pid <= n; pid++ {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ppid := min(pid-1, 1)
		stat := fmt.Sprintf("%d (sleep) S %d %d %d 0 -1 4194560 10 0 1 0 3 2 0 0 20 0 1 0 %d 8000000 200 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			pid, ppid, pid, pid, 1000+pid)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "statm"), []byte("2000 200 150 10 0 100 0\n"), 0o644)
	}
	return root
}

// TestGathersReuseTheProcessArray counts the bytes each gather allocates
// over 2,000 processes: reusing the Process array, a gather allocates a few
// bytes per process (the tree's indexes), far below one Process.
func TestGathersReuseTheProcessArray(t *testing.T) {
	const n = 2000
	fs, err := procwalk.NewFS(manyProcesses(t, n))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(fs, Config{Group: session.Config{Kinds: []string{session.KindGroup}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Prime(); err != nil {
		t.Fatal(err)
	}
	var perProcess []float64
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := c.WriteBatch(io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if c.lastProcesses != n {
			t.Fatalf("gathered %d processes, want %d", c.lastProcesses, n)
		}
		perProcess = append(perProcess, float64(after.TotalAlloc-before.TotalAlloc)/n)
	}
	size := float64(unsafe.Sizeof(procwalk.Process{}))
	if least := slices.Min(perProcess); least > size/4 {
		t.Errorf("a gather allocates %.0f bytes per process (of 3 gathers: %.0f), want under a quarter of a Process (%.0f bytes): is the Process array reused?",
			least, perProcess, size)
	}
}

// TestHookKeepsItsSnapshot: a hook may keep the snapshots it is given (a
// Lua script keeps process objects in its state); later gathers must not
// reuse their storage.
func TestHookKeepsItsSnapshot(t *testing.T) {
	type kept struct {
		snap  *procwalk.Snapshot
		ids   []procwalk.ProcID
		comms []string
	}
	var all []kept
	hook := func(f frame.Frame, _ *Batch) error {
		k := kept{snap: f.Snapshot}
		for _, p := range f.Snapshot.Procs {
			k.ids, k.comms = append(k.ids, p.ID), append(k.comms, p.Comm)
		}
		all = append(all, k)
		return nil
	}
	c := userSessions(t, Config{Hook: hook})
	for range 3 {
		if err := c.WriteBatch(io.Discard, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(all) != 3 || len(all[0].ids) == 0 {
		t.Fatalf("the hook kept %d snapshots, want 3 of the fixture's processes", len(all))
	}
	for i, k := range all {
		var ids []procwalk.ProcID
		var comms []string
		for _, p := range k.snap.Procs {
			ids, comms = append(ids, p.ID), append(comms, p.Comm)
		}
		if !slices.Equal(ids, k.ids) || !slices.Equal(comms, k.comms) {
			t.Errorf("snapshot %d after later gathers: %v %q, want %v %q as the hook saw it", i+1, ids, comms, k.ids, k.comms)
		}
	}
}
