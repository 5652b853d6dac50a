//go:build linux

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// stdout.go ends run and watch when nobody reads their output any more:
// procwalk watch agents | head -1 exits once head has its line, with the
// exit code its help gives (0), never killed by SIGPIPE.

// readerGone is the stdout of a run that stops when its reader has gone:
// a write failing with EPIPE cancels the run's context and is remembered.
type readerGone struct {
	w      io.Writer
	cancel context.CancelFunc
	gone   atomic.Bool
}

// watchStdout returns ctx, cancelled when stdout's reader goes (a write
// fails with EPIPE, or, for watch, poll says so between writes), and the
// writer to use for stdout. stop releases what it holds; call it when the
// run ends. Until then SIGPIPE, which Go raises for a write to a closed fd
// 1, is caught so that the write fails with EPIPE instead.
func watchStdout(ctx context.Context, stdout io.Writer, poll bool) (context.Context, *readerGone, func()) {
	ctx, cancel := context.WithCancel(ctx)
	rg := &readerGone{w: stdout, cancel: cancel}
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	stopPoll := func() {}
	if poll {
		stopPoll = rg.pollClosed(stdout)
	}
	return ctx, rg, func() {
		stopPoll()
		signal.Stop(sigpipe)
		cancel()
	}
}

func (r *readerGone) Write(b []byte) (int, error) {
	n, err := r.w.Write(b)
	if closedPipe(err) {
		r.closed()
	}
	return n, err
}

func (r *readerGone) closed() {
	r.gone.Store(true)
	r.cancel()
}

// Gone reports whether stdout's reader went away.
func (r *readerGone) Gone() bool { return r.gone.Load() }

// closedPipe reports whether err says the reader of a pipe has gone.
func closedPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}

// pollClosed notices a pipe's reader going while nothing is written (watch
// writes once a tick, 10 s apart by default): poll(2) reports POLLERR on
// the write end of a pipe without readers. It returns the function that
// stops the poller and waits for it. A w that is no file is not polled.
func (r *readerGone) pollClosed(w io.Writer) (stop func()) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return func() {}
	}
	var wake [2]int // a pipe whose write end stop uses to end the poll
	if err := unix.Pipe2(wake[:], unix.O_CLOEXEC); err != nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fds := []unix.PollFd{{Fd: int32(f.Fd())}, {Fd: int32(wake[0]), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil, fds[1].Revents != 0, fds[0].Revents&unix.POLLNVAL != 0:
				return
			case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				r.closed()
				return
			}
		}
	}()
	return func() {
		unix.Write(wake[1], []byte{0})
		wg.Wait()
		unix.Close(wake[0])
		unix.Close(wake[1])
	}
}

// stdinEnded reports whether r, stdin, is at its end and no one will
// write to it: /dev/null (a character device that is no terminal), a
// regular file, or a pipe or socket whose writers are gone (poll(2) says
// POLLHUP). cron, nohup and </dev/null give such a stdin; Telegraf's
// execd gives a pipe it holds open until it stops us.
func stdinEnded(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return true
	case unix.S_IFCHR:
		return !isTerminal(f)
	case unix.S_IFIFO, unix.S_IFSOCK:
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN | unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n == 1 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) != 0
	}
	return false
}
