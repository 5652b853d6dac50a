//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// stormInit is pid 1 of the test's pid namespace: it starts the storm and
// reaps whatever is orphaned to it, so that zombies do not eat the storm's
// process limit.
const stormInit = `
import os, sys, time
if os.fork() == 0:
    os.execvp("python3", ["python3", "-c", os.environ["PROCWALK_STORM"]])
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.1)
`

// stormLoop is every process of the storm: fork a copy of itself every 5
// ms (a failed fork, at the limit, is retried), reap exited children. It
// dies of SIGTERM, so a child it forked just before dying is orphaned:
// adopted by pid 1 of the namespace, no longer below the tree.
const stormLoop = `
import os, time
while True:
    try:
        if os.fork() == 0:
            continue
    except OSError:
        pass
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
    time.sleep(0.005)
`

// stormLimit is the storm's process limit (ulimit -u), namespace init and
// all.
const stormLimit = 60

// TestIntegrationKillForkStorm kills the tree of a fork storm bounded by
// `ulimit -u` in a user and pid namespace of its own, as uid 65534
// (RLIMIT_NPROC does not bind root): after `kill --tree` returns, nothing
// of the storm may be alive unless the exit is non-zero and names it. A
// tree killed with the first signal sent while it runs leaves, one run in
// two or so, loops forked after the last walk and orphaned by their
// parent's death, still forking, with exit 0; hence several rounds.
func TestIntegrationKillForkStorm(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("the storm runs as uid 65534 in a user namespace: needs root")
	}
	for _, tool := range []string{"setpriv", "unshare", "bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	for round := 1; round <= 4; round++ {
		killStorm(t, round)
		if t.Failed() {
			return
		}
	}
}

// killStorm runs one storm and kills its tree.
func killStorm(t *testing.T, round int) {
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"unshare", "--kill-child", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc",
		"bash", "-c", fmt.Sprintf(`ulimit -u %d && exec python3 -c "$PROCWALK_STORM_INIT"`, stormLimit))
	cmd.Env = append(os.Environ(), "PROCWALK_STORM_INIT="+stormInit, "PROCWALK_STORM="+stormLoop)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// --kill-child: unshare's death takes the namespace's init, and with it
	// every process of the namespace.
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var nsInit, root int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Skipf("the storm did not start in 30s (a user or pid namespace refused?): %s", out)
		}
		if nsInit == 0 {
			if c := childrenOf(t, cmd.Process.Pid); len(c) == 1 {
				nsInit = c[0]
			}
			continue
		}
		if c := childrenOf(t, nsInit); len(c) > 0 && root == 0 {
			root = c[0]
		}
		if root != 0 && len(liveDescendants(t, nsInit)) >= stormLimit/2 {
			break
		}
	}
	r := cli(t, "kill", "--yes", "--grace", "2s", "--tree", strconv.Itoa(root))
	// Orphans are adopted by the namespace's init: anything alive below it
	// now is what the kill left of the storm.
	left := liveDescendants(t, nsInit)
	t.Logf("round %d: %d processes signalled, exit %d, %d left alive", round, strings.Count(r.stdout, "\n"), r.code, len(left))
	if len(left) == 0 {
		if r.code != exitOK {
			t.Errorf("round %d: nothing left, but exit %d:\n%s%s", round, r.code, r.stdout, r.stderr)
		}
		return
	}
	if r.code == exitOK {
		t.Errorf("round %d: exit 0, yet %d processes of the storm are alive (pids %v):\n%s%s", round, len(left), left, r.stdout, r.stderr)
		return
	}
	for _, pid := range left {
		if !strings.Contains(r.stdout, fmt.Sprintf("escaped pid %d ", pid)) && !strings.Contains(r.stdout, fmt.Sprintf("survived pid %d ", pid)) {
			t.Errorf("round %d: pid %d is alive and the output does not say so:\n%s%s", round, pid, r.stdout, r.stderr)
		}
	}
}

// liveDescendants lists the processes below pid that have not exited,
// from one pass over /proc.
func liveDescendants(t *testing.T, pid int) []int {
	t.Helper()
	children := childrenByParent(t, true)
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// TestIntegrationKillForkStormCgroupFreeze kills a fork storm that has a
// cgroup v2 of its own, made by the test under the cgroup2 mount: the
// first signal goes to a cgroup frozen with cgroup.freeze rather than
// stopped process by process, and nothing of the storm is left. The storm is bounded as in
// TestIntegrationKillForkStorm (the unified hierarchy of a v1 hybrid has
// no pids controller).
func TestIntegrationKillForkStormCgroupFreeze(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("makes a cgroup and runs the storm as uid 65534 in a user namespace: needs root")
	}
	for _, tool := range []string{"setpriv", "unshare", "bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	mount := cgroup2Mount(t)
	name := fmt.Sprintf("procwalk-test-freeze-%d", os.Getpid())
	dir := filepath.Join(mount, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup v2 under %s: %v", mount, err)
	}
	t.Cleanup(func() {
		// A cgroup whose last process exited may be busy for a moment.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			err := os.Remove(dir)
			if err == nil || os.IsNotExist(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("removing %s: %v", dir, err)
				return
			}
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "cgroup.freeze")); err != nil {
		t.Skipf("no cgroup.freeze (Linux 5.2+): %v", err)
	}
	// The shell moves itself into the cgroup before anything forks.
	cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && exec setpriv --reuid=65534 --regid=65534 --clear-groups `+
		`unshare --kill-child --user --map-root-user --pid --fork --mount-proc `+
		`bash -c "ulimit -u $2 && exec python3 -c \"\$PROCWALK_STORM_INIT\""`, "sh", dir, strconv.Itoa(stormLimit))
	cmd.Env = append(os.Environ(), "PROCWALK_STORM_INIT="+stormInit, "PROCWALK_STORM="+stormLoop)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for deadline := time.Now().Add(30 * time.Second); len(cgroupLive(t, dir)) < stormLimit/2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Skipf("the storm did not start in 30s (a user or pid namespace refused?): %s", out)
		}
	}
	// The CLI names cgroup sessions by the v1 memory or systemd hierarchy
	// on a hybrid host, where this cgroup's v2 path would not be the
	// session: the engine's cgroup scope names the v2 cgroup directly.
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kill.NewKiller(fs, kill.Config{Requester: "test", Grace: 2 * time.Second, Sentinel: kill.NewSentinel(testSentinelCommand())})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := k.Plan(&kill.CgroupScope{Path: "/" + name})
	if err != nil {
		t.Fatal(err)
	}
	report := k.Execute(context.Background(), plan)
	left := cgroupLive(t, dir)
	notes := strings.Join(report.Notes, "\n")
	t.Logf("%d targets planned, %d outcomes, %d left alive, err %v; notes:\n%s", len(plan.Targets), len(report.Outcomes), len(left), report.Err(), notes)
	if !strings.Contains(notes, "froze "+dir+" with cgroup.freeze") {
		t.Errorf("the notes do not say the cgroup was frozen:\n%s", notes)
	}
	if len(left) > 0 || report.Err() != nil {
		t.Errorf("%v, %d processes of the storm alive (pids %v)", report.Err(), len(left), left)
	}
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted, or skips.
func cgroup2Mount(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, after, ok := strings.Cut(line, " - cgroup2 "); ok && after != "" {
			if f := strings.Fields(line); len(f) > 4 {
				return f[4]
			}
		}
	}
	t.Skip("no cgroup v2 mounted")
	return ""
}

// cgroupLive lists the processes of cgroup dir that have not exited.
func cgroupLive(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}
