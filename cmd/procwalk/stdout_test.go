//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// A report is the run's output: procwalk run session-report > r.txt
// writes it. --lines-only leaves stdout to line protocol.
func TestRunReportGoesToStdout(t *testing.T) {
	r := scriptCLI(t, "run", "--no-rates", "session-report")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "procwalk session report: ") || strings.Contains(r.stderr, "session report") {
		t.Errorf("exit %d; want the report on stdout\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = scriptCLI(t, "run", "--no-rates", "--lines-only", "session-report")
	if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "procwalk session report: ") {
		t.Errorf("--lines-only: exit %d; want the report on stderr, nothing on stdout\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// goneReader is a stdout whose reader has gone.
type goneReader struct{ writes int }

func (w *goneReader) Write([]byte) (int, error) {
	w.writes++
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// A closed stdout ends run and watch at once, exit 0, without a word: the
// reader (head) has what it wanted.
func TestClosedStdoutEndsRun(t *testing.T) {
	clearEnv(t)
	for _, command := range []string{"run", "watch"} {
		var stderr bytes.Buffer
		stdout := &goneReader{}
		e := &env{stdin: strings.NewReader(""), stdout: stdout, stderr: &stderr, clock: procwalk.SystemClock{}}
		args := []string{command, "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux", "--interval", "1h", "session-report"}
		if command == "run" {
			args = append(args, "--no-rates")
		}
		// watch with a tick of an hour ends only through the closed stdout.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := runEnv(ctx, e, args)
		timedOut := ctx.Err()
		cancel()
		if code := exitCode(err); code != exitOK || stdout.writes == 0 || timedOut != nil {
			t.Errorf("%s: exit %d (%v) after %d writes, %v; want 0 once stdout fails", command, code, err, stdout.writes, timedOut)
		}
		if strings.Contains(stderr.String(), "broken pipe") || strings.Contains(stderr.String(), "procwalk: session") {
			t.Errorf("%s: stderr %q", command, stderr.String())
		}
	}
}

// procwalk watch agents | head -1 ends when head exits, though the next
// tick is an hour away: watch notices the pipe's reader going.
func TestIntegrationWatchEndsWithItsReader(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	cmd := exec.Command(bin, "watch", "agents", "--interval", "1h", "--proc", sessionsProc, "--passwd", sessionsPasswd,
		"--cgroup-root", sessionsCgroups, "--tmux-socket", "/nonexistent/procwalk-test.sock")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "AGENT ") {
		t.Fatalf("first line %q, %v; stderr %s", line, err, stderr.String())
	}
	stdout.Close() // head -1 exits
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch ended with %v, want exit 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute): // a hang guard, not a timing: the tick is an hour
		t.Fatalf("watch still runs a minute after its reader went; stderr:\n%s", stderr.String())
	}
}

// telegraf --execd --signal none </dev/null gathers on (cron, nohup) until
// SIGTERM; with the STDIN signal it stops at once and says why in a W!
// line.
func TestIntegrationExecdStdinAtEnd(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	args := []string{"telegraf", "--execd", "--proc", telegrafProc, "--passwd", telegrafPasswd, "--session-kinds", "user", "--interval", "20ms"}
	cmd := exec.Command(bin, append(args, "--signal", "none")...) // stdin: /dev/null
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	batches := 0
	for batches < 3 && lines.Scan() {
		if strings.HasPrefix(lines.Text(), "procwalk,") {
			batches++
		}
	}
	cmd.Process.Signal(syscall.SIGTERM) // our own child
	go io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil || batches < 3 {
		t.Fatalf("--signal none </dev/null: %d batches, %v; stderr:\n%s", batches, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "I! stdin is at its end") {
		t.Errorf("no I! line about stdin:\n%s", stderr.String())
	}
	cmd = exec.Command(bin, args...)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "W! stdin ended before its first line") {
		t.Errorf("--signal STDIN </dev/null: %v\n%s", err, b)
	}
}
