//go:build linux

package procwalk

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fixtureOfSleepers writes a /proc tree of n sleeping processes with a stat
// and a statm each, and returns its root.
func fixtureOfSleepers(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"stat", "meminfo"} {
		b, err := os.ReadFile(filepath.Join("testdata", "proc", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, f), b, 0o644)
	}
	for pid := 1; pid <= n; pid++ {
		dir := filepath.Join(root, fmt.Sprint(pid))
		os.Mkdir(dir, 0o755)
		stat := fmt.Sprintf("%d (sleep) S 1 %d %d 0 -1 4194560 10 0 1 0 3 2 0 0 20 0 1 0 %d 8000000 200 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			pid, pid, pid, 1000+pid)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "statm"), []byte("2000 200 150 10 0 100 0\n"), 0o644)
	}
	return root
}

// residentPages counts the pages wholly inside procs (up to its length)
// that are resident, and how many there are.
func residentPages(t *testing.T, procs []Process) (resident, pages int) {
	t.Helper()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(procs)))
	end := start + uintptr(len(procs))*unsafe.Sizeof(Process{})
	first, last := (start+page-1)/page*page, end/page*page
	if last <= first {
		t.Fatalf("the array (%d bytes) holds no whole page", end-start)
	}
	vec := make([]byte, (last-first)/page)
	// mincore(2): bit 0 of each byte of vec is set for a resident page.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, first, last-first, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Skipf("mincore: %v", errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// TestReleaseSpare: the recycled array's pages leave memory, and the next
// scan fills the same array with the right processes.
func TestReleaseSpare(t *testing.T) {
	const n = 1000
	fs, err := NewFS(fixtureOfSleepers(t, n))
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(fs)
	s, err := sc.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	array := s.Procs[:cap(s.Procs)]
	if resident, pages := residentPages(t, s.Procs); resident != pages {
		t.Fatalf("%d of %d pages resident after a scan filled them", resident, pages)
	}
	// No collection between the release and the count: the collector's
	// mark phase reads the array (its processes hold pointers), and a read
	// of a released page maps the zero page, which mincore counts as
	// resident (32 of 128 pages, once, on a loaded CI machine).
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	sc.Recycle(s)
	sc.ReleaseSpare()
	if resident, pages := residentPages(t, array); resident != 0 {
		t.Errorf("%d of %d pages still resident after ReleaseSpare", resident, pages)
	}
	s, err = sc.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(s.Procs) != unsafe.SliceData(array) {
		t.Error("the scan after ReleaseSpare allocated a new array")
	}
	if len(s.Procs) != n {
		t.Fatalf("%d processes, want %d", len(s.Procs), n)
	}
	for i, p := range s.Procs {
		if p.ID.PID != i+1 || p.Comm != "sleep" || p.PPID != 1 || p.RSSBytes != 200*s.Host.PageSizeBytes {
			t.Fatalf("process %d after ReleaseSpare: %+v", i, p)
		}
	}
}
