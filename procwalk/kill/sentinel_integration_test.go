//go:build linux

package kill

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sentinel_integration_test.go: issue 22, class 2. Whatever ends the
// process that stopped a scope or froze a cgroup, the sentinel makes it run
// again. The "procwalk" here is the test binary re-run (TestDieHelper)
// with a real Killer and a real sentinel (the test binary again,
// TestSentinelHelper); its hook reports the moment the scope is stopped,
// and the test then ends it there: SIGKILL, SIGKILL to its process group
// (which the sentinel, in a session of its own, is not in), or the OOM
// killer.

const (
	sentinelHelperEnv = "PROCWALK_SENTINEL_HELPER"
	dieHelperEnv      = "PROCWALK_DIE_HELPER" // "tree <pid>" or "cgroup <path>"
)

// TestSentinelHelper is the sentinel process of the tests.
func TestSentinelHelper(t *testing.T) {
	if os.Getenv(sentinelHelperEnv) != "1" {
		t.Skip("the sentinel process of the kill tests")
	}
	err := ServeSentinel(os.NewFile(3, "sentinel"), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sentinel:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// testSentinel is a sentinel for one test, closed when it ends; what it
// says goes to stderr.
func testSentinel(t *testing.T, stderr *os.File) *Sentinel {
	t.Helper()
	env := append(os.Environ(), sentinelHelperEnv+"=1")
	s := NewSentinel(SentinelCommand{Path: os.Args[0], Args: []string{"-test.run=^TestSentinelHelper$"}, Env: env, Stderr: stderr})
	t.Cleanup(func() { s.Close() })
	return s
}

// TestDieHelper is the "procwalk" that dies: it terminates the scope its
// env names and, once the scope is stopped, says so on fd 3 and waits to
// be killed (or, for the OOM case, allocates until it is).
func TestDieHelper(t *testing.T) {
	spec := os.Getenv(dieHelperEnv)
	if spec == "" {
		t.Skip("the killer that dies in TestLiveNothingStaysStopped")
	}
	kind, arg, _ := strings.Cut(spec, " ")
	oom := strings.HasSuffix(arg, " oom")
	arg = strings.TrimSuffix(arg, " oom")
	report := os.NewFile(3, "report")
	k := liveKiller(t, Config{Grace: time.Minute, Sentinel: testSentinel(t, os.Stderr)})
	k.hooks.stopped = func() {
		fmt.Fprintln(report, "stopped")
		if oom {
			var hog [][]byte
			for {
				b := make([]byte, 16<<20)
				for i := range b {
					b[i] = 1
				}
				hog = append(hog, b)
			}
		}
		// Until killed. Not select{}: with no other goroutine runnable
		// and no timer, Go's runtime reports "all goroutines are asleep
		// - deadlock!" and exits, and the sentinel then continues the
		// tree (or thaws the cgroup) before the test looks at it (failed
		// so, one run in a few).
		for {
			time.Sleep(time.Hour)
		}
	}
	var scope Scope
	switch kind {
	case "tree":
		pid, _ := strconv.Atoi(arg)
		scope = TreeScope{Root: liveID(t, pid)}
	case "cgroup":
		scope = &CgroupScope{Path: arg}
	}
	k.TerminateScope(context.Background(), scope)
	t.Fatal("the execution ended: the hook never ran")
}

// stateOf reads pid's state letter ('?' when gone).
func stateOf(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return '?'
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return '?'
	}
	return s[i+2]
}

// dieHelper starts the dying killer on spec; the returned reader yields
// "stopped" once the scope is stopped.
func dieHelper(t *testing.T, spec string, setup func(*exec.Cmd)) (*exec.Cmd, *bufio.Reader, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDieHelper$", "-test.v")
	cmd.Env = append(os.Environ(), dieHelperEnv+"="+spec)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(r), stderr
}

// waitRunning waits until none of pids is stopped, and returns how long
// that took.
func waitRunning(t *testing.T, pids []int, since time.Time, stderr string) time.Duration {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		stopped := 0
		for _, pid := range pids {
			if s := stateOf(pid); s == 'T' || s == 't' {
				stopped++
			}
		}
		if stopped == 0 {
			return time.Since(since)
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(stderr)
			t.Fatalf("%d of %d processes still stopped 60 s after the killer died; the killer's stderr:\n%s", stopped, len(pids), b)
		}
	}
}

func TestLiveNothingStaysStopped(t *testing.T) {
	needIntegration(t)
	for _, end := range []string{"SIGKILL", "SIGKILL to its process group", "OOM killer"} {
		t.Run("tree stopped, "+end, func(t *testing.T) {
			if end == "OOM killer" && os.Geteuid() != 0 {
				t.Skip("a memory cgroup for the OOM kill needs root")
			}
			if end == "OOM killer" && raceDetector {
				t.Skip("under -race the 256 MiB cgroup holds the killer's shadow memory too; the plain run covers it")
			}
			// A TERM-ignoring shell with three children: stopped, they
			// stay so unless something continues them.
			root := startOwnGroup(t, `trap "" TERM; sleep 300 & sleep 301 & sleep 302 & wait`)
			var pids []int
			for deadline := time.Now().Add(60 * time.Second); len(pids) < 4; time.Sleep(10 * time.Millisecond) {
				pids = append([]int{root.Process.Pid}, childPIDs(t, root.Process.Pid)...)
				if time.Now().After(deadline) {
					t.Fatal("the tree did not start")
				}
			}
			spec := "tree " + strconv.Itoa(root.Process.Pid)
			var setup func(*exec.Cmd)
			var oomDir string
			if end == "OOM killer" {
				spec += " oom"
				setup, oomDir = oomCgroup(t)
			}
			helper, lines, stderr := dieHelper(t, spec, setup)
			if line, err := lines.ReadString('\n'); err != nil || line != "stopped\n" {
				b, _ := os.ReadFile(stderr.Name())
				t.Fatalf("the killer never stopped the tree (%q, %v):\n%s", line, err, b)
			}
			for _, pid := range pids {
				if s := stateOf(pid); s != 'T' {
					t.Fatalf("pid %d in state %c while the killer holds the tree stopped", pid, s)
				}
			}
			switch end {
			case "SIGKILL":
				helper.Process.Kill()
			case "SIGKILL to its process group":
				syscall.Kill(-helper.Process.Pid, syscall.SIGKILL)
			}
			err := helper.Wait()
			died := time.Now()
			// The sentinel shares the killer's memory cgroup. Where a
			// process may not lower its oom_score_adj (the sentinel's
			// -1000: root without CAP_SYS_RESOURCE, some sandboxes), a
			// second OOM kill in the cgroup, while the killer's memory is
			// still being freed, may take the sentinel too (the README's
			// limit): before its SIGCONT (the tree stays stopped: not
			// what this case tests), or after it, before its message,
			// whose write needs memory of the cgroup too (seen under
			// load: the tree ran again, no message). So the OOM case
			// waits until the sentinel is gone, when its work and its
			// word are final, and asks the cgroup's OOM kill count
			// whether anything but the killer died of it.
			sentinelOOMKilled, kills := false, 0
			if oomDir != "" {
				for deadline := time.Now().Add(60 * time.Second); len(cgroupPIDs(t, oomDir)) > 0; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the sentinel still runs in %s 60 s after the killer died: %v", oomDir, cgroupPIDs(t, oomDir))
					}
				}
				kills = oomKills(t, oomDir)
				if kills < 1 {
					t.Fatalf("the killer ended (%v) but %s counts %d OOM kills", err, oomDir, kills)
				}
				sentinelOOMKilled = kills > 1
				if sentinelOOMKilled && oomExemptable() {
					t.Errorf("the OOM killer took the sentinel (%d OOM kills), though its oom_score_adj can be -1000 here", kills)
				}
				if sentinelOOMKilled && stateOf(pids[0]) == 'T' {
					t.Skip("the OOM killer took the sentinel with the killer, before its SIGCONT: its oom_score_adj cannot be lowered to -1000 here")
				}
			}
			took := waitRunning(t, pids, died, stderr.Name())
			// The sentinel says so once it has sent SIGCONT to all.
			var b []byte
			for deadline := time.Now().Add(60 * time.Second); !strings.Contains(string(b), "sent them SIGCONT"); time.Sleep(5 * time.Millisecond) {
				b, _ = os.ReadFile(stderr.Name())
				if strings.Contains(string(b), "sent them SIGCONT") {
					break
				}
				if sentinelOOMKilled {
					t.Logf("the OOM killer took the sentinel after its SIGCONT, before its message: the tree runs, the message is lost")
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("the sentinel did not say what it did")
					break
				}
			}
			t.Logf("killer ended (%v); the tree ran again %v later; OOM kills in its cgroup %d; its stderr:\n%s", err, took, kills, b)
		})
	}
	t.Run("cgroup frozen, SIGKILL", func(t *testing.T) {
		mount := mustFS(t).Cgroup2Mount()
		if mount == "" || os.Geteuid() != 0 {
			t.Skip("needs root and a cgroup2 mount")
		}
		name := fmt.Sprintf("procwalk-test-frozen-%d", os.Getpid())
		dir := filepath.Join(mount, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cannot create a cgroup: %v", err)
		}
		t.Cleanup(func() { removeTestCgroup(t, dir) })
		if _, err := os.Stat(filepath.Join(dir, "cgroup.freeze")); err != nil {
			t.Skip("no cgroup.freeze (Linux < 5.2)")
		}
		startOwnGroup(t, fmt.Sprintf(`echo $$ > %s/cgroup.procs; trap "" TERM; sleep 300 & sleep 301 & wait`, dir))
		for deadline := time.Now().Add(60 * time.Second); len(cgroupPIDs(t, dir)) < 3; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the cgroup never held 3 processes")
			}
		}
		helper, lines, stderr := dieHelper(t, "cgroup /"+name, nil)
		if line, err := lines.ReadString('\n'); err != nil || line != "stopped\n" {
			b, _ := os.ReadFile(stderr.Name())
			t.Fatalf("the killer never froze the cgroup (%q, %v):\n%s", line, err, b)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events")); !strings.Contains(string(b), "frozen 1") {
			t.Fatalf("the cgroup is not frozen while the killer holds it: %s", b)
		}
		helper.Process.Kill()
		helper.Wait()
		died := time.Now()
		// The sentinel's thaw is at once; a minute only bounds a hang.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
			if strings.Contains(string(b), "frozen 0") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still frozen 60 s after the killer died", dir)
			}
		}
		b, _ := os.ReadFile(stderr.Name())
		t.Logf("the cgroup thawed %v after the killer died; its stderr:\n%s", time.Since(died), b)
	})
}

// childPIDs lists the children of pid.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		entries, _ := os.ReadDir("/proc")
		var out []int
		for _, e := range entries {
			c, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := mustFS(t).ReadStat(c); err == nil && st.PPID == pid {
				out = append(out, c)
			}
		}
		return out
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		c, _ := strconv.Atoi(f)
		out = append(out, c)
	}
	return out
}

func cgroupPIDs(t *testing.T, dir string) []string {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	return strings.Fields(string(b))
}

// oomCgroup makes a v1 memory cgroup of 64 MiB for the dying killer, which
// moves itself there when it starts (through its first argument's shell:
// the cgroup is entered before the test binary runs).
func oomCgroup(t *testing.T) (setup func(*exec.Cmd), dir string) {
	t.Helper()
	fs := mustFS(t)
	self, ok := fs.SelfMemoryCgroup()
	if !ok {
		t.Skip("no memory cgroup here")
	}
	dir = filepath.Join(self.Dir, fmt.Sprintf("procwalk-test-oom-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() { removeTestCgroup(t, dir) })
	limit := "memory.limit_in_bytes"
	if self.V2 {
		limit = "memory.max"
	}
	if err := os.WriteFile(filepath.Join(dir, limit), []byte(strconv.Itoa(256<<20)), 0); err != nil {
		t.Skipf("cannot set a memory limit: %v", err)
	}
	return func(cmd *exec.Cmd) {
		// sh enters the cgroup, then becomes the test binary.
		args := append([]string{cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
		cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}, args...)
	}, dir
}

// oomKills is how many processes the OOM killer killed in the memory
// cgroup dir (v1 memory.oom_control, v2 memory.events: oom_kill).
func oomKills(t *testing.T, dir string) int {
	t.Helper()
	for _, name := range []string{"memory.events", "memory.oom_control"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					t.Fatalf("%s: %q", name, line)
				}
				return n
			}
		}
	}
	t.Skipf("%s counts no OOM kills (oom_kill: Linux 4.13)", dir)
	return 0
}

// oomExemptable reports whether a process may set its oom_score_adj to
// -1000, as the sentinel does to stay out of the OOM killer's choice.
func oomExemptable() bool {
	return exec.Command("sh", "-c", "echo -1000 > /proc/self/oom_score_adj").Run() == nil
}

// startOwnGroup starts sh -c script in a process group of its own, and
// kills that group (the script and all it started) when the test ends.
func startOwnGroup(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Only while the leader is unreaped: its pid, the group's id, cannot be
		// reused then; after a Wait another test's new group may hold it.
		if cmd.ProcessState == nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	return cmd
}
