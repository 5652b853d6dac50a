//go:build linux

package kill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk"
)

// supervise_stdio.go is the process plumbing around Supervise: the
// supervised command's stdio, the shell's view of its exit, and whether the
// terminal already delivers keyboard signals to it.

// Stdio connects a supervised command's stdio. Files (the real stdin,
// stdout, stderr, also under a wrapper with Unwrap, procwalk.FileOf) are
// passed as they are; other writers (tests) get a pipe copied by a
// goroutine that ends when every holder of the pipe's write end has
// exited, which the caller waits for after the last reap (Wait, with a
// bound, in case a process outside the tree inherited the pipe).
type Stdio struct {
	Stdin          *os.File // nil: /dev/null, as exec.Cmd reads it
	Stdout, Stderr *os.File
	closeAfter     []*os.File // our copies of the pipes' write ends
	copies         sync.WaitGroup
}

// NewStdio returns the stdio of a command writing to stdout and stderr and
// reading stdin when it is a file.
func NewStdio(stdin io.Reader, stdout, stderr io.Writer) (*Stdio, error) {
	c := &Stdio{}
	if f, ok := stdin.(*os.File); ok {
		c.Stdin = f
	}
	var err error
	if c.Stdout, err = c.output(stdout); err != nil {
		return nil, err
	}
	if c.Stderr, err = c.output(stderr); err != nil {
		c.Started() // stdout's pipe, if it got one: its copy then ends
		return nil, err
	}
	return c, nil
}

func (c *Stdio) output(w io.Writer) (*os.File, error) {
	if f, ok := procwalk.FileOf(w); ok { // the command's own lines are not ours to cut
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

// Started closes our copies of the pipes' write ends, once the command
// has them: the copies then end when the tree's copies close.
func (c *Stdio) Started() {
	for _, f := range c.closeAfter {
		f.Close()
	}
}

// Wait waits up to d for the output copies to finish, and says whether
// they did. A copy still running (a daemonized child holds the pipe) goes
// on writing: the caller is about to exit.
func (c *Stdio) Wait(d time.Duration) (finished bool) {
	done := make(chan struct{})
	go func() { c.copies.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// ExitStatus is the shell's view of a wait status: the exit code, or
// 128+N for death by signal N.
func ExitStatus(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// ExitLimit is a supervisor's exit code for a command it ended for
// breaking a limit, as timeout(1)'s.
const ExitLimit = 124

// ExitCode is the exit code a supervisor reports for r: ExitLimit when a
// limit was enforced, else the command's own (ExitStatus). The error says
// why there is none: a limit was broken and ending the tree signalled
// nothing (Unenforced, wrapped), or the command was never reaped.
func (r *SuperviseResult) ExitCode() (int, error) {
	switch {
	case r.Enforced != "" && r.Unenforced != nil:
		return 0, fmt.Errorf("broke a limit and could not be stopped: %w", r.Unenforced)
	case r.Enforced != "":
		return ExitLimit, nil
	case r.Status == nil:
		return 0, errors.New("was never reaped")
	}
	return ExitStatus(*r.Status), nil
}

// Foreground reports whether this process is in the foreground process
// group of the terminal on stdin (SuperviseConfig.Foreground): then the
// keyboard's INT and QUIT (and a hangup's HUP) reach the command
// directly, because it shares our process group, and forwarding them
// would deliver them twice.
func Foreground(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	if !ok || f == nil {
		return false
	}
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
