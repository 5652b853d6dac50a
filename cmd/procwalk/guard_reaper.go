package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/kill"
	"golang.org/x/sys/unix"
)

// guard_reaper.go is the process plumbing of `procwalk guard`: becoming a
// child subreaper, starting the command, reaping every child (the command
// and the orphans the kernel hands us), and telling whether the terminal
// already delivers keyboard signals to the command.
//
// guard reaps with wait4(-1): any child of this process. That is right in
// the procwalk binary, where guard is the only thing running; code that
// embeds run() next to other child processes must not run guard.

// becomeSubreaper makes orphaned descendants ours instead of init's
// (PR_SET_CHILD_SUBREAPER, Linux 3.4+), so a double-forked daemon stays in
// the watched tree and its exit is reaped here.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	return nil
}

// reaped is one child collected by wait4.
type reaped struct {
	pid    int
	status unix.WaitStatus
	usage  unix.Rusage
}

// cpuSeconds is the child's user+system time, its reaped descendants
// included (wait4's rusage counts them).
func (r reaped) cpuSeconds() float64 {
	return tvSeconds(r.usage.Utime) + tvSeconds(r.usage.Stime)
}

func tvSeconds(tv unix.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// reapAll waits for children until there are none (ECHILD), sending each on
// out, and closes out. Its stop path: every descendant has been reaped,
// which guard brings about by terminating what is left when the command
// ends. When guard stops waiting first (a dry run leaves CMD's leftovers
// running; a process outlives SIGKILL), it is blocked in wait4 and ends
// with the process, which exits right after the summary. Start it only
// once a child exists.
func reapAll(out chan<- reaped) {
	defer close(out)
	for {
		var r reaped
		pid, err := unix.Wait4(-1, &r.status, 0, &r.usage)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left to wait for
		}
		r.pid = pid
		out <- r
	}
}

// exitStatus is the shell's view of a wait status: the exit code, or 128+N
// for death by signal N.
func exitStatus(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// describeStatus says how a process ended: "exited with status 3",
// "killed by signal KILL".
func describeStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		s := "killed by signal " + kill.SignalName(ws.Signal())
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return fmt.Sprintf("exited with status %d", ws.ExitStatus())
}

// startError maps a failure to start the command onto the shell's codes:
// 127 not found, 126 found but not executable.
func startError(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return &exitErr{Code: exitNotFound, Err: fmt.Errorf("guard: %s: command not found: %v", name, err)}
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return &exitErr{Code: exitNotExecutable, Err: fmt.Errorf("guard: %s: cannot execute: %v", name, err)}
	}
	return &exitErr{Code: exitNotExecutable, Err: fmt.Errorf("guard: starting %s: %w", name, err)}
}

// childIO connects the command's stdio. Files (the real stdin, stdout,
// stderr) are passed as they are; other writers (tests) get a pipe copied
// by a goroutine that ends when every holder of the pipe's write end has
// exited, which guard waits for after the last reap (with a bound, in case
// a process outside the tree inherited the pipe).
type childIO struct {
	stdin          *os.File
	stdout, stderr *os.File
	closeAfter     []*os.File // our copies of the pipes' write ends
	copies         sync.WaitGroup
}

func newChildIO(e *env) (*childIO, error) {
	c := &childIO{}
	if f, ok := e.stdin.(*os.File); ok {
		c.stdin = f // nil reads as /dev/null in exec.Cmd
	}
	var err error
	if c.stdout, err = c.output(e.stdout); err != nil {
		return nil, err
	}
	if c.stderr, err = c.output(e.stderr); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *childIO) output(w io.Writer) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	r, wf, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closeAfter = append(c.closeAfter, wf)
	c.copies.Add(1)
	go func() {
		defer c.copies.Done()
		io.Copy(w, r)
		r.Close()
	}()
	return wf, nil
}

// started closes our copies of the pipe write ends, so the copies end when
// the tree's copies close.
func (c *childIO) started() {
	for _, f := range c.closeAfter {
		f.Close()
	}
}

// wait waits up to d for the output copies to finish.
func (c *childIO) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { c.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// terminalForeground reports whether this process is in the foreground
// process group of the terminal on stdin: then the keyboard's INT and QUIT
// (and a hangup's HUP) reach the command directly, because it shares our
// process group, and forwarding them would deliver them twice.
func terminalForeground(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	if !ok || f == nil {
		return false
	}
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
