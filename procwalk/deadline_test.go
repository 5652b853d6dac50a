//go:build linux

package procwalk

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedReadTimeout is the read timeout of these tests. It bounds every
// read of the scan, not only the one a blocker holds: 20 ms failed under
// load (a fixture's /proc/stat read took longer, "a read of the proc root
// blocked"), so it leaves a loaded machine 50 times that, and each test
// waits it out about once.
const blockedReadTimeout = time.Second

// blocker makes the reads of one file of one pid block, as the kernel
// does on a process whose memory-map lock is stuck, until released.
type blocker struct {
	pid     int
	file    string
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func newBlocker(pid int, file string) *blocker {
	return &blocker{pid: pid, file: file, release: make(chan struct{})}
}

func (b *blocker) beforeRead(pid int, file string) {
	if pid != b.pid || file != b.file {
		return
	}
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
	<-b.release
}

func (b *blocker) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// snapshotWithin fails the test instead of hanging when a scan blocks.
func snapshotWithin(t *testing.T, sc *Scanner, f Fields) *Snapshot {
	t.Helper()
	type result struct {
		s   *Snapshot
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := sc.Snapshot(f)
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.s
	case <-time.After(30 * time.Second):
		t.Fatal("the scan hung on a blocked read")
		return nil
	}
}

// A read that blocks marks its process partial and the scan completes; the
// process is not read again (no second blocked goroutine) until the read
// returns, and is whole again afterwards.
func TestScanSurvivesBlockedRead(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := snapshotWithin(t, NewScanner(fs), FieldCmdline)
	b := newBlocker(110, "cmdline")
	defer func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	}()
	sc := NewScanner(fs)
	sc.readTimeout = blockedReadTimeout
	sc.beforeRead = b.beforeRead

	for scan := 1; scan <= 2; scan++ {
		s := snapshotWithin(t, sc, FieldCmdline)
		if len(s.Procs) != len(want.Procs) || s.Visibility.TimedOut != 1 || !s.Visibility.Partial() {
			t.Fatalf("scan %d: %d processes, %d timed out, want %d and 1", scan, len(s.Procs), s.Visibility.TimedOut, len(want.Procs))
		}
		for i := range s.Procs {
			p, w := &s.Procs[i], &want.Procs[i]
			blocked := p.ID.PID == 110
			if p.ReadTimedOut != blocked || (p.Read&FieldCmdline != 0) == blocked || p.RSSBytes != w.RSSBytes || p.Comm != w.Comm {
				t.Errorf("scan %d pid %d: timed out %v, read %v, rss %d comm %q; want rss %d comm %q", scan, p.ID.PID, p.ReadTimedOut, p.Read, p.RSSBytes, p.Comm, w.RSSBytes, w.Comm)
			}
		}
		if b.count() != 1 {
			t.Errorf("scan %d: the blocked file was read %d times, want once", scan, b.count())
		}
	}

	close(b.release)
	for deadline := time.Now().Add(time.Minute); sc.stuck.lookup(110) != ""; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("pid 110 still marked stuck a minute after its read returned")
		}
	}
	s := snapshotWithin(t, sc, FieldCmdline)
	if p := s.Process(110); s.Visibility.TimedOut != 0 || p == nil || p.ReadTimedOut || p.Read&FieldCmdline == 0 {
		t.Errorf("after release: %d timed out, pid 110 %+v", s.Visibility.TimedOut, p)
	}
}

// A blocked stat drops the process and counts it.
func TestScanDropsProcessWithBlockedStat(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := snapshotWithin(t, NewScanner(fs), 0)
	b := newBlocker(110, "stat")
	defer close(b.release)
	sc := NewScanner(fs)
	sc.readTimeout = blockedReadTimeout
	sc.beforeRead = b.beforeRead
	s := snapshotWithin(t, sc, 0)
	if s.Process(110) != nil || len(s.Procs) != len(want.Procs)-1 || s.Visibility.TimedOut != 1 {
		t.Errorf("got %d processes, %d timed out, pid 110 kept %v; want %d, 1, dropped", len(s.Procs), s.Visibility.TimedOut, s.Process(110) != nil, len(want.Procs)-1)
	}
}

// ReadMore gives up on a blocked smaps_rollup: the process keeps what it
// had, marked ReadTimedOut; the others are read.
func TestReadMoreSurvivesBlockedRead(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	b := newBlocker(110, "smaps_rollup")
	defer close(b.release)
	sc := NewScanner(fs)
	sc.readTimeout = blockedReadTimeout
	sc.beforeRead = b.beforeRead
	s := snapshotWithin(t, sc, 0)
	procs := []*Process{s.Process(100), s.Process(110), s.Process(111)}
	done := make(chan error, 1)
	go func() { done <- sc.ReadMore(procs, FieldSmaps) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ReadMore hung on a blocked read")
	}
	for _, p := range procs {
		blocked := p.ID.PID == 110
		if p.ReadTimedOut != blocked || (p.Read&FieldSmaps != 0) == blocked {
			t.Errorf("pid %d: timed out %v, read %v", p.ID.PID, p.ReadTimedOut, p.Read)
		}
	}
}

// A read of the root itself (its stat, here) that blocks fails the scan
// with ErrBlocked after the read timeout instead of hanging it, and while
// it is still blocked a later scan fails at once without reading again;
// once it returns, scans work again.
func TestScanRootReadBlocked(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	b := newBlocker(0, "stat")
	sc := NewScanner(fs)
	sc.readTimeout = blockedReadTimeout
	sc.beforeRead = b.beforeRead
	for scan := 1; scan <= 2; scan++ {
		if _, err := sc.Snapshot(0); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "testdata/proc/stat") {
			t.Fatalf("scan %d: %v, want ErrBlocked naming the root's stat", scan, err)
		}
		if b.count() != 1 {
			t.Errorf("scan %d: the root's stat was read %d times, want once", scan, b.count())
		}
	}
	close(b.release)
	sc.beforeRead = nil
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		s, err := sc.Snapshot(0)
		if err == nil && len(s.Procs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scan after the read returned: %v", err)
		}
	}
}
