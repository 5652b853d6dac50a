//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"golang.org/x/sys/unix"
)

// guard becomes a child subreaper and reaps with wait4(-1), which would
// steal the children of other tests: every guard test that starts a
// command runs procwalk in a child process, the test binary re-executed as
// TestGuardHelperProcess.

const guardHelperEnv = "GO_PROCWALK_GUARD_HELPER"

func TestGuardHelperProcess(t *testing.T) {
	if os.Getenv(guardHelperEnv) != "1" {
		t.Skip("the procwalk process of the guard tests")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, flag.Args(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

type guardResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// startGuard starts `procwalk guard ARGS` in a child process.
func startGuard(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestGuardHelperProcess$", "--", "guard"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROCWALK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, guardHelperEnv+"=1")
	// A group of its own: no signal meant for the test's group reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// If a test failed before guard ended: its group holds only guard
		// and the commands it started for this test, and while guard is
		// unreaped its pid, the group's id, cannot be reused.
		if cmd.ProcessState == nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	return cmd, &stdout, &stderr
}

func finishGuard(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, start time.Time) guardResult {
	t.Helper()
	err := cmd.Wait()
	r := guardResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return r
}

func guard(t *testing.T, args ...string) guardResult {
	t.Helper()
	start := time.Now()
	cmd, stdout, stderr := startGuard(t, args...)
	return finishGuard(t, cmd, stdout, stderr, start)
}

func TestGuardUsageErrors(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"guard"}, "guard needs a command"},
		{[]string{"guard", "--max-rss", "12X", "--", "true"}, `--max-rss "12X": want a positive size such as 512MiB, 2G or 1.5GiB`},
		{[]string{"guard", "--max-pss", "0", "--", "true"}, `--max-pss "0": want a positive size`},
		{[]string{"guard", "--max-cpu-time", "-1s", "--", "true"}, "--max-cpu-time -1s"},
		{[]string{"guard", "--timeout", "-5s", "--", "true"}, "--timeout -5s"},
		{[]string{"guard", "--kill", "all", "--", "true"}, `--kill "all": want tree or biggest`},
		{[]string{"guard", "--grace", "0s", "--", "true"}, "--grace 0s"},
		{[]string{"guard", "--interval", "0s", "--", "true"}, "--interval 0s"},
		{[]string{"guard", "--timeout", "soon", "--", "true"}, `--timeout "soon": want a duration such as 10s, 500ms or 2m`},
	}
	for _, tt := range tests {
		r := cli(t, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 mentioning %q; stderr:\n%s", tt.args, r.code, tt.want, r.stderr)
		}
	}
}

func TestIntegrationGuardExitCodes(t *testing.T) {
	integration(t)
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"status", []string{"--", "sh", "-c", "exit 3"}, 3, "sh exited with status 3"},
		{"success", []string{"--", "true"}, 0, "true exited with status 0"},
		{"signal", []string{"--", "sh", "-c", "kill -KILL $$"}, 128 + 9, "sh killed by signal KILL"},
		{"not found", []string{"--", "/nonexistent/cmd"}, exitNotFound, "command not found"},
		{"not executable", []string{"--", notExec}, exitNotExecutable, "cannot execute"},
		{"timeout", []string{"--timeout", "300ms", "--grace", "200ms", "--", "sh", "-c", `trap "" TERM; sleep 300`}, exitLimit, "stopped by procwalk: --timeout 300ms reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := guard(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, want %d mentioning %q; stderr:\n%s", r.code, tt.code, tt.stderr, r.stderr)
			}
			// A hang guard: the command that runs 300 s must have been ended
			// long before (and its exit code says by whom).
			if r.took > 2*time.Minute {
				t.Errorf("took %v", r.took)
			}
		})
	}
}

// The kernel's peak RSS of the largest process is a bound: a child's mark
// starts with guard's own image before exec. The summary says so.
func TestIntegrationGuardPeakIsABound(t *testing.T) {
	integration(t)
	r := guard(t, "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "largest process peak RSS at most ") || !strings.Contains(r.stderr, "(kernel high-water mark)") {
		t.Errorf("exit %d, stderr:\n%s\nwant the peak said as a bound", r.code, r.stderr)
	}
}

func TestIntegrationGuardPassesOutputThrough(t *testing.T) {
	integration(t)
	r := guard(t, "--", "sh", "-c", "echo out; echo err >&2")
	if r.code != 0 || r.stdout != "out\n" || !strings.HasPrefix(r.stderr, "err\n") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// An orphan is reparented to guard (a subreaper) and reaped as soon as it
// exits: its pid vanishes instead of lingering as a zombie under guard.
func TestIntegrationGuardReapsOrphans(t *testing.T) {
	integration(t)
	dir := t.TempDir()
	pidFile, doneFile := filepath.Join(dir, "pid"), filepath.Join(dir, "done")
	start := time.Now()
	cmd, stdout, stderr := startGuard(t, "--", "sh", "-c",
		`(sleep 1 & echo $! > `+pidFile+`); while [ ! -e `+doneFile+` ]; do sleep 0.05; done`)
	orphan := waitFileInt(t, pidFile)
	reparented := false
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/stat")
		if err != nil {
			break // exited and reaped: no zombie left
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		reparented = reparented || f[1] == strconv.Itoa(cmd.Process.Pid)
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still there, state %s, parent %s", orphan, f[0], f[1])
		}
	}
	if !reparented {
		t.Errorf("orphan %d was never seen as guard's child", orphan)
	}
	if err := os.WriteFile(doneFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := finishGuard(t, cmd, stdout, stderr, start)
	if r.code != 0 || !strings.Contains(r.stderr, "1 orphan reaped") {
		t.Errorf("exit %d, want 0 and one orphan reaped:\n%s", r.code, r.stderr)
	}
}

// waitFileInt waits for a file holding a number and returns it.
func waitFileInt(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return n
		}
	}
	t.Fatalf("no number in %s", path)
	return 0
}

// What the command leaves running when it exits is ended with it.
func TestIntegrationGuardEndsLeftovers(t *testing.T) {
	integration(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := guard(t, "--", "sh", "-c", "sleep 300 & echo $! > "+pidFile)
	if r.code != 0 || !strings.Contains(r.stderr, "sh left processes running: guard ended them") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	// The leftover is sh's fork until it has exec'd sleep: guard may find
	// it either way. The tree is stopped around the first signal.
	if !regexp.MustCompile(`exited pid ` + pid + ` \((sleep|sh)\) signals STOP,TERM`).MatchString(r.stderr) {
		t.Errorf("no TERM for the leftover %s in the history:\n%s", pid, r.stderr)
	}
	if _, err := os.Stat("/proc/" + pid); err == nil {
		t.Errorf("leftover %s still exists", pid)
	}
}

// memoryHogProgram doubles a string, 16 bytes to 512 MiB, pausing between
// steps: a 100 MiB guard limit must stop it. The cap keeps a broken guard
// from exhausting the machine's memory: the test then fails on the exit code.
const memoryHogProgram = `BEGIN { s = "xxxxxxxxxxxxxxxx"; for (i = 0; i < 25; i++) { s = s s; system("sleep 0.2") } }`

const memoryHog = `awk '` + memoryHogProgram + `'`

func TestIntegrationGuardMaxRSS(t *testing.T) {
	integration(t)
	r := guard(t, "--max-rss", "100MiB", "--interval", "100ms", "--", "sh", "-c", memoryHog)
	if r.code != exitLimit || !strings.Contains(r.stderr, "over --max-rss 100.0 MiB: terminating the tree of sh") {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitLimit, r.stderr)
	}
	if !strings.Contains(r.stderr, "(awk) signals STOP,TERM") {
		t.Errorf("awk was not signalled:\n%s", r.stderr)
	}
}

func TestIntegrationGuardKillBiggest(t *testing.T) {
	integration(t)
	r := guard(t, "--max-rss", "100MiB", "--kill", "biggest", "--interval", "100ms", "--", "sh", "-c", memoryHog+"; echo shell-survived")
	if r.code != 0 || r.stdout != "shell-survived\n" {
		t.Fatalf("exit %d stdout %q, want 0 and the shell carrying on:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "terminating the biggest process") || !strings.Contains(r.stderr, "(awk)") {
		t.Errorf("awk not named as the biggest:\n%s", r.stderr)
	}
}

// With --kill biggest, ending CMD itself is enforcing the limit: exit 124.
func TestIntegrationGuardKillBiggestCMD(t *testing.T) {
	integration(t)
	r := guard(t, "--max-rss", "100MiB", "--kill", "biggest", "--interval", "100ms", "--", "awk", memoryHogProgram)
	if r.code != exitLimit || !strings.Contains(r.stderr, "CMD itself was the biggest process") {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitLimit, r.stderr)
	}
}

func TestIntegrationGuardMaxCPU(t *testing.T) {
	integration(t)
	r := guard(t, "--max-cpu-time", "300ms", "--interval", "100ms", "--grace", "1s", "--", "sh", "-c", "while :; do :; done")
	if r.code != exitLimit || !strings.Contains(r.stderr, "over --max-cpu-time 300ms") {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitLimit, r.stderr)
	}
}

// SIGTERM to guard is forwarded to CMD, and main's cancel of ctx on that
// same signal must not be taken for an embedder's cancel (which ends the
// whole tree). guard used to judge by timing and, paused for a few hundred
// milliseconds on a loaded machine, ended the tree instead: the test pauses
// guard right after the signal for longer than its cause window.
func TestIntegrationGuardForwardsTERM(t *testing.T) {
	integration(t)
	start := time.Now()
	cmd, stdout, stderr := startGuard(t, "--", "sh", "-c", `trap "sleep 2; exit 7" TERM; sleep 30 & wait`)
	waitDescendants(t, cmd.Process.Pid, 2) // sh and its sleep: the trap is set
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(kill.SignalCauseWindow + 500*time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r := finishGuard(t, cmd, stdout, stderr, start)
	if r.code != 7 || !strings.Contains(r.stderr, "sh exited with status 7 (guard forwarded TERM)") {
		t.Errorf("exit %d, want 7 from the trap after a forwarded TERM:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "cancelled") {
		t.Errorf("the forwarded signal was taken for a cancel:\n%s", r.stderr)
	}
}

// waitDescendants waits until pid has n processes below it.
func waitDescendants(t *testing.T, pid, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		found, next := 0, []int{pid}
		for len(next) > 0 {
			kids := childrenOf(t, next[0])
			next = append(next[1:], kids...)
			found += len(kids)
		}
		if found >= n {
			return
		}
	}
	t.Fatalf("pid %d never had %d descendants", pid, n)
}

// A dry run reports the broken limit once and lets CMD run to its end.
// CMD outlives the limit by seconds: the dry run's plan scans the whole
// host, which takes a second or more on a loaded machine with thousands of
// processes, and a tree gone by then is reported gone, not "would signal".
func TestIntegrationGuardDryRun(t *testing.T) {
	integration(t)
	r := guard(t, "--dry-run", "--timeout", "200ms", "--", "sh", "-c", "sleep 4; echo finished")
	if r.code != 0 || r.stdout != "finished\n" {
		t.Fatalf("exit %d stdout %q, want CMD to finish:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"--timeout 200ms reached: would terminate the tree of sh (dry run)",
		"dry run: --timeout 200ms reached: nothing was signalled",
		"would have been signalled: ",
		"would signal pid ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "would terminate the tree"); n != 1 {
		t.Errorf("reported %d times, want once:\n%s", n, r.stderr)
	}
}

// TestIntegrationGuardAsPID2 runs guard as pid 2 of a pid namespace (a
// shell as pid 1, as in bwrap sandboxes and containers), where its
// command's tree is children of pid 2: guard must end it on the limit and
// exit 124, not take it for kernel threads, signal nothing and wait for
// the command's own end.
func TestIntegrationGuardAsPID2(t *testing.T) {
	integration(t)
	if os.Geteuid() != 0 {
		t.Skip("unshare --pid needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare (util-linux)")
	}
	bin := buildProcwalk(t)
	start := time.Now()
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", "sh", "-c",
		`"$0" guard --timeout 300ms -- sleep 60; echo "guard exit $?"`, bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("unshare --pid --mount-proc failed here (%v): %s", err, out)
	}
	if !strings.Contains(string(out), "guard exit 124") || !strings.Contains(string(out), "stopped by procwalk") {
		t.Errorf("guard as pid 2: want exit 124, stopped by procwalk:\n%s", out)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("guard took %s: the 60 s command was not ended", d)
	}
}

// SIGKILL to guard (which it cannot catch) ends the command too: the
// command must not run on unwatched.
func TestIntegrationGuardKilledTakesCommand(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	g := exec.Command(bin, "guard", "--", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 300")
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Process.Kill(); g.Wait() })
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	id, err := procwalk.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	// Its pidfd, opened before the identity is read: should the command
	// outlive guard, the test ends exactly that process, whatever its pid
	// names by then.
	cmdProc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer cmdProc.Release()
	cmdID, err := id.ReadProcID(pid)
	if err != nil {
		t.Fatal(err)
	}
	g.Process.Kill() // SIGKILL: guard cannot act
	g.Wait()
	// The kernel's PDEATHSIG is at once; a minute only bounds a hang.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		now, err := id.ReadProcID(pid)
		if err != nil || now != cmdID {
			return // gone (or the pid reused: gone too)
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(b), ") Z ") {
			return // killed, waiting for its new parent to reap it
		}
		if time.Now().After(deadline) {
			cmdProc.Kill() // our own command: do not leave it
			t.Fatalf("the command (pid %d) still runs 60 s after guard was killed", pid)
		}
	}
}

// A limit broken but not enforced (ending the tree signalled nothing:
// every target refused) is reported as NOT stopped and exits 1, never 124
// (issue 14, point 2).
func TestGuardUnenforcedIsNotSuccess(t *testing.T) {
	status := unix.WaitStatus(0) // CMD ran to its end, exit 0
	res := &kill.SuperviseResult{Status: &status, Enforced: "--timeout 1s reached",
		Unenforced: fmt.Errorf("pid 9 (sh): %w", kill.ErrProtected), History: kill.NewAuditLog(guardHistory)}
	if got := render.GuardOutcome(res, "sh"); !strings.HasPrefix(got, "NOT stopped: --timeout 1s reached, but every target was refused") {
		t.Errorf("outcome %q", got)
	}
	var ee *exitErr
	if err := guardExit(res, "sh"); !errors.As(err, &ee) || ee.Code != exitError {
		t.Errorf("exit %v, want code %d", err, exitError)
	}
	res.Unenforced = nil
	if err := guardExit(res, "sh"); !errors.As(err, &ee) || ee.Code != exitLimit {
		t.Errorf("enforced: exit %v, want code %d", err, exitLimit)
	}
}
