//go:build linux

package procwalk

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

// These tests read the real /proc of the machine running them, and start
// and stop only their own child process. They need no privilege.

func liveFS(t *testing.T) FS {
	t.Helper()
	fs, err := NewFS(DefaultRoot)
	if err != nil {
		t.Skipf("no procfs at %s: %v", DefaultRoot, err)
	}
	return fs
}

func TestLiveHost(t *testing.T) {
	h, err := liveFS(t).Host()
	if err != nil {
		t.Fatal(err)
	}
	if h.ClockTicks != 100 {
		t.Errorf("ClockTicks = %d; USER_HZ is 100 on every Linux architecture Go targets", h.ClockTicks)
	}
	if h.PageSizeBytes != uint64(os.Getpagesize()) || h.MemTotalBytes == 0 || h.CPUs < runtime.NumCPU() {
		t.Errorf("Host = %+v; want page size %d, MemTotal > 0, CPUs >= %d", h, os.Getpagesize(), runtime.NumCPU())
	}
	if now := time.Now(); !h.BootTime.Before(now) || h.BootTime.Year() < 2000 {
		t.Errorf("BootTime = %v", h.BootTime)
	}
}

func TestLiveSnapshot(t *testing.T) {
	fs := liveFS(t)
	before := time.Now()
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	after := time.Now()
	t.Cleanup(func() {
		child.Process.Kill() // our own child only
		child.Wait()
	})
	// Start returns once the exec began: the kernel sets the new command
	// line a moment later, and a loaded machine can show it empty until then.
	waitCmdline(t, child.Process.Pid)

	s, err := fs.Snapshot(AllFields | FieldSmaps)
	if err != nil {
		t.Fatal(err)
	}
	if s.Visibility.Listed < len(s.Procs) || len(s.Procs) < 2 {
		t.Fatalf("Visibility %+v with %d processes", s.Visibility, len(s.Procs))
	}
	// Real /proc files must all parse: a malformed count here is a parser bug.
	if s.Visibility.Malformed != 0 {
		for _, p := range s.Procs {
			if p.Malformed != 0 {
				t.Errorf("pid %d (%s): malformed %v", p.ID.PID, p.Comm, p.Malformed)
			}
		}
		t.Errorf("Visibility.Malformed = %d on the live /proc", s.Visibility.Malformed)
	}

	me := s.Process(os.Getpid())
	if me == nil {
		t.Fatalf("own pid %d not in the snapshot", os.Getpid())
	}
	// State is the main thread's, which may sleep while another thread reads.
	if me.PPID != os.Getppid() || me.Zombie() || me.Kernel || me.Threads < 1 || me.RSSBytes == 0 || me.Age(time.Now()) < 0 {
		t.Errorf("own process: ppid %d (want %d), state %c, kernel %v, threads %d, RSS %d, start %v",
			me.PPID, os.Getppid(), me.State, me.Kernel, me.Threads, me.RSSBytes, me.Start)
	}
	if me.Read&FieldStatus != 0 && me.RealUID != os.Getuid() {
		t.Errorf("own uid %d; want %d", me.RealUID, os.Getuid())
	}
	// Our own io and smaps_rollup are always readable to us.
	if me.Read&(FieldIO|FieldSmaps|FieldCmdline|FieldExe) != FieldIO|FieldSmaps|FieldCmdline|FieldExe || me.Smaps.PSSBytes == 0 || me.FDs < 3 {
		t.Errorf("own process: Read %v Denied %v, PSS %d, fds %d", me.Read, me.Denied, me.Smaps.PSSBytes, me.FDs)
	}

	p := s.Process(child.Process.Pid)
	if p == nil {
		t.Fatalf("child %d not in the snapshot", child.Process.Pid)
	}
	if p.PPID != os.Getpid() || p.Comm != "sleep" || !slices.Equal(p.Cmdline, []string{"sleep", "60"}) {
		t.Errorf("child: ppid %d comm %q cmdline %q; want ppid %d, sleep 60", p.PPID, p.Comm, p.Cmdline, os.Getpid())
	}
	// The kernel truncates btime to whole seconds and starttime to ticks,
	// so Start may be up to ~1.01 s early; allow 2 s for clock slewing.
	if p.Start.Before(before.Add(-2*time.Second)) || p.Start.After(after.Add(time.Second)) {
		t.Errorf("child start %v; want between %v and %v", p.Start, before, after)
	}
	if anc := pids(s.Ancestors(p.ID.PID)); len(anc) == 0 || anc[0] != os.Getpid() {
		t.Errorf("child's ancestors %v do not start with us (%d)", anc, os.Getpid())
	}
	if !slices.Contains(pids(s.Descendants(os.Getpid())), p.ID.PID) {
		t.Error("child not among our descendants")
	}
	if got := s.Lookup(p.ID); got != p {
		t.Error("Lookup(child's ProcID) did not find it")
	}
}

// waitCmdline waits up to a minute (a hang guard) until pid's command
// line is set.
func waitCmdline(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(b) > 0 {
			return
		}
	}
	t.Fatalf("pid %d: no command line after a minute", pid)
}
