//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A script kills a process this test started, through the real Killer on
// the real /proc.
func TestIntegrationRunKillsOwnChild(t *testing.T) {
	integration(t)
	clearEnv(t)
	child := startGroup(t, "exec sleep 300", "procwalk-test-run-kill")
	waitForComm(t, child.Process.Pid, "sleep")
	rule := writeScript(t, "kill.lua", `local pw = require "procwalk"
local p = assert(pw.process(tonumber(pw.args.pid)))
local report, err = p:kill { grace = 2 }
print(p.comm, report and report.outcomes[1].result, err)`)
	pid := strconv.Itoa(child.Process.Pid)
	r := cli(t, "run", "--no-rates", rule, "--", "pid="+pid)
	t.Logf("stderr:\n%s", r.stderr)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "sleep\texited\tnil\n") {
		t.Fatalf("exit %d\nstdout:\n%s", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "procwalk_action,outcome=exited,requester=rule:kill.lua") || !strings.Contains(r.stdout, "pid="+pid+"i") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	err := child.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("the child ended with %v, want SIGTERM", err)
	}
}

// memory-guard kills the biggest process of a real tmux session over its
// limit: a python holding 200 MiB, started in a tmux server of our own.
func TestIntegrationMemoryGuardInTmux(t *testing.T) {
	integration(t)
	clearEnv(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	socket := fmt.Sprintf("%s/tmux.sock", t.TempDir())
	marker := fmt.Sprintf("procwalk-guard-test-%d", os.Getpid())
	py := "b = b'x' * (200 << 20); import time; time.sleep(300)"
	tmux := func(args ...string) error {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux %v: %v: %s", args, err, out)
		}
		return nil
	}
	if err := tmux("new-session", "-d", "-s", "guardtest", "python3", "-c", py, marker); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tmux("kill-server") }) // our own server and its panes only
	pid := waitForResident(t, marker, 150<<20)

	r := cli(t, "run", "--no-rates", "--tmux-socket", socket, "memory-guard", "--",
		"limit=100MiB", "ticks=1", "grace=2", "session=tmux:guardtest")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "memory-guard: tmux:guardtest used") || !strings.Contains(r.stderr, fmt.Sprintf("exited python3 %d", pid)) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "procwalk_action,outcome=exited,requester=rule:memory-guard.lua") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH && !isZombie(pid) {
		t.Errorf("python %d is still running: %v", pid, err)
	}
}

// waitForComm waits until pid's comm is comm (sh has exec'd it), however
// slow the machine.
func waitForComm(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d is not %s after 60s (comm %q, %v)", pid, comm, b, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitForResident finds the process whose command line holds marker and
// waits until it has at least bytes resident.
func waitForResident(t *testing.T, marker string, bytes int64) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if pid := findByCmdline(marker); pid > 0 {
			if statm, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid)); err == nil {
				f := strings.Fields(string(statm))
				if len(f) > 1 {
					if pages, _ := strconv.ParseInt(f[1], 10, 64); pages*int64(os.Getpagesize()) >= bytes {
						return pid
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no process with %q holding %d bytes", marker, bytes)
	return 0
}

func findByCmdline(marker string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(cmdline), "\x00")
		if err == nil && strings.HasPrefix(filepath.Base(argv[0]), "python") && slices.Contains(argv, marker) {
			return pid
		}
	}
	return 0
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
