//go:build linux

package kill

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sentinel.go makes sure that nothing a Killer stopped stays stopped, and
// no cgroup it froze stays frozen, whatever ends this process: SIGSTOP and
// cgroup.freeze outlive the process that set them (FACTS "Learned from
// testing"), and SIGKILL, the OOM killer or a hung-up terminal give it no
// chance to undo them.
//
// A Sentinel is a small process of its own (the same binary, re-executed:
// ServeSentinel is its whole work), in a session of its own so that
// signals for our process group or terminal miss it, ignoring every
// signal that can be ignored. Before an execution stops a process it hands
// the sentinel a duplicate of that process's pidfd, and before it freezes
// a cgroup a descriptor of the cgroup's directory, over a socket pair.
// When this process ends before it has released them, the socket reads
// end-of-file (the kernel closes it with the process), or, while a thread
// of ours is stuck in the kernel and keeps our descriptors open, our main
// thread is seen dead: the sentinel then sends SIGCONT through every
// pidfd it holds and writes 0 to every cgroup.freeze, says so on its
// stderr, and exits. A message is in the sentinel's socket as soon as the
// send returns, so it is never lost, and nothing is stopped unless the
// sentinel holds it: a failed send means no stop.
//
// Its limits: a sentinel killed itself (SIGKILL to it by pid, its cgroup
// killed with ours) cannot act; a pidfd needs Linux 5.3, and without one
// (or without a sentinel) a Killer stops nothing: it signals the scope
// as it runs and reports what escaped.

// sentinelHello is the sentinel's first message: the protocol's version.
const sentinelHello = "procwalk-sentinel 1"

// Messages to the sentinel: an op byte, a hold id (4 bytes, little endian),
// the descriptors as SCM_RIGHTS.
const (
	opHoldProcs  = 'p' // the descriptors are pidfds of processes about to be stopped
	opHoldCgroup = 'c' // the descriptor is a cgroup directory about to be frozen
	opRelease    = 'r' // the hold's processes and cgroups run again: forget them
	opResume     = 'R' // continue and thaw the hold's now, then forget them; answer opDone
	opResumeAll  = 'A' // continue and thaw every hold now; answer opDone
	opDone       = 'k'
)

// maxFDsPerMessage stays below the kernel's limit of SCM_RIGHTS
// descriptors in one message (253).
const maxFDsPerMessage = 250

// sentinelStartWait bounds the wait for a new sentinel's hello: the binary
// starting on a loaded machine.
const sentinelStartWait = 10 * time.Second

// parentCheck paces the sentinel's look at its parent's main thread.
const parentCheck = 200 * time.Millisecond

// SentinelCommand says how to start a sentinel: a program that calls
// ServeSentinel with the descriptor it finds as fd 3.
type SentinelCommand struct {
	Path string
	Args []string // after Path
	Env  []string // nil: this process's environment
	// Stderr receives the sentinel's word when it had to act; nil
	// discards it.
	Stderr *os.File
}

// Sentinel is the client of a sentinel process, shared by the Killers
// given it (Config.Sentinel); safe for concurrent use. The process runs
// while an execution holds something through it (and from a Plan that
// will stop something, so that no walk takes it for a member), and is
// ended when the last hold is released: between kills none runs. Close
// it when done.
type Sentinel struct {
	cmd SentinelCommand

	mu       sync.Mutex
	err      error // why it could not start or went away, until it is stopped
	proc     *exec.Cmd
	fd       int
	holds    int  // holds not released
	released bool // Release or Close was called: nothing may be held any more
	next     uint32
	pids     map[int]bool // every sentinel process started, for a reaper of all children
}

// NewSentinel returns a sentinel started by cmd when first needed.
func NewSentinel(cmd SentinelCommand) *Sentinel { return &Sentinel{cmd: cmd, fd: -1} }

// Start starts the sentinel process if it has not been, and returns why
// it cannot hold anything.
func (s *Sentinel) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

func (s *Sentinel) startLocked() error {
	switch {
	case s.released:
		return errors.New("sentinel released: procwalk is stopping")
	case s.proc != nil:
		return s.err
	}
	s.err = s.spawn()
	return s.err
}

// Started reports whether pid is a sentinel process this Sentinel
// started: a reaper of every child (guard) reaps those too.
func (s *Sentinel) Started(pid int) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pids[pid]
}

func (s *Sentinel) spawn() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sentinel: socketpair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "sentinel socket")
	defer theirs.Close()
	cmd := exec.Command(s.cmd.Path, s.cmd.Args...)
	cmd.Env = s.cmd.Env
	cmd.ExtraFiles = []*os.File{theirs}
	if s.cmd.Stderr != nil {
		cmd.Stderr = s.cmd.Stderr
	}
	// A session of its own: no signal for our process group or terminal
	// reaches it (timeout(1) signals the group, a hangup the session).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		unix.Close(fds[0])
		return fmt.Errorf("sentinel: starting %s: %w", s.cmd.Path, err)
	}
	s.proc, s.fd = cmd, fds[0]
	if s.pids == nil {
		s.pids = make(map[int]bool)
	}
	s.pids[cmd.Process.Pid] = true
	buf := make([]byte, 64)
	n, err := recvTimeout(s.fd, buf, sentinelStartWait)
	if err != nil || string(buf[:n]) != sentinelHello {
		s.stop()
		return fmt.Errorf("sentinel: %s did not answer as a sentinel (%q, %v)", s.cmd.Path, buf[:n], err)
	}
	return nil
}

// recvTimeout reads one message from fd, waiting up to d.
func recvTimeout(fd int, buf []byte, d time.Duration) (int, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(d); ; {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) || err == nil && n == 0 {
			continue
		}
		if err != nil {
			return 0, err
		}
		n, _, _, _, err = unix.Recvmsg(fd, buf, nil, 0)
		if n == 0 && err == nil {
			return 0, io.EOF
		}
		return n, err
	}
}

// stop closes our end and waits for the sentinel; with the socket closed
// and nothing held it exits at once. A later hold starts another. Called
// with s.mu held.
func (s *Sentinel) stop() {
	s.err = nil
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
	if s.proc != nil {
		s.proc.Wait() // ECHILD when a reaper of all children got it first (guard): fine
		s.proc = nil
	}
}

// PID is the sentinel process's pid, 0 when it is not running. It is
// procwalk's own: a Killer never signals it.
func (s *Sentinel) PID() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.Process == nil {
		return 0
	}
	return s.proc.Process.Pid
}

// Release has the sentinel continue and thaw everything it holds now, and
// refuses every later hold, so that nothing is stopped any more: for a
// process about to die of a second SIGINT or SIGTERM. It waits up to a
// second for the sentinel's answer.
func (s *Sentinel) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = true
	if s.fd < 0 {
		return nil
	}
	return s.request(opResumeAll, 0, nil)
}

// Close ends the sentinel. What is still held is continued and thawed
// first (nothing is, after executions that ended normally).
func (s *Sentinel) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.fd >= 0 {
		err = s.request(opResumeAll, 0, nil)
	}
	s.stop()
	s.released = true
	return err
}

// request sends op and waits for the sentinel's answer. Called with s.mu
// held.
func (s *Sentinel) request(op byte, id uint32, fds []int) error {
	if err := s.send(op, id, fds); err != nil {
		return err
	}
	buf := make([]byte, 8)
	n, err := recvTimeout(s.fd, buf, time.Second)
	if err == nil && (n != 1 || buf[0] != opDone) {
		err = fmt.Errorf("sentinel answered %q", buf[:n])
	}
	return err
}

func (s *Sentinel) send(op byte, id uint32, fds []int) error {
	if s.fd < 0 {
		return errors.New("sentinel not running")
	}
	msg := make([]byte, 5)
	msg[0] = op
	binary.LittleEndian.PutUint32(msg[1:], id)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(s.fd, msg, oob, nil, unix.MSG_NOSIGNAL); err != nil {
		s.err = fmt.Errorf("sentinel gone: %w", err)
		return s.err
	}
	return nil
}

// sentinelHold is what one execution has the sentinel hold.
type sentinelHold struct {
	s  *Sentinel
	id uint32
}

// hold starts a hold, starting the sentinel if need be.
func (s *Sentinel) hold() (*sentinelHold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(); err != nil {
		return nil, err
	}
	s.next++
	s.holds++
	return &sentinelHold{s: s, id: s.next}, nil
}

// procs has the sentinel hold the processes of pidfds (which stay ours
// too) before they are stopped.
func (h *sentinelHold) procs(pidfds []int) error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.released {
		return errors.New("sentinel released: procwalk is stopping")
	}
	for len(pidfds) > 0 {
		n := min(len(pidfds), maxFDsPerMessage)
		if err := h.s.send(opHoldProcs, h.id, pidfds[:n]); err != nil {
			return err
		}
		pidfds = pidfds[n:]
	}
	return nil
}

// cgroup has the sentinel hold the cgroup at dir before it is frozen.
func (h *sentinelHold) cgroup(dir string) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.released {
		return errors.New("sentinel released: procwalk is stopping")
	}
	return h.s.send(opHoldCgroup, h.id, []int{fd})
}

// release ends the hold: with resume, the sentinel first continues and
// thaws what it holds (a safety net: the execution has done so itself),
// and the call waits for it. The last hold released ends the sentinel.
func (h *sentinelHold) release(resume bool) error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	var err error
	switch {
	case h.s.fd < 0:
	case resume:
		err = h.s.request(opResume, h.id, nil)
	default:
		err = h.s.send(opRelease, h.id, nil)
	}
	if h.s.holds--; h.s.holds == 0 {
		h.s.stop()
	}
	return err
}

// ServeSentinel is the sentinel process's whole work: conn is its end of
// the socket pair (fd 3), stderr where it says what it did. It returns
// when procwalk has released everything and closed the socket, or after it
// has continued and thawed what procwalk left stopped when it died.
func ServeSentinel(conn *os.File, stderr io.Writer) error {
	// Ours to ignore: nothing but SIGKILL may end us before our work is
	// done (the terminal's and the group's signals miss us already).
	ignoreSignals()
	// Best effort: the OOM killer should pick anything but us (root only).
	os.WriteFile("/proc/self/oom_score_adj", []byte("-1000"), 0)
	fd := int(conn.Fd())
	parent := os.Getppid()
	if err := unix.Sendmsg(fd, []byte(sentinelHello), nil, nil, unix.MSG_NOSIGNAL); err != nil {
		return err
	}
	w := &warden{holds: make(map[uint32]*heldSet)}
	defer w.closeAll()
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4*maxFDsPerMessage))
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(parentCheck/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			if why := parentGone(parent); why != "" {
				w.resumeAll(stderr, parent, why)
				return nil
			}
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			w.resumeAll(stderr, parent, "ended")
			return nil
		}
		got := receivedFDs(oob[:oobn])
		if n < 5 {
			closeFDs(got)
			continue
		}
		op, id := buf[0], binary.LittleEndian.Uint32(buf[1:5])
		switch op {
		case opHoldProcs:
			w.set(id).pidfds = append(w.set(id).pidfds, got...)
		case opHoldCgroup:
			w.set(id).cgroups = append(w.set(id).cgroups, got...)
		case opRelease:
			w.forget(id)
		case opResume:
			if h := w.holds[id]; h != nil {
				h.resume()
			}
			w.forget(id)
			unix.Sendmsg(fd, []byte{opDone}, nil, nil, unix.MSG_NOSIGNAL)
		case opResumeAll:
			for id, h := range w.holds {
				h.resume()
				w.forget(id)
			}
			unix.Sendmsg(fd, []byte{opDone}, nil, nil, unix.MSG_NOSIGNAL)
		default:
			closeFDs(got)
		}
	}
}

// parentGone says why procwalk (our parent, pid parent) is no longer
// there to release what it holds: we were reparented (it has exited), or
// its main thread has exited while another thread of it is stuck in the
// kernel, which keeps its descriptors, our socket among them, open. ""
// while it runs.
func parentGone(parent int) string {
	if os.Getppid() != parent {
		return "ended"
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(parent) + "/stat")
	if err != nil {
		return "ended"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X') {
		return "is exiting (its main thread has ended; another may be stuck in the kernel)"
	}
	return ""
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// warden is the sentinel's state: what each hold holds.
type warden struct{ holds map[uint32]*heldSet }

type heldSet struct{ pidfds, cgroups []int }

func (w *warden) set(id uint32) *heldSet {
	if w.holds[id] == nil {
		w.holds[id] = &heldSet{}
	}
	return w.holds[id]
}

func (w *warden) forget(id uint32) {
	if h := w.holds[id]; h != nil {
		closeFDs(h.pidfds)
		closeFDs(h.cgroups)
		delete(w.holds, id)
	}
}

func (w *warden) closeAll() {
	for id := range w.holds {
		w.forget(id)
	}
}

// resumeAll continues and thaws every hold, after procwalk (pid parent)
// ended without releasing them, and says so.
func (w *warden) resumeAll(stderr io.Writer, parent int, why string) {
	procs, cgroups := 0, 0
	for id, h := range w.holds {
		p, c := h.resume()
		procs, cgroups = procs+p, cgroups+c
		w.forget(id)
	}
	if procs+cgroups > 0 {
		fmt.Fprintf(stderr, "procwalk: sentinel: procwalk (pid %d) %s while it held %d processes stopped and %d cgroups frozen: sent them SIGCONT and thawed them\n",
			parent, why, procs, cgroups)
	}
}

// resume sends SIGCONT to every process held and writes 0 to the
// cgroup.freeze of every cgroup held; it returns how many of each it
// reached (processes gone by now are not counted).
func (h *heldSet) resume() (procs, cgroups int) {
	for _, fd := range h.cgroups {
		f, err := unix.Openat(fd, "cgroup.freeze", unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if _, err := unix.Write(f, []byte("0")); err == nil {
			cgroups++
		}
		unix.Close(f)
	}
	for _, fd := range h.pidfds {
		if unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0) == nil {
			procs++
		}
	}
	return procs, cgroups
}

func ignoreSignals() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM)
}

// keeper holds, for one execution, what it stops and freezes: the
// sentinel (sentinelKeeper); tests use a fake.
type keeper interface {
	procs(hs []handle) error
	cgroup(dir string) error
	release(resume bool) error
}

// errNoSentinel: the Killer has no sentinel, so it stops nothing.
var errNoSentinel = errors.New("no sentinel to continue them should procwalk die (Config.Sentinel)")

type sentinelKeeper struct{ h *sentinelHold }

func (s sentinelKeeper) procs(hs []handle) error {
	fds := make([]int, 0, len(hs))
	for _, h := range hs {
		ph, ok := h.(*ProcHandle)
		if !ok || ph.pidfd < 0 {
			return errors.New("no pidfd (Linux before 5.3) for the sentinel to hold")
		}
		fds = append(fds, ph.pidfd)
	}
	return s.h.procs(fds)
}

func (s sentinelKeeper) cgroup(dir string) error   { return s.h.cgroup(dir) }
func (s sentinelKeeper) release(resume bool) error { return s.h.release(resume) }

// newKeeper returns the keeper of one execution.
func (k *Killer) newKeeper() (keeper, error) {
	if k.keep != nil {
		return k.keep()
	}
	if k.cfg.Sentinel == nil {
		return nil, errNoSentinel
	}
	h, err := k.cfg.Sentinel.hold()
	if err != nil {
		return nil, err
	}
	return sentinelKeeper{h}, nil
}

// HoldSignals keeps what could end this process from the outside from
// ending a kill that has begun, until the function it returns is called:
// SIGPIPE (a reader of stdout or stderr gone, such as a `| cat` in the
// kill's scope, which the first signal ends), so that such a write fails
// with EPIPE instead; and SIGHUP (a terminal or an ssh connection gone),
// so that every stage is finished and the exit status is the kill's own.
// ctx is cancelled on the first SIGINT or SIGTERM (the caller's clean
// stop); the second ends this process by that signal, but only after the
// sentinel s (nil: none) has continued and thawed whatever is stopped or
// frozen (timeout(1) sends its TERM to a process and to its process
// group: two at once). It changes this process's signal handling: tested
// where a process of its own runs a kill (cmd/procwalk's
// TestIntegrationKillSecondSignal, kill_output_test.go).
func HoldSignals(ctx context.Context, s *Sentinel) (stop func()) {
	held := make(chan os.Signal, 4)
	signal.Notify(held, syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	ends := 0
	if ctx.Err() != nil {
		ends = 1 // the first came before the kill began
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sig := range held {
			if sig != syscall.SIGINT && sig != syscall.SIGTERM {
				continue
			}
			if ends++; ends < 2 {
				continue
			}
			if s != nil {
				s.Release()
			}
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}
	}()
	return func() {
		signal.Stop(held)
		close(held)
		<-done
	}
}
