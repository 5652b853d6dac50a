package main

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// worker.go runs scripts in a worker process: procwalk re-executed by
// itself (/proc/self/exe script-worker), under limits the kernel enforces
// (worker_child.go). The parent keeps every outside effect: it writes what
// the worker prints, logs and emits, and kills the worker when a run
// outlives its deadline by workerGrace. A worker that dies costs one line
// and a new worker at the next run, with the script's state lost; the
// parent (watch, telegraf --execd) goes on gathering.
//
// The worker gathers its own snapshot (its own Monitor, the same flags):
// sending the parent's snapshot over a pipe would cost an encoding of every
// process each run, and the script reads fields lazily from /proc anyway.
// watch and run then scan once, in the worker; telegraf --execd scans twice,
// once for its own lines and once for the script (README: the cost).

// workerArg is argv[1] of a worker. It is no command: only a parent that
// sends it its command line on stdin gets anything from it.
const workerArg = "script-worker"

// workerGrace is how long past its deadline a run may take before the
// parent kills its worker: the worker's own deadline stops a Lua loop
// within a few hundred milliseconds, even on a loaded machine.
const workerGrace = time.Second

// workerGatherWait bounds the time from asking a worker for a run to the
// script starting: the worker's start, its scan and the session grouping
// (plus --interval for run's rates). Reads of /proc are bounded on their
// own; this is only for a worker that hangs before running the script.
const workerGatherWait = time.Minute

// workerStopWait is how long a worker asked to stop (stdin closed, or
// SIGTERM when interrupted) may take before it is killed.
const workerStopWait = 5 * time.Second

// workerStart is the first message on a worker's stdin: the command line it
// runs, as the parent got it (flags, env and the config file are read again
// by the worker, the same way).
type workerStart struct{ Args []string }

// workerTick asks the worker for one run (run and watch: a scan and a run;
// telegraf: a gather and the hook).
type workerTick struct{}

// workerPhase marks where a run is, so that the parent's deadline counts
// what the script's own deadline counts.
type workerPhase int

const (
	phaseNone    workerPhase = iota
	phaseRunning             // the script starts: the deadline runs
	phasePause               // a kill waits out its grace: the deadline stops
	phaseResume              // the kill is done: the deadline goes on
)

// workerMsg is one message from a worker: exactly one field is set.
type workerMsg struct {
	Stdout, Stderr []byte            // to write, as the in-process run would
	Emit           *workerEmit       // telegraf: a metric for the batch
	Action         *kill.ActionEvent // telegraf: a kill's outcome for the batch
	Phase          workerPhase
	Done           *workerDone
}

// workerEmit is a metric a script emitted, already checked by the worker's
// own batch.
type workerEmit struct {
	Measurement string
	Tags        map[string]string
	Fields      map[string]any
}

// workerDone ends a run: its error (the message, the exit code it means)
// and the snapshot's visibility note.
type workerDone struct {
	Err  string
	Code int
	Note string
}

// err returns the run's error, or nil.
func (d workerDone) err() error {
	if d.Err == "" {
		return nil
	}
	return &exitErr{Code: d.Code, Err: errors.New(d.Err)}
}

// errWorker wraps the error of a run whose worker died or was killed.
var errWorker = errors.New("the script's worker process")

// scriptWorker is the parent's side of a worker, started at the first run
// and again after one dies. Not safe for concurrent use.
type scriptWorker struct {
	exe        string   // the binary to run: /proc/self/exe
	args       []string // the command line the worker runs
	timeout    time.Duration
	gatherWait time.Duration
	stdout     io.Writer
	stderr     io.Writer
	emit       func(workerEmit)         // nil: emits are not expected
	action     func(e kill.ActionEvent) // nil: actions are not expected

	cmd  *exec.Cmd
	ctl  *gob.Encoder
	ctlW *os.File
	msgs chan workerMsg
	out  *crashOutput
	// peakRSS is the last worker's peak resident memory, once it ended.
	peakRSS uint64
}

// start starts a worker and sends it the command line.
func (w *scriptWorker) start() error {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return err
	}
	msgR, msgW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return err
	}
	cmd := exec.Command(w.exe, workerArg)
	cmd.Stdin = ctlR
	// The worker says everything through fd 3; fd 1 and 2 carry only what
	// the Go runtime writes when it dies, kept to name the cause.
	w.out = &crashOutput{}
	cmd.Stdout, cmd.Stderr = w.out, w.out
	cmd.ExtraFiles = []*os.File{msgW}
	// Without goroutine dumps a crash is a few lines; a dump of a deep
	// stack would be megabytes nobody reads.
	cmd.Env = append(os.Environ(), "GOTRACEBACK=none")
	// A parent that dies takes its worker along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	ctlR.Close()
	msgW.Close()
	if err != nil {
		ctlW.Close()
		msgR.Close()
		return fmt.Errorf("starting the script's worker process: %w", err)
	}
	w.cmd, w.ctlW, w.ctl = cmd, ctlW, gob.NewEncoder(ctlW)
	w.msgs = make(chan workerMsg, 16)
	go func() { // ends when the worker's fd 3 closes: it exited
		defer close(w.msgs)
		defer msgR.Close()
		dec := gob.NewDecoder(msgR)
		for {
			var m workerMsg
			if dec.Decode(&m) != nil {
				return
			}
			w.msgs <- m
		}
	}()
	if err := w.ctl.Encode(workerStart{Args: w.args}); err != nil {
		return w.died(fmt.Sprintf("did not take its command line (%v)", err))
	}
	return nil
}

// tick asks the worker for one run and relays its output until the run
// ends. The error is the run's (done.err()) or a worker's death, which
// wraps errWorker; ctx ending stops the worker and returns ctx's error.
func (w *scriptWorker) tick(ctx context.Context) (workerDone, error) {
	if w.cmd == nil {
		if err := w.start(); err != nil {
			return workerDone{}, err
		}
	}
	if err := w.ctl.Encode(workerTick{}); err != nil {
		return workerDone{}, w.died("")
	}
	timer := time.NewTimer(w.gatherWait)
	defer timer.Stop()
	var left time.Duration // of the deadline, while paused
	var since time.Time
	running := false
	for {
		select {
		case <-ctx.Done():
			w.stop(syscall.SIGTERM)
			return workerDone{}, ctx.Err()
		case <-timer.C:
			w.cmd.Process.Kill()
			if running {
				return workerDone{}, w.died(fmt.Sprintf("ran past the script's %v deadline by %v and was killed", w.timeout, workerGrace))
			}
			return workerDone{}, w.died(fmt.Sprintf("did not start the script within %v and was killed", w.gatherWait))
		case m, ok := <-w.msgs:
			switch {
			case !ok:
				return workerDone{}, w.died("")
			case m.Stdout != nil:
				w.stdout.Write(m.Stdout)
			case m.Stderr != nil:
				w.stderr.Write(m.Stderr)
			case m.Emit != nil && w.emit != nil:
				w.emit(*m.Emit)
			case m.Action != nil && w.action != nil:
				w.action(*m.Action)
			case m.Phase == phaseRunning:
				running, left, since = true, w.timeout+workerGrace, time.Now()
				timer.Reset(left)
			case m.Phase == phasePause && running:
				timer.Stop()
				left -= time.Since(since)
			case m.Phase == phaseResume && running:
				since = time.Now()
				timer.Reset(max(left, 0))
			case m.Done != nil:
				return *m.Done, nil
			}
		}
	}
}

// close asks the worker to end (its stdin closes) and waits for it.
func (w *scriptWorker) close() {
	if w.cmd != nil {
		w.stop(0)
	}
}

// stop ends the worker: sig first (0: only stdin's end), SIGKILL after
// workerStopWait. It waits for the worker and its output.
func (w *scriptWorker) stop(sig syscall.Signal) {
	if sig != 0 {
		w.cmd.Process.Signal(sig)
	}
	w.ctlW.Close()
	kill := time.AfterFunc(workerStopWait, func() { w.cmd.Process.Kill() })
	for range w.msgs { // what it says while it stops is not wanted
	}
	w.wait()
	kill.Stop()
}

// wait reaps the worker, once its messages have ended, and forgets it.
func (w *scriptWorker) wait() {
	w.cmd.Wait()
	if ru, ok := w.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		w.peakRSS = uint64(ru.Maxrss) << 10 // kernel's unit: KiB
	}
	w.cmd, w.ctl, w.msgs = nil, nil, nil
	w.ctlW.Close()
}

// died reaps a worker that ended in the middle of a run and returns the
// error saying why, in one line. why says it when the parent knows (it
// killed the worker); else the exit status and the runtime's last words do.
func (w *scriptWorker) died(why string) error {
	pid := w.cmd.Process.Pid
	w.cmd.Process.Kill() // when it only closed its messages
	for range w.msgs {
	}
	state := w.cmd
	w.wait()
	if why == "" {
		why = deathCause(state.ProcessState, w.out.cause())
	}
	return fmt.Errorf("%w (pid %d) %s after a peak RSS of %s; the script's state was lost, and the next run starts a new worker",
		errWorker, pid, why, procwalk.FormatBytes(w.peakRSS))
}

// deathCause says how a worker ended, from its exit status and the first
// line of the Go runtime's crash output.
func deathCause(ps *os.ProcessState, crash string) string {
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return "was killed by SIGKILL (the kernel's OOM killer, or another process)"
	case ws.Signaled():
		return "was killed by " + ws.Signal().String()
	case ps.ExitCode() == workerExitCPU:
		return "used up its CPU time limit (RLIMIT_CPU)"
	case strings.Contains(crash, "out of memory"), strings.Contains(crash, "cannot allocate memory"):
		return "ran out of its address-space limit (RLIMIT_AS): " + printable(crash)
	case crash != "":
		return "crashed: " + printable(crash)
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode())
}

// crashOutput keeps the start of what a worker writes to fd 1 and 2: only
// the Go runtime does, when it dies.
type crashOutput struct {
	mu  sync.Mutex
	buf []byte
}

// maxCrashOutput is how much of a worker's crash output is kept: the cause
// is in its first lines.
const maxCrashOutput = 8 << 10

func (c *crashOutput) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := maxCrashOutput - len(c.buf); n > 0 {
		c.buf = append(c.buf, b[:min(n, len(b))]...)
	}
	return len(b), nil
}

// cause returns the first line that says why the runtime stopped
// ("fatal error: stack overflow", "panic: ..."), or the first line.
func (c *crashOutput) cause() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(c.buf)), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[0]
}
