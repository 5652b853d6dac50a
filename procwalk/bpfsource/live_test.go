//go:build linux

package bpfsource

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// live_test.go checks the BPF source against the /proc source on the live
// host. Gated: PROCWALK_INTEGRATION=1 (set by .ci/run), and a host where
// the source is allowed (root or CAP_BPF+CAP_PERFMON, BTF, Linux 5.19+).
// Where it is allowed but fails to load, the tests skip saying why (a
// sandbox that refuses bpf(2)), except in CI (CI=true), where they fail.

func liveSource(t *testing.T) *Source {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("loads a BPF program and reads the live host: set PROCWALK_INTEGRATION=1")
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := Allowed(fs); err != nil {
		t.Skipf("the BPF source is not allowed here: %v", err)
	}
	s, err := Open(fs)
	if err != nil {
		// Allowed found root (or CAP_BPF+CAP_PERFMON), the kernel's BTF and
		// Linux 5.19+: in CI the source must load there, and a skip would
		// pass unseen.
		if os.Getenv("CI") == "true" {
			t.Fatalf("the BPF source is allowed here but failed to load (CI=true: a failure, not a skip): %v", err)
		}
		t.Skipf("the BPF source cannot load here: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startWeird starts a sleep whose comm is "a) b\n(x": a copy of sleep by
// that name. The kernel takes comm from the file name.
func startWeird(t *testing.T) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep to copy")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a) b\n(x")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Start returns once the exec began; the kernel sets the command line
	// a moment later, which a loaded machine can stretch.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: no command line after a minute", cmd.Process.Pid)
		}
	}
	return cmd
}

// faults reads minflt and majflt (stat fields 10 and 12) of every pid.
func faults() map[int][2]uint64 {
	out := make(map[int][2]uint64)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 10 {
			continue
		}
		min, _ := strconv.ParseUint(f[7], 10, 64)
		maj, _ := strconv.ParseUint(f[9], 10, 64)
		out[pid] = [2]uint64{min, maj}
	}
	return out
}

// cgroupIDs maps each pid to the inode of its cgroup v2 directory: the
// cgroup id the kernel gives (kernfs node id).
func cgroupIDs(t *testing.T) map[int]uint64 {
	mount := cgroup2Mount()
	if mount == "" {
		return nil
	}
	out := make(map[int]uint64)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
				var st syscall.Stat_t
				if syscall.Stat(filepath.Join(mount, path), &st) == nil {
					out[pid] = st.Ino
				}
			}
		}
	}
	return out
}

// cgroup2Mount is where the unified hierarchy is mounted, or "".
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" {
				return fields[4]
			}
		}
	}
	return ""
}

// TestParity compares every process the BPF source sees with the /proc
// source's view of it just before and just after (the same ProcID in
// both): identity fields must equal one of the two, counters must lie
// between them, gauges between them within the documented tolerance.
func TestParity(t *testing.T) {
	s := liveSource(t)
	weird := startWeird(t)
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	sc := procwalk.NewScanner(fs)
	time.Sleep(50 * time.Millisecond) // the weird sleep has exec'd

	fBefore, cgBefore := faults(), cgroupIDs(t)
	before, err := sc.Snapshot(procwalk.FieldStatus | procwalk.FieldIO)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.SnapshotSelect(procwalk.FieldIO, procwalk.Selector{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source != Name {
		t.Fatalf("fell back to /proc: %s", snap.SourceNote)
	}
	tot := make(map[int]totals)
	for _, x := range s.totals {
		tot[x.pid] = x
	}
	sc2 := procwalk.NewScanner(fs)
	after, err := sc2.Snapshot(procwalk.FieldStatus | procwalk.FieldIO)
	if err != nil {
		t.Fatal(err)
	}
	fAfter, cgAfter := faults(), cgroupIDs(t)

	// RSS is exact: the iterator sums each counter's per-CPU parts as
	// statm does (get_mm_counter_sum), so a memory gauge that did not move
	// between the /proc reads must equal them to the byte.
	compared, moved, rssEqual, throughout := 0, 0, 0, 0
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if before.Process(p.ID.PID) != nil && after.Process(p.ID.PID) != nil {
			throughout++
		}
		b, a := before.Lookup(p.ID), after.Lookup(p.ID)
		if b == nil || a == nil {
			continue // started or ended during the test
		}
		compared++
		bad := func(field string, got, b, a any) {
			t.Errorf("pid %d (%q) %s: bpf %v, /proc %v then %v", p.ID.PID, p.Comm, field, got, b, a)
		}
		same := func(field string, got, bv, av any) {
			if got != bv && got != av {
				bad(field, got, bv, av)
			}
		}
		same("ppid", p.PPID, b.PPID, a.PPID)
		same("pgrp", p.PGRP, b.PGRP, a.PGRP)
		same("sid", p.SID, b.SID, a.SID)
		same("tty", p.TTY, b.TTY, a.TTY)
		same("kernel", p.Kernel, b.Kernel, a.Kernel)
		same("start", p.Start, b.Start, a.Start)
		same("uid", p.RealUID, b.RealUID, a.RealUID)
		same("euid", p.EffectiveUID, b.EffectiveUID, a.EffectiveUID)
		comm := p.Comm
		if p.Kernel && strings.HasPrefix(b.Comm, comm) {
			// /proc shows a kernel thread's full name and a kworker's
			// current workqueue; the task's comm is their first 15 bytes.
			comm = b.Comm
		}
		// A process that exec'd between the /proc reads may have exec'd
		// more than once (sh -c, then env, then sleep: another package's
		// tests start such chains all the time), and bpf may have read a
		// comm in between: only a comm that held still must match.
		if b.Comm == a.Comm {
			same("comm", comm, b.Comm, a.Comm)
		}

		between := func(field string, got, bv, av, tol float64) bool {
			if got < min(bv, av)-tol || got > max(bv, av)+tol {
				bad(field, got, bv, av)
				return false
			}
			return true
		}
		// CPU: the sum is bracketed (each side truncates to ticks); the
		// user/system split of what ran between the reads may move.
		const tick = 0.01 + 1e-9
		window := a.CPUSeconds() - b.CPUSeconds()
		between("cpu", p.CPUSeconds(), b.CPUSeconds(), a.CPUSeconds(), 2*tick)
		between("utime", p.UserCPUSeconds, b.UserCPUSeconds, a.UserCPUSeconds, window+2*tick)
		between("stime", p.SystemCPUSeconds, b.SystemCPUSeconds, a.SystemCPUSeconds, window+2*tick)
		between("cutime", p.ChildrenUserCPUSeconds, b.ChildrenUserCPUSeconds, a.ChildrenUserCPUSeconds, 0)
		between("cstime", p.ChildrenSystemCPUSeconds, b.ChildrenSystemCPUSeconds, a.ChildrenSystemCPUSeconds, 0)
		between("nvcsw", float64(p.VoluntaryCtxSwitches), float64(b.VoluntaryCtxSwitches), float64(a.VoluntaryCtxSwitches), 0)
		between("nivcsw", float64(p.InvoluntaryCtxSwitches), float64(b.InvoluntaryCtxSwitches), float64(a.InvoluntaryCtxSwitches), 0)
		if b.Read&a.Read&procwalk.FieldIO != 0 { // /proc's io of this process readable both times
			if p.Read&procwalk.FieldIO == 0 {
				bad("io read", p.Read, b.Read, a.Read)
			}
			for _, c := range []struct {
				field         string
				got, bef, aft uint64
			}{
				{"rchar", p.IO.RChar, b.IO.RChar, a.IO.RChar}, {"wchar", p.IO.WChar, b.IO.WChar, a.IO.WChar},
				{"syscr", p.IO.SyscR, b.IO.SyscR, a.IO.SyscR}, {"syscw", p.IO.SyscW, b.IO.SyscW, a.IO.SyscW},
				{"read_bytes", p.IO.ReadBytes, b.IO.ReadBytes, a.IO.ReadBytes},
				{"write_bytes", p.IO.WriteBytes, b.IO.WriteBytes, a.IO.WriteBytes},
				{"cancelled_write_bytes", p.IO.CancelledWriteBytes, b.IO.CancelledWriteBytes, a.IO.CancelledWriteBytes},
			} {
				between(c.field, float64(c.got), float64(c.bef), float64(c.aft), 0)
			}
		}
		tt, fromBPF := tot[p.ID.PID]
		if fb, ok := fBefore[p.ID.PID]; ok && fromBPF {
			if fa, ok := fAfter[p.ID.PID]; ok {
				between("minflt", float64(tt.minFlt), float64(fb[0]), float64(fa[0]), 0)
				between("majflt", float64(tt.majFlt), float64(fb[1]), float64(fa[1]), 0)
			}
		}
		if cb, ok := cgBefore[p.ID.PID]; ok && fromBPF && cb == cgAfter[p.ID.PID] && tt.cgroupID != cb {
			bad("cgroup id", tt.cgroupID, cb, cgAfter[p.ID.PID])
		}

		// Gauges: a process may change them between the reads (a state
		// flips from S to R, a thread starts, memory is mapped); such
		// moves are counted, and must stay few.
		ok := true
		gauge := func(field string, got, bv, av, tol uint64) {
			if got+tol < min(bv, av) || got > max(bv, av)+tol {
				t.Logf("pid %d (%q) %s moved: bpf %v, /proc %v then %v", p.ID.PID, p.Comm, field, got, bv, av)
				ok = false
			}
		}
		gauge("threads", uint64(p.Threads), uint64(b.Threads), uint64(a.Threads), 0)
		gauge("vsize", p.VSizeBytes, b.VSizeBytes, a.VSizeBytes, 0)
		gauge("text", p.TextBytes, b.TextBytes, a.TextBytes, 0)
		gauge("data", p.DataBytes, b.DataBytes, a.DataBytes, 0)
		if b.StartStack != 0 { // /proc hides it from a reader that may not trace the process
			gauge("start stack", p.StartStack, b.StartStack, a.StartStack, 0)
		}
		gauge("rss", p.RSSBytes, b.RSSBytes, a.RSSBytes, 0)
		gauge("shared", p.SharedBytes, b.SharedBytes, a.SharedBytes, 0)
		gauge("swap", p.SwapBytes, b.SwapBytes, a.SwapBytes, 0)
		if b.RSSBytes == a.RSSBytes && b.SharedBytes == a.SharedBytes {
			// Equal in both /proc reads, it may still have moved and
			// come back between them (a busy process maps a page and
			// unmaps it): counted as moved, and moves must stay few. A
			// wrong sum would differ for most processes.
			if p.RSSBytes != b.RSSBytes || p.SharedBytes != b.SharedBytes {
				t.Logf("pid %d (%q) rss/shared moved and back: bpf %v, /proc %v then", p.ID.PID, p.Comm,
					[2]uint64{p.RSSBytes, p.SharedBytes}, [2]uint64{b.RSSBytes, b.SharedBytes})
				ok = false
			} else {
				rssEqual++
			}
		}
		if p.State != b.State && p.State != a.State {
			t.Logf("pid %d (%q) state moved: bpf %c, /proc %c then %c", p.ID.PID, p.Comm, p.State, b.State, a.State)
			ok = false
		}
		if !ok {
			moved++
		}
	}
	// Every process in both /proc scans was there throughout: the BPF
	// source must have seen it.
	for i := range before.Procs {
		id := before.Procs[i].ID
		if after.Lookup(id) != nil && snap.Lookup(id) == nil {
			t.Errorf("pid %d (%q) seen by /proc before and after, missed by bpf", id.PID, before.Procs[i].Comm)
		}
	}
	if w := snap.Process(weird.Process.Pid); w == nil || w.Comm != "a) b\n(x" {
		t.Errorf("the process named \"a) b\\n(x\": bpf saw %+v", w)
	}
	t.Logf("%d processes compared, %d with a gauge that moved between the reads, %d with RSS and shared equal to statm, %d with RSS lacking its per-CPU parts",
		compared, moved, rssEqual, s.rssPartial)
	// Of the pids all three reads saw, each the same process unless its
	// pid was reused meanwhile; the others started or ended during the
	// test, by the thousand when another package's fork storm runs.
	if compared < throughout*9/10 {
		t.Errorf("only %d of the %d pids all three reads saw compared: identities (pid, start ticks) differ", compared, throughout)
	}
	if moved > max(5, compared/50) {
		t.Errorf("%d of %d processes moved: more than 2%%", moved, compared)
	}
}

// TestMonitorReadsOptionalFields drives the source from a Monitor with a
// Selector: the optional fields come from /proc for the processes picked.
func TestMonitorReadsOptionalFields(t *testing.T) {
	s := liveSource(t)
	weird := startWeird(t)
	time.Sleep(50 * time.Millisecond)
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	pick := procwalk.Selector{Fields: procwalk.FieldCmdline, Select: func(p *procwalk.Process) procwalk.Fields {
		if p.ID.PID == weird.Process.Pid {
			return procwalk.FieldCmdline
		}
		return 0
	}}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{Source: s, Fields: procwalk.FieldCwd}, stage{pick})
	snap, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Process(weird.Process.Pid)
	if p == nil {
		t.Fatal("the test's own sleep is missing")
	}
	if p.Read&procwalk.FieldCmdline == 0 || len(p.Cmdline) != 2 || p.Cmdline[1] != "60" {
		t.Errorf("cmdline of the selected process: read %v, %q", p.Read, p.Cmdline)
	}
	wd, _ := os.Getwd()
	if p.Read&procwalk.FieldCwd == 0 || p.Cwd != wd {
		t.Errorf("cwd: read %v, %q, want %q", p.Read, p.Cwd, wd)
	}
	if other := snap.Process(1); other != nil && other.Read&procwalk.FieldCmdline != 0 {
		t.Errorf("pid 1's cmdline was read, though not selected")
	}
	status := procwalk.FieldStatus | procwalk.FieldOwner | procwalk.FieldSwap
	if !s.conv.statusOK {
		status = 0
	}
	// status's values are every process's with the iterator: the snapshot
	// says so (a session's swap was unknown while each member's was not).
	if snap.Selected != procwalk.FieldCmdline || snap.Fields != procwalk.FieldCwd|status {
		t.Errorf("snapshot fields %v selected %v, want cwd (and %v) and cmdline", snap.Fields, snap.Selected, status)
	}
}

type stage struct{ sel procwalk.Selector }

func (s stage) Plan() (procwalk.Fields, procwalk.Selector) { return 0, s.sel }
func (stage) Prepare(procwalk.Fields) func()               { return nil }

// TestChurn gathers while processes fork and exit as fast as they can:
// every snapshot is whole (sorted unique pids, a tree) and each process
// still alive afterwards has the identity /proc gives it.
func TestChurn(t *testing.T) {
	s := liveSource(t)
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	forks := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			// sh forks a child of its own: two processes born and gone.
			if exec.Command("sh", "-c", "true | true").Run() == nil {
				forks++
			}
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	for range 30 {
		snap, err := s.SnapshotSelect(0, procwalk.Selector{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(snap.Procs); i++ {
			if snap.Procs[i].ID.PID <= snap.Procs[i-1].ID.PID {
				t.Fatalf("pids out of order or repeated: %d after %d", snap.Procs[i].ID.PID, snap.Procs[i-1].ID.PID)
			}
		}
		after, err := procwalk.NewScanner(fs).Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range snap.Procs {
			p := &snap.Procs[i]
			if q := after.Process(p.ID.PID); q != nil && q.ID == p.ID && q.PPID != p.PPID && snap.Process(q.PPID) != nil {
				// Reparenting to a subreaper is a real change; a ppid
				// naming a process both saw, the same one (not a reuse
				// of its pid) and not exited (a zombie's children are
				// reparented when it exits), is not.
				if parent, was := after.Process(p.PPID), snap.Process(p.PPID); parent != nil && was != nil && parent.ID == was.ID && !parent.Zombie() {
					t.Errorf("pid %d: ppid %d by bpf, %d by /proc", p.ID.PID, p.PPID, q.PPID)
				}
			}
			if p.Comm == "" && !p.Zombie() {
				t.Errorf("pid %d has no comm", p.ID.PID)
			}
		}
		if len(snap.Children(1)) == 0 && snap.Process(1) != nil {
			t.Errorf("pid 1 has no children in the tree")
		}
		s.Recycle(snap)
	}
	cancel()
	wg.Wait()
	if forks < 10 {
		t.Logf("only %d forks during the gathers", forks)
	}
	t.Logf("%d fork pipelines ran during 30 gathers", forks)
}

// TestPidNamespace runs the test binary as pid 1 of a new pid namespace
// (unshare --pid --fork --mount-proc, which mounts that namespace's /proc):
// there, the BPF source must see exactly what /proc shows, with pids of
// that namespace.
func TestPidNamespace(t *testing.T) {
	if os.Getenv("BPFSOURCE_IN_PIDNS") == "1" {
		pidNamespaceChild(t)
		return
	}
	liveSource(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	exe, _ := os.Executable()
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", exe, "-test.run=^TestPidNamespace$", "-test.v")
	cmd.Env = append(os.Environ(), "BPFSOURCE_IN_PIDNS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in the namespace:\n%s", out)
	if err != nil {
		if bytes.Contains(out, []byte("unshare failed")) {
			t.Skipf("cannot make a pid namespace here: %s", out)
		}
		t.Fatalf("the test in the pid namespace failed: %v", err)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestPidNamespace")) {
		t.Fatal("the test in the pid namespace did not pass")
	}
}

func pidNamespaceChild(t *testing.T) {
	if os.Getpid() != 1 {
		t.Fatalf("not pid 1 of a new namespace: pid %d", os.Getpid())
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(fs)
	if err != nil {
		t.Fatalf("loading in the namespace: %v", err)
	}
	defer s.Close()
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	time.Sleep(50 * time.Millisecond)
	snap, err := s.SnapshotSelect(0, procwalk.Selector{})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := procwalk.NewScanner(fs).Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, p := range snap.Procs {
		got = append(got, fmt.Sprintf("%v ppid %d pgrp %d sid %d %q", p.ID, p.PPID, p.PGRP, p.SID, p.Comm))
	}
	for _, p := range proc.Procs {
		want = append(want, fmt.Sprintf("%v ppid %d pgrp %d sid %d %q", p.ID, p.PPID, p.PGRP, p.SID, p.Comm))
	}
	t.Logf("bpf:   %q\n/proc: %q", got, want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the namespace's processes differ")
	}
	if p := snap.Process(sleep.Process.Pid); p == nil || p.PPID != 1 {
		t.Errorf("the sleep (pid %d here) not seen with ppid 1: %+v", sleep.Process.Pid, p)
	}
	if p := snap.Process(1); p == nil || p.PPID != 0 {
		t.Errorf("pid 1's parent is outside the namespace: want ppid 0, got %+v", p)
	}
	if len(snap.Procs) > 5 {
		t.Errorf("%d processes seen from a namespace holding 2", len(snap.Procs))
	}
}
