//go:build linux

package runner

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

// stdout.go ends a run or a watch when nobody reads its output any more:
// procwalk watch agents | head -1 exits once head has its line, with the
// exit code its help gives (0), never killed by SIGPIPE.

// Stdout is the stdout of a run that stops when its reader has gone: a
// write failing with EPIPE cancels the run's context and is remembered.
type Stdout struct {
	w      io.Writer
	cancel context.CancelFunc
	gone   atomic.Bool
}

// WatchStdout returns ctx, cancelled when stdout's reader goes (a write
// fails with EPIPE, or, with poll, poll(2) says so between writes), and
// the writer to use for stdout. stop releases what it holds; call it when
// the run ends. Until then SIGPIPE, which Go raises for a write to a
// closed fd 1, is caught so that the write fails with EPIPE instead.
func WatchStdout(ctx context.Context, stdout io.Writer, poll bool) (context.Context, *Stdout, func()) {
	ctx, cancel := context.WithCancel(ctx)
	rg := &Stdout{w: stdout, cancel: cancel}
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

func (r *Stdout) Write(b []byte) (int, error) {
	n, err := r.w.Write(b)
	if ClosedPipe(err) {
		r.closed()
	}
	return n, err
}

func (r *Stdout) closed() {
	r.gone.Store(true)
	r.cancel()
}

// Gone reports whether stdout's reader went away.
func (r *Stdout) Gone() bool { return r.gone.Load() }

// ClosedPipe reports whether err says the reader of a pipe has gone.
func ClosedPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}

// pollClosed notices a pipe's reader going while nothing is written (watch
// writes once a tick, 10 s apart by default): poll(2) reports POLLERR on
// the write end of a pipe without readers. It returns the function that
// stops the poller and waits for it. A w that is no file is not polled.
func (r *Stdout) pollClosed(w io.Writer) (stop func()) {
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
