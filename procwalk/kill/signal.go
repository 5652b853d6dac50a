//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// signal.go signals one process named by its ProcID, never by a bare pid
// (FACTS "Killing safely"):
//
//  1. pidfd_open(2) the pid (Linux 5.3+). The fd pins that process: it can
//     never refer to another one, even after the pid is reused.
//  2. AFTER opening, re-read <root>/<pid>/stat and compare the start time
//     with the recorded one. A mismatch means the pid was reused before we
//     opened it: refuse (ErrIdentityChanged).
//  3. Send signals with pidfd_send_signal(2) through that fd and learn of the
//     exit by polling it (readable once the process has exited).
//
// Fallback when the kernel has no pidfd_open (ENOSYS, before 5.3): the start
// time is re-checked right before every kill(2), and exit is detected by
// re-reading stat. A pid reused in the microseconds between that check and
// kill(2) would still be hit; that window is why pidfds exist.

// Sentinel errors of signalling, besides ErrGone and ErrDenied.
var (
	// ErrIdentityChanged means the pid now belongs to another process than
	// the recorded ProcID: nothing was signalled.
	ErrIdentityChanged = errors.New("pid now belongs to another process")
	// ErrEscaped means a process of the scope was found alive after the
	// end, never signalled: it joined after the last walk or was orphaned.
	ErrEscaped = errors.New("still alive after the kill, never signalled (joined the scope after the last walk, or orphaned by a member's death)")
	// ErrLeft means the scope's cgroup still holds processes procwalk
	// cannot see after the end (Report.Left).
	ErrLeft = errors.New("the scope is not empty")
)

// ProcHandle is a verified handle on one process. It is not safe for
// concurrent use. Close it when done.
type ProcHandle struct {
	ID    procwalk.ProcID
	Comm  string // comm read while verifying
	fs    procwalk.FS
	pidfd int // -1 in the fallback mode
}

// OpenProc opens a handle on id in fs and verifies it is still the same process.
// It fails with ErrGone when the process has exited (including a zombie
// waiting to be reaped), ErrIdentityChanged when the pid was reused,
// procwalk.ErrForeignProc when fs is another pid namespace's procfs, and procwalk.ErrBadTarget
// for a pid <= 0.
func OpenProc(fs procwalk.FS, id procwalk.ProcID) (*ProcHandle, error) {
	if id.PID <= 0 {
		return nil, fmt.Errorf("%w %d", procwalk.ErrBadTarget, id.PID)
	}
	if err := fs.CheckOwnNamespace(); err != nil {
		return nil, err
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	switch {
	case errors.Is(err, unix.ENOSYS):
		fd = -1 // kernel before 5.3: fallback mode
	case errors.Is(err, unix.ESRCH):
		return nil, fmt.Errorf("pid %d: %w", id.PID, procwalk.ErrGone)
	case err != nil:
		return nil, fmt.Errorf("pidfd_open %d: %w", id.PID, procwalk.Classify(err))
	}
	h := &ProcHandle{ID: id, fs: fs, pidfd: fd}
	// Verify AFTER opening: from here on the fd cannot move to another
	// process, so a match now holds for every signal sent through it.
	comm, err := h.verify()
	if err != nil {
		h.Close()
		return nil, err
	}
	h.Comm = comm
	return h, nil
}

// verify re-reads stat and checks the start time; a zombie counts as gone.
func (h *ProcHandle) verify() (comm string, err error) {
	st, err := h.fs.ReadStat(h.ID.PID)
	if procwalk.IsGone(err) {
		return "", fmt.Errorf("pid %d: %w", h.ID.PID, procwalk.ErrGone)
	}
	if err != nil {
		return "", err
	}
	if st.StartTicks != h.ID.StartTicks {
		return "", fmt.Errorf("%w: pid %d started at tick %d, expected %d (%s)",
			ErrIdentityChanged, h.ID.PID, st.StartTicks, h.ID.StartTicks, st.Comm)
	}
	if st.State == 'Z' || st.State == 'X' {
		return "", fmt.Errorf("pid %d has exited (zombie waiting for its parent): %w", h.ID.PID, procwalk.ErrGone)
	}
	return st.Comm, nil
}

// Pidfd reports whether the handle holds a pidfd (false in the fallback
// mode for kernels before 5.3).
func (h *ProcHandle) Pidfd() bool { return h.pidfd >= 0 }

// Signal sends sig to the process. ErrGone: it has exited; ErrDenied: we may
// not signal it; ErrIdentityChanged (fallback mode only): the pid was reused.
func (h *ProcHandle) Signal(sig syscall.Signal) error {
	var err error
	if h.pidfd >= 0 {
		err = unix.PidfdSendSignal(h.pidfd, sig, nil, 0)
	} else {
		if _, verr := h.verify(); verr != nil {
			return verr
		}
		err = unix.Kill(h.ID.PID, sig) // PID > 0: checked in OpenProc
	}
	if err != nil {
		return fmt.Errorf("signal %s to pid %d: %w", SignalName(sig), h.ID.PID, procwalk.Classify(err))
	}
	return nil
}

// Stopped reports, after a SIGSTOP was sent, whether waiting for it to
// take effect is over: the process is stopped (state T or t in stat, after
// SIGSTOP or under a tracer) or no longer runs under this identity (either
// way it forks no more), or it will not stop: a single-threaded process
// that is not stopped and has no SIGSTOP pending either took the signal,
// stopped and was continued since by someone else, or lost it before
// taking it (a SIGCONT discards a pending STOP; the kernel drops a STOP
// sent to a pid namespace's init or to a process that is exiting). tmux
// does the first to a pane's process group as soon as the pane's process
// stops (server_child_stopped sends SIGCONT), so a pane's shell never
// stays stopped. (The kernel dequeues SIGSTOP and stops a single thread
// under one lock, the lock status is read under, so no stop is pending
// unseen in between. A multi-threaded process stops thread by thread after
// the dequeue, so it is waited for as before.) A stat it cannot read counts
// as stopped: there is nothing to wait for; a status it cannot read, as
// still running.
func (h *ProcHandle) Stopped() bool {
	st, err := h.fs.ReadStat(h.ID.PID)
	if err != nil || st.StartTicks != h.ID.StartTicks {
		return true
	}
	switch st.State {
	case 'T', 't', 'Z', 'X':
		return true
	}
	if st.Threads != 1 {
		return false
	}
	status, err := h.fs.ReadStatus(h.ID.PID)
	return err == nil && status.PendingSignals&(1<<(syscall.SIGSTOP-1)) == 0
}

// pollStep bounds one poll(2) so that Wait notices a cancelled context, and
// paces the fallback mode's stat re-reads.
const pollStep = 20 * time.Millisecond

// Wait waits up to d for the process to exit and reports whether it did. A
// zero d only checks. It returns early, false, when ctx is done.
func (h *ProcHandle) Wait(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if h.exited(0) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		if h.exited(min(left, pollStep)) {
			return true
		}
	}
}

// exited polls the pidfd for up to d (fallback: sleeps d, then re-reads stat).
func (h *ProcHandle) exited(d time.Duration) bool {
	if h.pidfd < 0 {
		if d > 0 {
			time.Sleep(d)
		}
		_, err := h.verify()
		return procwalk.IsGone(err) || errors.Is(err, ErrIdentityChanged) // not a read denied or malformed
	}
	fds := []unix.PollFd{{Fd: int32(h.pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			time.Sleep(d) // EBADF and the like: do not spin
			return false
		}
		return n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0
	}
}

// ReleaseMemory asks the kernel to free a dying process's memory now
// (process_mrelease(2), Linux 5.15+) instead of when its last thread has
// finished exiting. Call it after SIGKILL; it fails harmlessly (EINVAL) when
// the process is not dying, and is a no-op in the fallback mode.
func (h *ProcHandle) ReleaseMemory() error {
	if h.pidfd < 0 {
		return nil
	}
	_, _, e := unix.Syscall(unix.SYS_PROCESS_MRELEASE, uintptr(h.pidfd), 0, 0)
	if e != 0 {
		return fmt.Errorf("process_mrelease pid %d: %w", h.ID.PID, e)
	}
	return nil
}

// Close releases the pidfd.
func (h *ProcHandle) Close() error {
	if h.pidfd < 0 {
		return nil
	}
	err := unix.Close(h.pidfd)
	h.pidfd = -1
	return err
}

// WaitReleased waits up to timeout until the process id no longer holds
// memory: it is gone, its pid belongs to another process, or it is a zombie
// whose resident set is empty. Use it after a memory-motivated kill, before
// choosing another victim (earlyoom #121). It returns nil once the memory
// is released, an error wrapping os.ErrDeadlineExceeded after timeout, and
// ctx.Err() when ctx ends first.
func WaitReleased(ctx context.Context, fs procwalk.FS, id procwalk.ProcID, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		held, err := fs.HoldsMemory(id)
		if err != nil {
			return err
		}
		if !held {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d still holds memory after %s: %w", id.PID, timeout, os.ErrDeadlineExceeded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollStep):
		}
	}
}

// ParseSignal reads a signal name or number: "TERM", "SIGTERM", "term",
// "15". Signal 0 (a mere existence check) is refused.
func ParseSignal(s string) (syscall.Signal, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(t); err == nil {
		if n <= 0 || n > 64 || unix.SignalName(syscall.Signal(n)) == "" && n < 32 {
			return 0, fmt.Errorf("bad signal %q: use a name such as TERM, INT, HUP, KILL or a number 1-64", s)
		}
		return syscall.Signal(n), nil
	}
	if !strings.HasPrefix(t, "SIG") {
		t = "SIG" + t
	}
	sig := unix.SignalNum(t)
	if sig == 0 {
		return 0, fmt.Errorf("bad signal %q: use a name such as TERM, INT, HUP, KILL or a number 1-64", s)
	}
	return sig, nil
}

// SignalName is the short name of sig: "TERM", "KILL", or its number when
// it has no name (real-time signals).
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}
