//go:build linux

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

	"golang.org/x/sys/unix"
)

// guard_reaper.go is the process plumbing of `procwalk guard` around
// kill.Supervise: the command's stdio, the shell's exit codes, and
// whether the terminal already delivers keyboard signals to the command.
//
// Supervise reaps with wait4(-1): any child of this process. That is right
// in the procwalk binary, where guard is the only thing running; code that
// embeds run() next to other child processes must not run guard.

// exitStatus is the shell's view of a wait status: the exit code, or 128+N
// for death by signal N.
func exitStatus(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
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
	if f, ok := fileOf(w); ok { // the command's own lines are not ours to cut
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
