//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// kill_cgroup_test.go: issue 22, class 1. A cgroup session kill empties the
// cgroup or exits 1 naming what is left. Each case starts a TERM-ignoring
// loop in a cgroup of the test's own that keeps starting processes which
// leave its tree (setsid'd daemons, double forks, a fork storm whose
// members die of TERM and orphan their children), bounded by a v1 pids
// cgroup, and kills the cgroup while it runs.

// daemonLoops are the loops, each ignoring TERM (as what it starts does).
var daemonLoops = []struct{ name, script string }{
	{"setsid daemons", `while :; do (setsid sleep 1000 &); sleep 0.02; done`},
	{"double forks", `while :; do (sleep 1000 &); sleep 0.02; done`},
	{"orphaning storm", `while :; do (sh -c 'sleep 1000 & sleep 1000 & exit' &); sleep 0.01; done`},
}

// testCgroup makes the cgroup name under each hierarchy mount given, and
// at the end SIGKILLs what is left in it (every process there is the
// test's: only the test's loop was put there) and removes it.
func testCgroup(t *testing.T, name string, mounts ...string) []string {
	t.Helper()
	var dirs []string
	for _, m := range mounts {
		dir := filepath.Join(m, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cannot make a cgroup under %s: %v", m, err)
		}
		dirs = append(dirs, dir)
	}
	t.Cleanup(func() {
		for _, dir := range dirs {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				killCgroupProcs(dir)
				err := os.Remove(dir)
				if err == nil || errors.Is(err, os.ErrNotExist) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("cannot remove the test's cgroup %s: %v", dir, err)
					break
				}
			}
		}
	})
	return dirs
}

// v1Mount is the mount point of the v1 hierarchy with controller c, or
// skips.
func v1Mount(t *testing.T, c string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		_, after, ok := strings.Cut(line, " - cgroup ")
		if !ok {
			continue
		}
		f := strings.Fields(after)
		if len(f) == 2 && procwalk.HasController(f[1], c) {
			return strings.Fields(line)[4]
		}
	}
	t.Skipf("no v1 %s hierarchy mounted", c)
	return ""
}

// startInCgroups starts the TERM-ignoring loop after moving its shell into
// each of dirs.
func startInCgroups(t *testing.T, loop string, dirs ...string) *exec.Cmd {
	t.Helper()
	moves := ""
	for _, d := range dirs {
		moves += fmt.Sprintf("echo $$ > %s/cgroup.procs && ", d)
	}
	cmd := exec.Command("sh", "-c", moves+`trap "" TERM; `+loop)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// waitCgroupLive waits until dir holds at least n live processes.
func waitCgroupLive(t *testing.T, dir string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(cgroupLive(t, dir)) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %d live processes", dir, n)
		}
	}
}

// TestIntegrationKillCgroupSessionV1: kill --session cgroup:NAME on a
// session placed by the v1 name=systemd hierarchy (as on our hybrid hosts).
func TestIntegrationKillCgroupSessionV1(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("makes cgroups: needs root")
	}
	systemd, pids := v1Mount(t, "name=systemd"), v1Mount(t, "pids")
	for i, loop := range daemonLoops {
		t.Run(loop.name, func(t *testing.T) {
			// Not procwalk-*: procwalk's own cgroups are never sessions
			// (procwalk.IsOwnCgroup), and this one must be.
			name := fmt.Sprintf("pwtest-daemons-%d-%d", os.Getpid(), i)
			dirs := testCgroup(t, name, systemd, pids)
			// The bound of the fork storm: the loop and all it starts.
			if err := os.WriteFile(filepath.Join(dirs[1], "pids.max"), []byte("300"), 0); err != nil {
				t.Fatal(err)
			}
			startInCgroups(t, loop.script, dirs...)
			waitCgroupLive(t, dirs[0], 30)
			r := cli(t, "kill", "--yes", "--grace", "1s", "--session", "cgroup:/"+name)
			left := cgroupLive(t, dirs[0])
			t.Logf("exit %d, %d lines, %d left alive", r.code, strings.Count(r.stdout, "\n"), len(left))
			checkEmptiedOrNamed(t, r, left)
		})
	}
}

// checkEmptiedOrNamed: the cgroup is empty and the exit 0, or the exit is 1
// and each process left is named (escaped or survived).
func checkEmptiedOrNamed(t *testing.T, r result, left []int) {
	t.Helper()
	if len(left) == 0 {
		if r.code != exitOK {
			t.Errorf("the cgroup is empty, but exit %d:\n%s%s", r.code, r.stdout, tail(r.stderr))
		}
		return
	}
	if r.code != exitError {
		t.Errorf("exit %d, yet %d processes are left in the cgroup (%v)", r.code, len(left), left)
	}
	for _, pid := range left {
		if !strings.Contains(r.stdout, fmt.Sprintf("escaped pid %d ", pid)) && !strings.Contains(r.stdout, fmt.Sprintf("survived pid %d ", pid)) {
			t.Errorf("pid %d is left in the cgroup and the output does not say so", pid)
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// TestIntegrationKillCgroupV2: the same loops in a v2 cgroup of the test's
// own, killed through the engine's cgroup scope (the CLI names cgroup
// sessions by the v1 hierarchies on a hybrid host): frozen for each
// signal, nothing is left and nothing escapes.
func TestIntegrationKillCgroupV2(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("makes cgroups: needs root")
	}
	mount := cgroup2Mount(t)
	pids := v1Mount(t, "pids")
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	for i, loop := range daemonLoops {
		t.Run(loop.name, func(t *testing.T) {
			name := fmt.Sprintf("procwalk-test-daemons2-%d-%d", os.Getpid(), i)
			dirs := testCgroup(t, name, mount, pids)
			if _, err := os.Stat(filepath.Join(dirs[0], "cgroup.freeze")); err != nil {
				t.Skipf("no cgroup.freeze (Linux 5.2+): %v", err)
			}
			if err := os.WriteFile(filepath.Join(dirs[1], "pids.max"), []byte("300"), 0); err != nil {
				t.Fatal(err)
			}
			startInCgroups(t, loop.script, dirs...)
			waitCgroupLive(t, dirs[0], 30)
			k, err := kill.NewKiller(fs, kill.Config{Requester: "test", Grace: time.Second, Sentinel: kill.NewSentinel(testSentinelCommand())})
			if err != nil {
				t.Fatal(err)
			}
			report, err := k.TerminateScope(context.Background(), &kill.CgroupScope{Path: "/" + name})
			if err != nil {
				t.Fatal(err)
			}
			left := cgroupLive(t, dirs[0])
			t.Logf("%d outcomes, %d left alive, err %v; notes %q", len(report.Outcomes), len(left), report.Err(), report.Notes)
			if len(left) > 0 || report.Err() != nil {
				t.Errorf("%d left alive (%v), err %v", len(left), left, report.Err())
			}
		})
	}
}

// inOwnCgroupNamespace is a script that runs its arguments in the cgroup and
// mount namespaces unshare(1) gave it, after mounting every cgroup
// hierarchy again on a fresh tmpfs at the same places, as a container
// runtime does: the mounts' roots are then the namespace's, and so are the
// paths /proc/<pid>/cgroup shows. Run from the test's cgroups, the v1
// lines of the test's processes read "/" (their root), so a process of a
// v2 cgroup of the test's own is placed by its v2 line: a v2 cgroup
// session on a v1 hybrid host, as on a host with v2 alone.
const inOwnCgroupNamespace = `set -e
list=$(grep ' - cgroup' /proc/self/mountinfo | sed 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - \(cgroup2\{0,1\}\) [^ ]* \(.*\)$/\1 \2 \3/')
mount -t tmpfs tmpfs /sys/fs/cgroup
echo "$list" | while read -r mnt fstype super; do
  mkdir -p "$mnt"
  if [ "$fstype" = cgroup2 ]; then mount -t cgroup2 none "$mnt"
  else mount -t cgroup -o "$(echo "$super" | tr ',' '\n' | grep -v '^r[wo]$' | paste -sd,)" cgroup "$mnt"; fi
done
exec "$@"`

// TestIntegrationKillCgroupSessionV2: kill --session cgroup:NAME on a
// session placed by the v2 hierarchy, from a cgroup namespace (see
// inOwnCgroupNamespace): the cgroup is frozen for each signal (the v2
// path), and it ends empty with exit 0, or exit 1 naming what is left.
func TestIntegrationKillCgroupSessionV2(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("makes cgroups and namespaces: needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare (util-linux)")
	}
	mount := cgroup2Mount(t)
	if !strings.HasPrefix(mount, "/sys/fs/cgroup") {
		t.Skipf("cgroup2 is mounted at %s, not below /sys/fs/cgroup where the script mounts it again", mount)
	}
	bin := buildProcwalk(t)
	for i, loop := range daemonLoops {
		t.Run(loop.name, func(t *testing.T) {
			name := fmt.Sprintf("pwtest-daemons2s-%d-%d", os.Getpid(), i)
			dirs := testCgroup(t, name, mount)
			if _, err := os.Stat(filepath.Join(dirs[0], "cgroup.freeze")); err != nil {
				t.Skipf("no cgroup.freeze (Linux 5.2+): %v", err)
			}
			// The bound of the fork storm: the loop and all it starts.
			if err := os.WriteFile(filepath.Join(dirs[0], "pids.max"), []byte("300"), 0); err != nil {
				dirs = append(dirs, testCgroup(t, name, v1Mount(t, "pids"))...)
				if err := os.WriteFile(filepath.Join(dirs[1], "pids.max"), []byte("300"), 0); err != nil {
					t.Fatal(err)
				}
			}
			startInCgroups(t, loop.script, dirs...)
			waitCgroupLive(t, dirs[0], 30)
			cmd := exec.Command("unshare", "--cgroup", "--mount", "--propagation", "private",
				"sh", "-c", inOwnCgroupNamespace, "sh", bin, "kill", "--yes", "--grace", "1s", "--session", "cgroup:/"+name)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			if strings.Contains(stderr.String(), "unshare failed") || strings.Contains(stderr.String(), "mount:") {
				t.Skipf("no cgroup namespace of our own here: %s", stderr.String())
			}
			r := result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
			left := cgroupLive(t, dirs[0])
			t.Logf("exit %d, %d lines, %d left alive", r.code, strings.Count(r.stdout, "\n"), len(left))
			if !strings.Contains(r.stderr, "froze "+dirs[0]+" with cgroup.freeze") {
				t.Errorf("the v2 cgroup was not frozen: not a v2 session?\n%s", tail(r.stderr))
			}
			checkEmptiedOrNamed(t, r, left)
		})
	}
}

// killCgroupProcs SIGKILLs every process of the test's cgroup dir, each
// through a pidfd opened before its membership is read again: a pid that
// left the cgroup and was freed and reused meanwhile (a fork storm in
// another package wraps pid_max in seconds) is never signalled.
func killCgroupProcs(dir string) {
	procs := filepath.Join(dir, "cgroup.procs")
	b, _ := os.ReadFile(procs)
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if pid <= 0 {
			continue
		}
		p, err := os.FindProcess(pid) // a pidfd: it stays this process
		if err != nil {
			continue
		}
		if now, _ := os.ReadFile(procs); slices.Contains(strings.Fields(string(now)), f) {
			p.Kill()
		}
		p.Release()
	}
}
