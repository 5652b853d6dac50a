//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ptyRun is a command running on a pseudo-terminal that answers nothing,
// as `script`, some IDE and CI terminals and serial consoles are: what it
// writes is kept, and nothing is ever written back but the keys a test
// sends.
type ptyRun struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	grew   *sync.Cond
	done   chan struct{} // closed when the terminal has nothing more to read
}

// ptyHangLimit bounds a command on a pty: every command here ends in
// moments, and one that hangs is killed after this long, which ends its
// terminal and fails the test with what it wrote, rather than holding the
// shared test queue for the 30-minute timeout. Not a measure of speed: a
// loaded machine takes seconds, not minutes.
const ptyHangLimit = 3 * time.Minute

// startOnPTY starts bin with args on a new 80x24 pseudo-terminal, its
// controlling terminal, with env (and PATH, HOME).
func startOnPTY(t *testing.T, bin string, env []string, args ...string) *ptyRun {
	t.Helper()
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatal(err)
	}
	r := &ptyRun{master: master, done: make(chan struct{})}
	r.grew = sync.NewCond(&r.mu)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = slave, slave, slave
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child's now: reads end (EIO) once it exits
	hang := time.AfterFunc(ptyHangLimit, func() {
		t.Errorf("%s %q still running after %v: killed", bin, args, ptyHangLimit)
		r.cmd.Process.Kill() // our own child
	})
	go func() {
		defer close(r.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			r.grew.Broadcast()
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		hang.Stop()
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill() // our own child, on a failed test
			r.cmd.Wait()
		}
		master.Close()
	})
	return r
}

// waitFor blocks until the output holds s, or the terminal closes; it
// reports whether s came.
func (r *ptyRun) waitFor(s string) bool {
	closed := false
	go func() { <-r.done; r.mu.Lock(); closed = true; r.grew.Broadcast(); r.mu.Unlock() }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for !bytes.Contains(r.out.Bytes(), []byte(s)) {
		if closed {
			return false
		}
		r.grew.Wait()
	}
	return true
}

// wait waits for the command to exit and the terminal to drain, and returns
// its exit error and everything it wrote.
func (r *ptyRun) wait() (error, []byte) {
	err := r.cmd.Wait()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return err, bytes.Clone(r.out.Bytes())
}

// terminalQueries are requests that a terminal answers on the program's
// stdin: a program that waits for the answer stalls where nothing answers.
var terminalQueries = []string{
	"\x1b]11;?", // background colour (termenv, lipgloss v1)
	"\x1b]10;?", // foreground colour
	"\x1b[6n",   // cursor position
	"\x1b[c",    // primary device attributes
}

// One-shot commands write no escape sequence at all to a terminal, so they
// ask it nothing and wait for nothing: on a terminal that never answers
// they run to their end. Nothing here is timed: the command exits with
// nothing ever written to its terminal, and the bytes it wrote are checked.
// (bubbletea v1 asked for the background colour and the cursor position at
// package initialisation, in every command, and waited 5 s for answers.)
func TestIntegrationOneShotCommandsQueryNoTerminal(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	for _, args := range [][]string{
		{"--version"},
		{"--help"},
		fixture("ps"),
		fixture("sessions"),
		fixture("tree", "1"),
		{"ps"},
		{"sessions"},
		{"top", "--once", "--interval", "10ms"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := startOnPTY(t, bin, []string{"TERM=xterm-256color", "COLORTERM=truecolor"}, args...)
			err, out := r.wait()
			if err != nil {
				t.Fatalf("%v\n%q", err, out)
			}
			if i := bytes.IndexByte(out, 0x1b); i >= 0 {
				t.Errorf("wrote an escape sequence to the terminal at byte %d: %q", i, out[i:min(i+16, len(out))])
			}
			if len(out) == 0 {
				t.Error("wrote nothing")
			}
		})
	}
}

// The live view asks the terminal at most once, a burst at start (which
// modes it supports, its keyboard protocol), never for its colours or the
// cursor, and it waits for no answer: on a terminal that answers nothing it
// draws its screen and quits on q. With stdin not a terminal it reads its
// keys from the controlling terminal.
func TestIntegrationTopOnSilentTerminal(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	for _, tt := range []struct {
		name  string
		stdin bool // stdin is /dev/null, not the terminal
	}{
		{"stdin terminal", false},
		{"stdin /dev/null", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"top", "--interval", "1h"}
			if tt.stdin {
				// The pty is the controlling terminal; sh leaves it as the
				// output and takes stdin away.
				args = []string{"-c", `exec "$0" top --interval 1h </dev/null`, bin}
			}
			prog := bin
			if tt.stdin {
				prog = "/bin/sh"
			}
			r := startOnPTY(t, prog, []string{"TERM=xterm-256color"}, args...)
			if !r.waitFor(" processes") { // the header
				err, out := r.wait()
				t.Fatalf("no screen (%v):\n%q", err, out)
			}
			if _, err := r.master.Write([]byte("q")); err != nil {
				t.Fatal(err)
			}
			err, out := r.wait()
			if err != nil {
				t.Fatalf("top: %v\n%q", err, out)
			}
			for _, q := range terminalQueries {
				if bytes.Contains(out, []byte(q)) {
					t.Errorf("top wrote the query %q", q)
				}
			}
			for _, q := range []string{"\x1b[?2026$p", "\x1b[?u"} { // the one burst
				if n := bytes.Count(out, []byte(q)); n > 1 {
					t.Errorf("top asked %q %d times, want at most once", q, n)
				}
			}
		})
	}
}
