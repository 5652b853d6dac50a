package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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
