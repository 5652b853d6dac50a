//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// These tests signal real processes, every one started by the test itself.
// They run with PROCWALK_INTEGRATION=1 (set by .ci/run).

func needIntegration(t *testing.T) {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("signals real processes: set PROCWALK_INTEGRATION=1")
	}
}

// startOwn starts a process of our own and makes sure it is gone and
// reaped when the test ends.
func startOwn(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // our own child; harmless once it has exited
		cmd.Wait()
	})
	return cmd
}

// removeTestCgroup removes a cgroup the test made and started its processes
// in, once they are gone: a process killed a moment ago keeps it busy until
// its exit is done, and one a failed test left running is killed through
// the cgroup (every process there is the test's). It fails the test, naming
// dir, rather than leave the cgroup behind: a leftover sub-cgroup makes
// every later gather on the host walk that hierarchy.
func removeTestCgroup(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	killed := false
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		waited := time.Since(start)
		if waited > 30*time.Second {
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			t.Errorf("cannot remove the test's cgroup %s: %v; its cgroup.procs: %q", dir, err, procs)
			return
		}
		if waited > 5*time.Second && !killed {
			os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
			killed = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveID reads the ProcID of pid from the live /proc.
func liveID(t *testing.T, pid int) procwalk.ProcID {
	t.Helper()
	st := liveStat(t, pid)
	return procwalk.ProcID{PID: pid, StartTicks: st.StartTicks}
}

func liveStat(t *testing.T, pid int) procwalk.Stat {
	t.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitComm waits until pid's comm is comm (an exec has happened).
func waitComm(t *testing.T, pid int, comm string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if liveStat(t, pid).Comm == comm {
			return
		}
	}
	t.Fatalf("pid %d never became %s", pid, comm)
}

// liveKiller is a Killer of the live /proc, with a sentinel of its own
// unless cfg names one.
func liveKiller(t *testing.T, cfg Config) *Killer {
	t.Helper()
	if cfg.Sentinel == nil {
		cfg.Sentinel = testSentinel(t, os.Stderr)
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKiller(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// exitSignal is the signal that ended cmd, after Wait.
func exitSignal(t *testing.T, cmd *exec.Cmd) syscall.Signal {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v, want death by a signal", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("exited with %d, want death by a signal", ws.ExitStatus())
	}
	return ws.Signal()
}

func TestLiveTermIgnoredIsKilledAfterGrace(t *testing.T) {
	needIntegration(t)
	// exec: the process signalled is the very one ignoring TERM (an ignored
	// disposition survives exec), not a shell waiting for a child.
	cmd := startOwn(t, "sh", "-c", `trap "" TERM; exec sleep 100`)
	waitComm(t, cmd.Process.Pid, "sleep")
	if ign := liveSigIgn(t, cmd.Process.Pid); ign&(1<<(syscall.SIGTERM-1)) == 0 {
		t.Fatalf("SigIgn %x: the target does not ignore TERM", ign)
	}
	const grace = 300 * time.Millisecond
	o := liveKiller(t, Config{Grace: grace, Requester: "test"}).Terminate(context.Background(), liveID(t, cmd.Process.Pid))
	if o.Result != ResultKilled || !slices.Equal(o.Signals, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}) {
		t.Fatalf("got %v %v (%v), want killed after TERM,KILL", o.Result, signalNames(o.Signals), o.Err)
	}
	if o.KillAfter < grace {
		t.Errorf("KILL sent %v after TERM, before the %v grace", o.KillAfter, grace)
	}
	if sig := exitSignal(t, cmd); sig != syscall.SIGKILL {
		t.Errorf("died of %v, want KILL", sig)
	}
}

func liveSigIgn(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no SigIgn line")
	return 0
}

func TestLiveExitsOnTerm(t *testing.T) {
	needIntegration(t)
	cmd := startOwn(t, "sleep", "100")
	k := liveKiller(t, Config{Grace: time.Minute}) // a hang guard: sleep dies of TERM
	id := liveID(t, cmd.Process.Pid)
	start := time.Now()
	o := k.Terminate(context.Background(), id)
	end := time.Now()
	if o.Result != ResultExited || !slices.Equal(o.Signals, []syscall.Signal{syscall.SIGTERM}) {
		t.Fatalf("got %v %v (%v), want exited after TERM", o.Result, signalNames(o.Signals), o.Err)
	}
	// The order of events, on the monotonic clock whatever the load: the
	// signal went out during the call, and the exit, GoneAfter later, was
	// seen before the call returned. An unset SignalledAt or GoneAfter, or
	// one measured from anything but the signal or in the wrong unit,
	// breaks it.
	seen := o.SignalledAt.Add(o.GoneAfter)
	if o.SignalledAt.Before(start) || o.GoneAfter <= 0 || seen.After(end) {
		t.Errorf("TERM sent at %v after the call began, the exit seen %v after it, the call returned after %v",
			o.SignalledAt.Sub(start), seen.Sub(start), end.Sub(start))
	}
	if sig := exitSignal(t, cmd); sig != syscall.SIGTERM {
		t.Errorf("died of %v, want TERM", sig)
	}
}

func TestLiveDryRunSignalsNothing(t *testing.T) {
	needIntegration(t)
	cmd := startOwn(t, "sleep", "100")
	id := liveID(t, cmd.Process.Pid)
	r, err := liveKiller(t, Config{DryRun: true, Signal: syscall.SIGKILL}).TerminateScope(context.Background(), TreeScope{Root: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultDryRun || r.Outcomes[0].ID != id {
		t.Fatalf("outcomes %+v, want one dry run for %v", r.Outcomes, id)
	}
	time.Sleep(100 * time.Millisecond)
	if st := liveStat(t, id.PID); st.StartTicks != id.StartTicks || st.State == 'Z' {
		t.Fatalf("target state %c after a dry run", st.State)
	}
}

// A dry run: the refusal is the plan's, the same for a real run, and a
// broken rule must not signal the test's parent or init.
func TestLiveSelfAndAncestorsRefused(t *testing.T) {
	needIntegration(t)
	k := liveKiller(t, Config{Force: true, DryRun: true})
	for _, pid := range []int{os.Getpid(), os.Getppid(), 1} {
		o := k.Terminate(context.Background(), liveID(t, pid))
		var pe *ProtectedError
		if o.Result != ResultProtected || !errors.As(o.Err, &pe) || !pe.Hard || len(o.Signals) != 0 {
			t.Errorf("pid %d: %v %v signals %v, want a hard refusal and nothing sent", pid, o.Result, o.Err, o.Signals)
		}
	}
}

func TestLiveTreeCatchesGrandchildForkedDuringTermination(t *testing.T) {
	needIntegration(t)
	// The shell answers the first signal (INT) by forking another sleep and
	// waiting: that grandchild exists only after termination began. sh runs
	// background jobs with INT ignored, so both sleeps outlive INT and
	// need the KILL stage.
	cmd := startOwn(t, "sh", "-c", `trap "sleep 301 & wait" INT; sleep 300 & wait`)
	root := liveID(t, cmd.Process.Pid)
	// Nothing here exits on INT, so the whole grace passes, and the shell
	// must have run its trap by the KILL stage, or there is no grandchild:
	// the grace ends once a re-walk has found it (hooks.graceOver), not on
	// a clock a loaded machine may outrun (it did: a 2 s grace passed with
	// the trap's fork not done). A minute without it fails the test.
	k := liveKiller(t, Config{Signal: syscall.SIGINT, Rescan: 20 * time.Millisecond})
	var graceStart time.Time
	k.hooks.graceOver = func(joined []Target) bool {
		if graceStart.IsZero() {
			graceStart = time.Now()
		}
		if time.Since(graceStart) > time.Minute {
			t.Errorf("no re-walk of the grace found the grandchild in a minute")
			return true
		}
		return len(joined) > 0
	}
	var plan *Plan
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if plan, err = k.Plan(TreeScope{Root: root}); err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(plan.Targets) != 2 {
		t.Fatalf("plan %v, want the shell and its first sleep", plan.Targets)
	}
	r := k.Execute(context.Background(), plan)
	var late []Outcome
	for _, o := range r.Outcomes {
		if !o.Result.Done() {
			t.Errorf("pid %d (%s): %v %v", o.ID.PID, o.Comm, o.Result, o.Err)
		}
		if !slices.ContainsFunc(plan.Targets, func(t Target) bool { return t.ID == o.ID }) {
			late = append(late, o)
		}
	}
	// The grandchild is the shell's fork for `sleep 301 &`: the walk may
	// find it before its exec (a copy of the shell, its command line the
	// shell's), and stopped then, it dies so.
	if len(late) != 1 || late[0].PPID != root.PID || late[0].Result != ResultKilled ||
		!strings.HasPrefix(late[0].Args, "sleep 301") && late[0].Args != strings.Join(cmd.Args, " ") {
		t.Fatalf("late joiners %+v, want the grandchild sleep 301 killed", late)
	}
	// A newcomer gets the first signal with the tree stopped around it.
	if got := signalNames(late[0].Signals); !slices.Equal(got, []string{"STOP", "INT", "CONT", "STOP", "KILL"}) {
		t.Errorf("grandchild got %v, want STOP,INT,CONT,STOP,KILL", got)
	}
	if held, _ := mustFS(t).HoldsMemory(late[0].ID); held {
		t.Errorf("grandchild %v still alive", late[0].ID)
	}
}

func mustFS(t *testing.T) procwalk.FS {
	t.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestLiveWaitReleasedAfterMemoryKill(t *testing.T) {
	needIntegration(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// 200 MiB touched, then a signal that it is in place.
	cmd := exec.Command(py, "-c", "import sys,time\nb=bytearray(200<<20)\nfor i in range(0,len(b),4096): b[i]=1\nprint('ok',flush=True)\ntime.sleep(100)")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 3)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ok\n" {
		t.Fatalf("child did not allocate: %q %v", buf, err)
	}
	id := liveID(t, cmd.Process.Pid)
	fs := mustFS(t)
	if held, err := fs.HoldsMemory(id); !held || err != nil {
		t.Fatalf("HoldsMemory before the kill = %v, %v", held, err)
	}
	o := liveKiller(t, Config{Signal: syscall.SIGKILL}).Terminate(context.Background(), id)
	if o.Result != ResultKilled {
		t.Fatalf("got %v %v", o.Result, o.Err)
	}
	// Not reaped yet: a zombie, which must hold no memory any more.
	if err := WaitReleased(context.Background(), fs, id, time.Minute); err != nil { // a hang guard
		t.Fatal(err)
	}
	if st := liveStat(t, id.PID); st.State != 'Z' || st.RSSPages != 0 {
		t.Errorf("after WaitReleased: state %c rss %d pages, want an empty zombie", st.State, st.RSSPages)
	}
}

func TestLiveCgroupFrozenKill(t *testing.T) {
	needIntegration(t)
	mount := mustFS(t).Cgroup2Mount()
	if mount == "" || os.Geteuid() != 0 {
		t.Skip("needs root and a cgroup2 mount")
	}
	dir := filepath.Join(mount, fmt.Sprintf("procwalk-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() { removeTestCgroup(t, dir) }) // after startOwn's cleanups: LIFO
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		t.Skip("no cgroup.kill (Linux < 5.14)")
	}
	// The shell moves itself into the cgroup, then starts two TERM-ignoring
	// children there.
	cmd := startOwn(t, "sh", "-c", fmt.Sprintf(`trap "" TERM; echo $$ > %s/cgroup.procs; sleep 300 & sleep 300 & wait`, dir))
	cg := "/" + filepath.Base(dir)
	k := liveKiller(t, Config{Grace: 200 * time.Millisecond})
	var plan *Plan
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if plan, err = k.Plan(&CgroupScope{Path: cg}); err != nil {
			t.Fatal(err)
		}
		// Both children must have exec'd sleep: a child planned while it
		// is still a copy of sh is refused as another program once it
		// execs, as identity checks must.
		sleeps := 0
		for _, tg := range plan.Targets {
			if tg.Comm == "sleep" {
				sleeps++
			}
		}
		if len(plan.Targets) >= 3 && sleeps == 2 {
			break
		}
	}
	r := k.Execute(context.Background(), plan)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	// Frozen for each signal, each member signalled through its pidfd:
	// cgroup.kill is never written.
	if !slices.Contains(r.Notes, "froze "+dir+" with cgroup.freeze for SIGKILL") || slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "cgroup.kill") }) {
		t.Errorf("notes %v, want the cgroup frozen for SIGKILL, and no cgroup.kill", r.Notes)
	}
	for _, o := range r.Outcomes {
		if o.Result != ResultKilled {
			t.Errorf("pid %d (%s): %v, want killed", o.ID.PID, o.Comm, o.Result)
		}
	}
	if sig := exitSignal(t, cmd); sig != syscall.SIGKILL {
		t.Errorf("shell died of %v, want KILL", sig)
	}
}

// TestLivePIDReuseRefused re-runs the test binary as pid 1 of a new pid
// namespace (unshare), where it can make the kernel hand out a chosen pid
// through ns_last_pid without racing the rest of the machine.
func TestLivePIDReuseRefused(t *testing.T) {
	needIntegration(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to write ns_last_pid")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux)")
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", os.Args[0], "-test.run=^TestPIDReuseHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PROCWALK_PIDREUSE_HELPER=1")
	out, err := cmd.CombinedOutput()
	t.Logf("helper in a new pid namespace:\n%s", out)
	switch {
	case !strings.Contains(string(out), "=== RUN   TestPIDReuseHelper"):
		t.Skipf("cannot create a pid namespace here (%v): unshare needs CAP_SYS_ADMIN", err)
	case strings.Contains(string(out), "--- SKIP: TestPIDReuseHelper"):
		t.Skip("the helper could not steer pid allocation (see its log)")
	case err != nil:
		t.Fatalf("helper: %v", err)
	case !strings.Contains(string(out), "--- PASS: TestPIDReuseHelper"):
		t.Fatal("helper did not pass")
	}
}

func TestPIDReuseHelper(t *testing.T) {
	if os.Getenv("PROCWALK_PIDREUSE_HELPER") != "1" {
		t.Skip("runs inside TestLivePIDReuseRefused")
	}
	if os.Getpid() != 1 {
		t.Fatalf("helper is pid %d, want 1 in a fresh pid namespace", os.Getpid())
	}
	k := liveKiller(t, Config{Grace: time.Second})
	fs := mustFS(t)

	a := startOwn(t, "sleep", "100")
	old := liveID(t, a.Process.Pid)
	if o := k.Terminate(context.Background(), old); o.Result != ResultExited {
		t.Fatalf("first kill: %v %v", o.Result, o.Err)
	}
	a.Wait() // reaped: the pid is free
	// A new process in the same clock tick would share the start time too;
	// real pid reuse takes a whole pid space cycle.
	time.Sleep(50 * time.Millisecond)

	var b *exec.Cmd
	for try := 0; try < 5 && (b == nil || b.Process.Pid != old.PID); try++ {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(old.PID-1)), 0); err != nil {
			t.Skipf("cannot steer pid allocation: %v", err) // a read-only /proc/sys in some containers
		}
		b = startOwn(t, "sleep", "100")
	}
	if b.Process.Pid != old.PID {
		t.Fatalf("could not get pid %d again (got %d)", old.PID, b.Process.Pid)
	}
	reused := liveID(t, b.Process.Pid)
	t.Logf("pid %d reused: %v then %v", old.PID, old, reused)
	if reused == old {
		t.Fatal("same start tick: cannot tell the processes apart")
	}

	// The low-level handle refuses after opening the pidfd...
	if h, err := OpenProc(fs, old); !errors.Is(err, ErrIdentityChanged) {
		if h != nil {
			h.Close()
		}
		t.Fatalf("OpenProc(old) = %v, want ErrIdentityChanged", err)
	}
	// ... and so do Terminate and a tree kill.
	if o := k.Terminate(context.Background(), old); o.Result != ResultIdentityChanged || len(o.Signals) != 0 {
		t.Fatalf("Terminate(old) = %v %v, want refused_identity", o.Result, o.Err)
	}
	r, err := k.TerminateScope(context.Background(), TreeScope{Root: old})
	if err != nil || !errors.Is(r.Err(), ErrIdentityChanged) {
		t.Fatalf("tree kill of old: %v %v, want refused", err, r.Err())
	}
	time.Sleep(100 * time.Millisecond)
	if st := liveStat(t, reused.PID); st.State == 'Z' || st.StartTicks != reused.StartTicks {
		t.Fatalf("the new process was harmed: state %c", st.State)
	}
	if o := k.Terminate(context.Background(), reused); o.Result != ResultExited {
		t.Fatalf("killing the new process itself: %v %v", o.Result, o.Err)
	}
}

func TestLiveReadProcID(t *testing.T) {
	needIntegration(t)
	cmd := startOwn(t, "sleep", "100")
	id, err := mustFS(t).ReadProcID(cmd.Process.Pid)
	if err != nil || id != liveID(t, cmd.Process.Pid) {
		t.Errorf("ReadProcID = %v, %v; want %v", id, err, liveID(t, cmd.Process.Pid))
	}
	if _, err := mustFS(t).ReadProcID(0); !errors.Is(err, procwalk.ErrBadTarget) {
		t.Errorf("pid 0: %v", err)
	}
}

// The fallback for kernels without pidfd_open: the start time is checked
// right before kill(2), and exit is seen by re-reading stat.
func TestLiveFallbackWithoutPidfd(t *testing.T) {
	needIntegration(t)
	fs := mustFS(t)
	cmd := startOwn(t, "sleep", "100")
	id := liveID(t, cmd.Process.Pid)

	stale := &ProcHandle{ID: procwalk.ProcID{PID: id.PID, StartTicks: id.StartTicks - 1}, fs: fs, pidfd: -1}
	if err := stale.Signal(syscall.SIGTERM); !errors.Is(err, ErrIdentityChanged) {
		t.Fatalf("stale identity: %v, want ErrIdentityChanged", err)
	}
	if stale.Wait(context.Background(), 50*time.Millisecond) != true {
		t.Error("a stale identity should read as exited")
	}
	h := &ProcHandle{ID: id, fs: fs, pidfd: -1}
	if h.Pidfd() || h.Wait(context.Background(), 50*time.Millisecond) {
		t.Fatal("live process reported exited")
	}
	if err := h.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !h.Wait(context.Background(), time.Minute) { // a hang guard
		t.Fatal("exit not seen in a minute")
	}
	if sig := exitSignal(t, cmd); sig != syscall.SIGTERM {
		t.Errorf("died of %v, want TERM (and the stale handle sent nothing)", sig)
	}
}

// nsCgroupHelperEnv names the cgroup (its v2 path) for the test binary
// re-run in a pid namespace by TestLiveCgroupKillFromPidNamespace.
const nsCgroupHelperEnv = "PROCWALK_NS_CGROUP_HELPER"

// TestLiveCgroupKillFromPidNamespace: point 1 of issue 14. A cgroup holds a
// sleeper of the host and one started inside a pid namespace; a kill of
// the cgroup from inside the namespace, where /proc shows only the second
// (cgroup.procs lists the first as 0), must not write cgroup.kill or
// cgroup.freeze: it signals the one target it can see, says why, and the
// host's sleeper lives on.
func TestLiveCgroupKillFromPidNamespace(t *testing.T) {
	if cg := os.Getenv(nsCgroupHelperEnv); cg != "" {
		cgroupKillInNamespace(t, cg)
		return
	}
	needIntegration(t)
	mount := mustFS(t).Cgroup2Mount()
	if mount == "" || os.Geteuid() != 0 {
		t.Skip("needs root and a cgroup2 mount")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare (util-linux)")
	}
	name := fmt.Sprintf("procwalk-test-ns-%d", os.Getpid())
	dir := filepath.Join(mount, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() { removeTestCgroup(t, dir) })
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		t.Skip("no cgroup.kill (Linux < 5.14)")
	}
	host := startOwn(t, "sh", "-c", fmt.Sprintf(`echo $$ > %s/cgroup.procs && exec sleep 300`, dir))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); strings.TrimSpace(string(b)) == strconv.Itoa(host.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the host's sleeper did not join the cgroup within 60 s")
		}
	}
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "--kill-child", os.Args[0],
		"-test.run=^TestLiveCgroupKillFromPidNamespace$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), nsCgroupHelperEnv+"=/"+name)
	out, err := cmd.CombinedOutput()
	t.Logf("in the namespace:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the namespace side failed: %v", err)
	}
	st := liveStat(t, host.Process.Pid)
	if st.State == 'Z' || st.State == 'T' {
		t.Errorf("the host's sleeper is in state %c, want it untouched", st.State)
	}
}

// cgroupKillInNamespace is the namespace side: it starts a sleeper in cg
// and kills cg.
func cgroupKillInNamespace(t *testing.T, cg string) {
	fs := mustFS(t)
	dir := filepath.Join(fs.Cgroup2Mount(), cg)
	inner := startOwn(t, "sh", "-c", fmt.Sprintf(`echo $$ > %s/cgroup.procs && exec sleep 300`, dir))
	k := liveKiller(t, Config{Grace: 5 * time.Second})
	var plan *Plan
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if plan, err = k.Plan(&CgroupScope{Path: cg}); err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) == 1 && plan.Targets[0].Comm == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %+v, want the namespace's sleeper alone", plan.Targets)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	t.Logf("cgroup.procs seen from the namespace: %q", b)
	r := k.Execute(context.Background(), plan)
	notes := strings.Join(r.Notes, "\n")
	if strings.Contains(notes, "wrote 1 to") || strings.Contains(notes, "froze") {
		t.Errorf("wrote to the cgroup with a process outside the namespace in it; notes:\n%s", notes)
	}
	if !strings.Contains(notes, "outside procwalk's pid namespace") {
		t.Errorf("the notes do not say why cgroup.kill was not used:\n%s", notes)
	}
	if len(r.Outcomes) != 1 || !r.Outcomes[0].Result.Done() {
		t.Errorf("outcomes %+v, want the namespace's sleeper ended", r.Outcomes)
	}
	if sig := exitSignal(t, inner); sig != syscall.SIGTERM {
		t.Errorf("the namespace's sleeper died of %v, want SIGTERM", sig)
	}
}

// A tmux pane's process, sent SIGSTOP, is continued by tmux at once (its
// server_child_stopped sends SIGCONT to the pane's process group): it never
// stays stopped. Stopped then says the wait is over rather than have every
// freeze of a pane's tree wait its whole stopWait (a tmux session's kill
// took the grace plus 1 s for it, and a pane's sleeps 0.5 s to go).
func TestLiveTmuxContinuesStoppedPane(t *testing.T) {
	needIntegration(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	// A short directory of our own (unix socket paths are limited to 108
	// bytes), removed with the socket tmux leaves behind.
	dir, err := os.MkdirTemp("", "pwstop")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "s")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", socket, "-f", "/dev/null"}, args...)...).Output()
		if err != nil {
			t.Fatalf("tmux %q: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	t.Cleanup(func() {
		exec.Command(tmux, "-S", socket, "kill-server").Run() // our own server and its pane
		os.RemoveAll(dir)
	})
	run("new-session", "-d", "-s", "stop", "exec sleep 600")
	pid, err := strconv.Atoi(run("display-message", "-p", "-t", "stop", "#{pane_pid}"))
	if err != nil {
		t.Fatal(err)
	}
	waitComm(t, pid, "sleep")
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	h, err := OpenProc(fs, liveID(t, pid))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) leaves SIGSTOP pending before it returns: running with none
	// pending means it stopped and tmux continued it.
	for guard := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st, serr := fs.ReadStat(pid)
		status, perr := fs.ReadStatus(pid)
		if serr != nil || perr != nil {
			t.Fatalf("the pane's sleep went: %v %v", serr, perr)
		}
		if st.State != 'T' && st.State != 't' && status.PendingSignals&(1<<(syscall.SIGSTOP-1)) == 0 {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("tmux never continued its stopped pane (state %c, pending %x): the premise of this test", st.State, status.PendingSignals)
		}
	}
	if !h.Stopped() {
		t.Error("Stopped() = false for a pane tmux continued: a freeze would wait for it in vain")
	}
}
