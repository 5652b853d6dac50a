//go:build linux

package main

import (
	"bufio"
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

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"golang.org/x/sys/unix"
)

// kill_output_test.go: issue 22, class 3. Nothing on the output side may
// end a kill that has begun: a reader of stdout that is itself in the
// scope (| cat, | head -1), a hangup (SIGHUP, EIO on a terminal gone).
// Each case runs the real binary on a process group of the test's own:
// TERM-ignoring sleeps that only the KILL stage ends, a TERM-obeying
// sleep whose exit is the first line, and the reader. After procwalk
// exits, nothing of the group may be alive, and the exit status must be
// the kill's own (0), not 141 (SIGPIPE) or 129 (SIGHUP).

// outputGroup starts the group: a leader shell ignoring TERM, three
// TERM-ignoring sleeps and one TERM-obeying sleep, and returns its id.
func outputGroup(t *testing.T) int {
	t.Helper()
	cmd := startGroup(t, `trap "" TERM; sleep 300 & sleep 301 & sleep 302 & env --default-signal=TERM sleep 303 & wait`, "kill-output-test")
	waitChildren(t, cmd.Process.Pid, 4)
	return cmd.Process.Pid
}

// startInGroup starts argv in process group pgrp with stdin, and makes
// sure it is gone when the test ends.
func startInGroup(t *testing.T, pgrp int, stdin *os.File, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgrp}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// groupAlive lists the live processes of process group pgrp.
func groupAlive(t *testing.T, pgrp int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgrp) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// waitStatus waits for cmd and returns its wait status.
func waitStatus(t *testing.T, cmd *exec.Cmd) syscall.WaitStatus {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// checkKillFinished checks that procwalk exited 0 and left nothing of the
// group alive but the test's own leader, which it reaps itself.
func checkKillFinished(t *testing.T, ws syscall.WaitStatus, pgrp int, stderr string) {
	t.Helper()
	// The leader is the test's child: killed, it stays a zombie until the
	// test reaps it, and groupAlive leaves zombies out.
	left := groupAlive(t, pgrp)
	if ws.Signaled() || ws.ExitStatus() != 0 || len(left) > 0 {
		t.Errorf("procwalk ended with %s, %d processes of the group alive %v; want exit 0 and none\nstderr:\n%s",
			render.DescribeStatus(unix.WaitStatus(ws)), len(left), left, stderr)
	}
}

func TestIntegrationKillOutputCannotAbort(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	run := func(t *testing.T, stdout, stderr *os.File, pgrp int, extra ...string) *exec.Cmd {
		t.Helper()
		args := append([]string{"kill", "--yes", "--grace", "1s", "--pgrp", strconv.Itoa(pgrp)}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	errFile := func(t *testing.T) *os.File {
		f, err := os.Create(t.TempDir() + "/stderr")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	readBack := func(f *os.File) string { b, _ := os.ReadFile(f.Name()); return string(b) }

	// | cat, cat in the scope: TERM ends cat; the line saying so is
	// written to a pipe without a reader.
	for _, json := range []bool{false, true} {
		t.Run(fmt.Sprintf("cat in the scope, json %v", json), func(t *testing.T) {
			pgrp := outputGroup(t)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			startInGroup(t, pgrp, r, "cat")
			r.Close()
			stderr := errFile(t)
			var extra []string
			if json {
				extra = []string{"--json"}
			}
			p := run(t, w, stderr, pgrp, extra...)
			w.Close()
			checkKillFinished(t, waitStatus(t, p), pgrp, readBack(stderr))
		})
	}

	// stdout and stderr both into a pipe whose reader is in the scope.
	t.Run("stdout and stderr to cat in the scope", func(t *testing.T) {
		pgrp := outputGroup(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		startInGroup(t, pgrp, r, "cat")
		r.Close()
		p := run(t, w, w, pgrp)
		w.Close()
		checkKillFinished(t, waitStatus(t, p), pgrp, "")
	})

	// The same with a member the kill refuses (a protected name): the
	// kill's status is 1, and its error line goes to the pipe whose
	// reader it ended. That line must not end procwalk by SIGPIPE (141).
	t.Run("stdout and stderr to cat in the scope, a member refused", func(t *testing.T) {
		sleep, err := exec.LookPath("sleep")
		if err != nil {
			t.Skip("no sleep")
		}
		protected := filepath.Join(t.TempDir(), "ttyd") // a protected name
		if out, err := exec.Command("cp", sleep, protected).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		cmd := startGroup(t, `trap "" TERM; sleep 300 & sleep 301 & '`+protected+`' 304 & wait`, "kill-output-test")
		pgrp := cmd.Process.Pid
		// Until it has exec'd, the protected one is a fork of sh, and
		// as such no refused member: wait for its name.
		for deadline := time.Now().Add(60 * time.Second); !slices.ContainsFunc(childrenOf(t, pgrp), func(pid int) bool {
			comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
			return string(comm) == "ttyd\n"
		}); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the protected sleep never ran")
			}
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		startInGroup(t, pgrp, r, "cat")
		r.Close()
		p := run(t, w, w, pgrp)
		w.Close()
		ws := waitStatus(t, p)
		left := groupAlive(t, pgrp)
		if ws.Signaled() || ws.ExitStatus() != exitError || len(left) != 1 {
			t.Errorf("procwalk ended with %s, %d processes of the group alive %v; want exit 1 and the protected one alone",
				render.DescribeStatus(unix.WaitStatus(ws)), len(left), left)
		}
	})

	// | head -1, head in the scope and ignoring TERM (as the group's
	// members do): it leaves on its own after the first line, and the
	// line of its own exit goes to a pipe without a reader.
	t.Run("head -1 in the scope", func(t *testing.T) {
		pgrp := outputGroup(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		startInGroup(t, pgrp, r, "sh", "-c", `trap "" TERM; exec head -1 >/dev/null`)
		r.Close()
		stderr := errFile(t)
		p := run(t, w, stderr, pgrp)
		w.Close()
		checkKillFinished(t, waitStatus(t, p), pgrp, readBack(stderr))
	})

	// SIGHUP (an ssh connection dropped) once the first line is out, in
	// the grace, before the KILL stage.
	t.Run("SIGHUP during the grace", func(t *testing.T) {
		pgrp := outputGroup(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := errFile(t)
		p := run(t, w, stderr, pgrp)
		w.Close()
		lines := bufio.NewReader(r)
		if _, err := lines.ReadString('\n'); err != nil {
			t.Fatalf("no first line: %v", err)
		}
		if err := p.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		go func() { // drain the rest, so that a write never blocks
			for {
				if _, err := lines.ReadString('\n'); err != nil {
					r.Close()
					return
				}
			}
		}()
		checkKillFinished(t, waitStatus(t, p), pgrp, readBack(stderr))
	})

	// A terminal that hangs up: procwalk leads a session whose controlling
	// terminal's master is closed after the first line. The kernel sends
	// SIGHUP, and every later write fails with EIO.
	t.Run("terminal hangup", func(t *testing.T) {
		pgrp := outputGroup(t)
		master, slave := openPTY(t)
		cmd := exec.Command(bin, "kill", "--yes", "--grace", "1s", "--pgrp", strconv.Itoa(pgrp))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		slave.Close()
		line, err := bufio.NewReader(master).ReadString('\n')
		if err != nil {
			t.Fatalf("no first line on the terminal: %v", err)
		}
		t.Logf("first line: %q", line)
		master.Close()
		done := make(chan struct{})
		var ws syscall.WaitStatus
		go func() { ws = waitStatus(t, cmd); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("procwalk did not end within 60 s of the hangup")
		}
		checkKillFinished(t, ws, pgrp, "")
	})
}
