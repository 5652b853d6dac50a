//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/plugin"
)

// stuckread_integration_test.go: point 5 of issue 14 on a real kernel. A
// copy of the fixture /proc where a process's cmdline is a FUSE file whose
// read never returns (stuckfile_test.go): the read blocks in the kernel as
// one of a real cmdline does behind a stuck mmap lock, O_NONBLOCK or not
// (a FIFO does not block procwalk: TestFIFOInFakeRootDoesNotHang).

// stuckPID is the fixture process whose cmdline blocks: python3 -m http.server.
const stuckPID = "120"

// stuckRoot copies the fixture /proc and mounts one stuck file over the
// cmdline of the first of pids. Every other file of pids that procwalk may
// read, but stat and statm, is a symlink to it: whatever a command reads
// first of such a process blocks (each open of it is a read of its own).
func stuckRoot(t *testing.T, pids ...string) (string, *stuckFile) {
	t.Helper()
	root := copyTree(t, fixtureProc)
	stuck := filepath.Join(root, pids[0], "cmdline")
	f := mountStuckFile(t, stuck)
	for i, pid := range pids {
		for _, name := range []string{"cmdline", "status", "io", "cgroup", "smaps_rollup", "oom_score", "environ"} {
			link := filepath.Join(root, pid, name)
			if i == 0 && name == "cmdline" {
				continue
			}
			if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if err := os.Symlink(stuck, link); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root, f
}

// stuckRun is procwalk started over a stuck root, its output in files (a
// process with a blocked thread keeps its pipes open after it exits).
type stuckRun struct {
	cmd            *exec.Cmd
	stdout, stderr string
}

func startStuck(t *testing.T, f *stuckFile, stdin io.Reader, bin string, args ...string) *stuckRun {
	t.Helper()
	dir := t.TempDir()
	r := &stuckRun{stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr")}
	out, err := os.Create(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := os.Create(r.stderr)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = stdin, out, errs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	errs.Close()
	t.Cleanup(func() {
		// Release first: a thread blocked in a FUSE read outlives SIGKILL.
		f.Release()
		r.cmd.Process.Kill()
		r.cmd.Wait()
	})
	return r
}

func (r *stuckRun) output(t *testing.T) (stdout, stderr string) {
	t.Helper()
	o, err := os.ReadFile(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile(r.stderr)
	if err != nil {
		t.Fatal(err)
	}
	return string(o), string(e)
}

// exited waits until procwalk has exited as far as the kernel lets it: no
// thread of it is left but those blocked in the kernel (state D: a read of
// the stuck file, which not even SIGKILL ends) and an exited main thread
// (Z). Which thread blocks is the Go scheduler's choice, the main one
// included, so the main thread's state alone does not tell.
func (r *stuckRun) exited(t *testing.T, within time.Duration) bool {
	t.Helper()
	tasks := fmt.Sprintf("/proc/%d/task", r.cmd.Process.Pid)
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if onlyBlocked(tasks) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// onlyBlocked reports whether every thread listed under tasks is in state
// D, Z or X (or there are none left).
func onlyBlocked(tasks string) bool {
	entries, err := os.ReadDir(tasks)
	if err != nil {
		return true // gone
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(tasks, e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			return false
		}
		switch b[i+2] {
		case 'D', 'Z', 'X':
		default:
			return false
		}
	}
	return true
}

// wait releases the stuck reads and returns how procwalk ended.
func (r *stuckRun) wait(t *testing.T, f *stuckFile) *exec.ExitError {
	t.Helper()
	f.Release()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return ee
	case <-time.After(60 * time.Second):
		t.Fatal("procwalk did not end within 60 s of the stuck reads' release")
		return nil
	}
}

// TestIntegrationStuckReadOneShot: ps and sessions over a root where one
// process's cmdline read blocks for good end on their own, exit 0, print
// every other process (and that one, from stat and statm) and say that a
// read was blocked, all while the read is still blocked.
func TestIntegrationStuckReadOneShot(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, args := range [][]string{{"ps"}, {"sessions", "--tmux-socket", "/nonexistent/tmux"}} {
		cmd := args[0]
		t.Run(cmd, func(t *testing.T) {
			root, f := stuckRoot(t, stuckPID)
			r := startStuck(t, f, nil, bin, append(args, "--proc", root, "--passwd", fixturePasswd)...)
			if !r.exited(t, 120*time.Second) {
				t.Fatalf("procwalk %s did not end within 120 s with a read blocked", cmd)
			}
			if n := f.Reads(); n != 1 {
				t.Errorf("%d reads of the stuck file, want 1", n)
			}
			stdout, stderr := r.output(t)
			if ee := r.wait(t, f); ee != nil {
				t.Fatalf("exit %v, want 0:\n%s%s", ee, stdout, stderr)
			}
			if !strings.Contains(stderr, "1 process with a read blocked past 2s") {
				t.Errorf("stderr does not say a read was blocked:\n%s", stderr)
			}
			want := []string{"uid 1000"} // the user session of every process but 120 and 1
			if cmd == "ps" {
				// The others with their command lines; 120 from stat and
				// statm, its command line unknown, shown as [comm].
				want = []string{"make -j2", "tmux new-session -d -s work", "/sbin/init splash", "[python3]"}
			}
			for _, w := range want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// kill --pss reads its targets' smaps_rollup after the plan's scan,
// bounded the same way: with the target's files stuck, the dry run ends,
// reads the stuck file once (the scan's read; the PSS read skips a process
// whose read is still blocked) and still names the target.
func TestIntegrationStuckReadKillPSS(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	root, f := stuckRoot(t, stuckPID)
	r := startStuck(t, f, nil, bin, "kill", "--dry-run", "--pss", "--proc", root, "--passwd", fixturePasswd, stuckPID)
	if !r.exited(t, 120*time.Second) {
		t.Fatal("procwalk kill --pss did not end within 120 s with a read blocked")
	}
	if n := f.Reads(); n != 1 {
		t.Errorf("%d reads of the stuck file, want 1", n)
	}
	stdout, stderr := r.output(t)
	if ee := r.wait(t, f); ee != nil {
		t.Fatalf("exit %v, want 0:\n%s%s", ee, stdout, stderr)
	}
	if !strings.Contains(stdout+stderr, "pid "+stuckPID+" (python3)") {
		t.Errorf("the dry run does not name pid %s:\n%s%s", stuckPID, stdout, stderr)
	}
}

// TestIntegrationStuckReadExecd: telegraf --execd over the same root
// answers every stdin line with a valid batch that counts the process in
// processes_timed_out, and blocks one thread in all, not one per gather:
// the stuck process is not read again while its read is still blocked.
func TestIntegrationStuckReadExecd(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	root, f := stuckRoot(t, stuckPID)
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	r := startStuck(t, f, stdinR, bin, "telegraf", "--execd", "--proc", root, "--passwd", fixturePasswd,
		"--session-kinds", "user", "--tmux-socket", "/nonexistent/tmux")
	stdinR.Close()
	out, err := os.Open(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	lines := bufio.NewReader(out)
	// batch reads the file procwalk writes to until the self-metrics line.
	batch := func(n int) string {
		var b strings.Builder
		var partial string
		for deadline := time.Now().Add(120 * time.Second); ; {
			line, err := lines.ReadString('\n')
			partial += line
			if err == io.EOF {
				if time.Now().After(deadline) {
					_, stderr := r.output(t)
					t.Fatalf("gather %d: no complete batch within 120 s; so far:\n%s%s\nstderr:\n%s", n, b.String(), partial, stderr)
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(partial)
			if strings.HasPrefix(partial, plugin.MeasurementSelf+",") {
				return b.String()
			}
			partial = ""
		}
	}
	const gathers = 6
	for n := 1; n <= gathers; n++ {
		io.WriteString(stdin, "\n")
		got := batch(n)
		measurements(t, got) // every line valid line protocol
		self := got[strings.LastIndex(got[:len(got)-1], "\n")+1:]
		if !strings.Contains(self, "processes_timed_out=1i") {
			t.Errorf("gather %d: self-metrics do not count the stuck process: %s", n, self)
		}
		if !strings.Contains(got, "session=dev") {
			t.Errorf("gather %d: no session of the other processes:\n%s", n, got)
		}
	}
	if n := f.Reads(); n != 1 {
		t.Errorf("%d reads of the stuck file blocked over %d gathers, want 1", n, gathers)
	}
	stdin.Close()
	if !r.exited(t, 60*time.Second) {
		t.Fatal("procwalk telegraf --execd did not end within 60 s of stdin EOF")
	}
	if ee := r.wait(t, f); ee != nil {
		_, stderr := r.output(t)
		t.Errorf("exit %v after stdin EOF, want 0; stderr:\n%s", ee, stderr)
	}
}

// TestIntegrationStuckReadSecondSignal: while a read is blocked, the first
// SIGTERM asks for a clean stop, which waits for the read's deadline; a
// later one ends procwalk at once, by the signal. Ten processes block, so
// a clean stop would take ten read deadlines (20 s or more): procwalk must
// die of SIGTERM before it has blocked on them all.
func TestIntegrationStuckReadSecondSignal(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	pids := []string{stuckPID, "1", "100", "101", "102", "110", "111", "200", "201", "303"}
	root, f := stuckRoot(t, pids...)
	r := startStuck(t, f, nil, bin, "ps", "--proc", root, "--passwd", fixturePasswd)
	for deadline := time.Now().Add(60 * time.Second); f.Reads() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("procwalk ps did not reach the stuck file within 60 s")
		}
	}
	// The first signal may reach procwalk before its handler is reset to
	// the default: send one every 100 ms until procwalk's main thread ends.
	sent := 0
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r.exited(t, 0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("procwalk ps still runs 60 s after the first of %d SIGTERMs", sent)
		}
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	reads := f.Reads()
	ee := r.wait(t, f)
	t.Logf("%d SIGTERMs sent; %d of %d stuck reads reached", sent, reads, len(pids))
	if sent < 2 {
		t.Errorf("procwalk ended after %d SIGTERM, want the first to ask for a clean stop", sent)
	}
	if ee == nil {
		t.Fatal("procwalk exited 0, want death by SIGTERM")
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("procwalk ended with %v, want death by SIGTERM", ee)
	}
	if reads == len(pids) {
		t.Errorf("procwalk reached all %d stuck reads before it died: the second SIGTERM did not end it at once", reads)
	}
}

// TestIntegrationStuckEnviron: sessions reads an agent's environ (its
// HOME) outside the scan; a read of it that blocks for good is bounded
// too, and the agent is still listed.
func TestIntegrationStuckEnviron(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	root := copyTree(t, sessionsProc)
	f := mountStuckFile(t, filepath.Join(root, "105", "environ")) // claude
	r := startStuck(t, f, nil, bin, "sessions", "--kind", "agent", "--proc", root, "--passwd", fixturePasswd,
		"--tmux-socket", "/nonexistent/tmux")
	if !r.exited(t, 120*time.Second) {
		t.Fatalf("procwalk sessions did not end within 120 s with an environ read blocked (%d reads blocked)", f.Reads())
	}
	reads := f.Reads()
	stdout, stderr := r.output(t)
	if ee := r.wait(t, f); ee != nil {
		t.Fatalf("exit %v, want 0:\n%s%s", ee, stdout, stderr)
	}
	if reads != 1 {
		t.Errorf("%d reads of the stuck environ, want 1", reads)
	}
	if !strings.Contains(stdout, "claude") {
		t.Errorf("the agent is not listed:\n%s%s", stdout, stderr)
	}
}
