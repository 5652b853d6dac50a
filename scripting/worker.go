package scripting

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
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// worker.go runs scripts in a worker process: the host program re-executed
// by itself, under limits the kernel enforces (worker_child.go, and a memory
// cgroup where one can be made: worker_cgroup.go). The parent keeps every
// outside effect: it writes what the worker prints, logs and emits, and
// kills the worker when a run outlives its deadline by workerGrace. A worker
// that dies costs one error and a new worker at the next run, with the
// script's state lost; the parent (watch, telegraf --execd) goes on.
//
// The worker runs on its parent's frame, sent with each run (frame's
// codec: about a microsecond a process, both ends): it never scans /proc,
// so a script costs its run, not a second gather. Fields the frame lacks
// are read when the script asks: io and smaps_rollup by the parent, whose
// one Sampler gives their rates, the others by the worker itself.

// workerGrace is how long past its deadline a run may take before the
// parent kills its worker: the worker's own deadline stops a Lua loop within
// a few hundred milliseconds, even on a loaded machine.
const workerGrace = time.Second

// WorkerGatherWait bounds the time from asking a worker for a run to the
// script starting: the worker's start, its scan and the session grouping.
// Reads of /proc are bounded on their own; this is only for a worker that
// hangs before running the script.
const WorkerGatherWait = time.Minute

// workerStopWait is how long a worker asked to stop (stdin closed, or
// SIGTERM when interrupted) may take before it is killed.
const workerStopWait = 5 * time.Second

// workerExitCPU is the exit status of a worker past its CPU time limit:
// none of procwalk's own (0-2, 124) nor a Go crash's (2).
const workerExitCPU = 125

// ErrWorker wraps the error of a run whose worker died or was killed.
var ErrWorker = errors.New("the script's worker process")

// workerStart is the first message on a worker's stdin: the command line it
// runs, as the parent got it (flags, env and the config file are read again
// by the worker, the same way).
type workerStart struct{ Args []string }

// workerCtl is one message to a worker: exactly one field is set.
type workerCtl struct {
	Tick *workerTick      // run the script on this frame
	Read *workerReadReply // what a workerRead asked for
}

// workerTick asks the worker for one run on Frame (frame.Encoder's bytes;
// the worker's Decoder reads the frames of one Encoder, made with it).
type workerTick struct{ Frame []byte }

// workerRead asks the parent to read Fields of the processes IDs of the
// run's frame: those whose rates its Sampler measures (io, smaps_rollup).
type workerRead struct {
	IDs    []procwalk.ProcID
	Fields procwalk.Fields
}

// workerReadReply answers a workerRead: each process as the parent read
// it, in the order asked; a zero ID for one not in the frame.
type workerReadReply struct{ Procs []procwalk.Process }

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
	Emit           *WorkerEmit       // telegraf: a metric for the batch
	Action         *kill.ActionEvent // telegraf: a kill's outcome for the batch
	Read           *workerRead       // read fields of the frame's processes
	Phase          workerPhase
	Done           *WorkerDone
}

// WorkerEmit is a metric a script emitted, already checked by the worker.
type WorkerEmit struct {
	Measurement string
	Tags        map[string]string
	Fields      map[string]any
}

// WorkerDone ends a run: its error (the message, the exit code it means),
// and the snapshot's visibility note.
type WorkerDone struct {
	Err  string
	Code int
	Note string
}

// WorkerConfig says how to start a worker and where its output goes.
type WorkerConfig struct {
	// Path and Args start the worker (the host's binary, /proc/self/exe,
	// with the argument that makes it a worker); CommandLine is what it
	// then runs, sent as its first message.
	Path        string
	Args        []string
	CommandLine []string
	// Limits are the script's: the parent's deadline is Timeout plus
	// workerGrace; the heap budgets size the memory cgroup.
	Limits Limits
	// GatherWait bounds the time to the script's start (WorkerGatherWait
	// when zero).
	GatherWait time.Duration
	// Stdout and Stderr receive what the worker writes there: the host
	// passes them through its one escaping function.
	Stdout, Stderr io.Writer
	// Emit and Action receive the metrics and kill outcomes of a run, for
	// a batch (nil: not expected).
	Emit   func(WorkerEmit)
	Action func(kill.ActionEvent)
	// Self reads the host's own /proc (never a --proc fixture): where the
	// memory cgroup goes. Zero: the worker gets none.
	Self procwalk.FS
}

// Worker is the parent's side of a worker, started at the first run and
// again after one dies. Not safe for concurrent use.
type Worker struct {
	cfg WorkerConfig

	cmd    *exec.Cmd
	ctl    *gob.Encoder
	ctlW   *os.File
	frames *frame.Encoder // this worker's: its Decoder reads its frames alone
	msgs   chan workerMsg
	out    *crashOutput
	// cgroup is the workers' memory cgroup, nil where none can be made.
	cgroup *memoryCgroup
	ooms   uint64 // the cgroup's OOM kills when the worker started
	// peakRSS is the last worker's peak resident memory, once it ended.
	peakRSS uint64
}

// NewWorker returns a Worker, with its memory cgroup where one can be made;
// the process starts at the first Tick.
func NewWorker(cfg WorkerConfig) *Worker {
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.GatherWait <= 0 {
		cfg.GatherWait = WorkerGatherWait
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	return &Worker{cfg: cfg, cgroup: newMemoryCgroup(cfg.Self, cgroupLimit(cfg.Limits))}
}

// PeakRSSBytes is the peak resident memory of the last worker that ended,
// its own (wait4's rusage of it alone).
func (w *Worker) PeakRSSBytes() uint64 { return w.peakRSS }

// start starts a worker and sends it the command line.
func (w *Worker) start() error {
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
	cmd := exec.Command(w.cfg.Path, w.cfg.Args...)
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
	w.cmd, w.ctlW, w.ctl, w.frames = cmd, ctlW, gob.NewEncoder(ctlW), frame.NewEncoder()
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
	// Into the cgroup before it reads its command line: what the script
	// allocates is charged there.
	if w.cgroup != nil {
		w.ooms = w.cgroup.oomKills()
		if err := w.cgroup.add(cmd.Process.Pid); err != nil {
			// RLIMIT_AS and the in-process checks still bound it, as on a
			// host without a memory cgroup.
			fmt.Fprintf(w.cfg.Stderr, "procwalk: note: script workers run without their memory cgroup %s: %v\n", w.cgroup.dir, err)
			w.cgroup.remove()
			w.cgroup = nil
		}
	}
	if err := w.ctl.Encode(workerStart{Args: w.cfg.CommandLine}); err != nil {
		return w.died(fmt.Sprintf("did not take its command line (%v)", err))
	}
	return nil
}

// Tick asks the worker for one run on f and relays its output until the
// run ends, reading for it what it asks of f's processes. The error is a
// worker's death, which wraps ErrWorker; the run's own error is in
// WorkerDone. ctx ending stops the worker and returns ctx's error.
func (w *Worker) Tick(ctx context.Context, f frame.Frame) (WorkerDone, error) {
	if w.cmd == nil {
		if err := w.start(); err != nil {
			return WorkerDone{}, err
		}
	}
	b, err := w.frames.Encode(f)
	if err != nil {
		return WorkerDone{}, err
	}
	if err := w.ctl.Encode(workerCtl{Tick: &workerTick{Frame: b}}); err != nil {
		return WorkerDone{}, w.died("")
	}
	timer := time.NewTimer(w.cfg.GatherWait)
	defer timer.Stop()
	timeout := w.cfg.Limits.Timeout
	var left time.Duration // of the deadline, while paused
	var since time.Time
	running := false
	for {
		select {
		case <-ctx.Done():
			w.stop(syscall.SIGTERM)
			return WorkerDone{}, ctx.Err()
		case <-timer.C:
			w.cmd.Process.Kill()
			if running {
				return WorkerDone{}, w.died(fmt.Sprintf("ran past the script's %v deadline by %v and was killed", timeout, workerGrace))
			}
			return WorkerDone{}, w.died(fmt.Sprintf("did not start the script within %v and was killed", w.cfg.GatherWait))
		case m, ok := <-w.msgs:
			switch {
			case !ok:
				return WorkerDone{}, w.died("")
			case m.Stdout != nil:
				w.cfg.Stdout.Write(m.Stdout)
			case m.Stderr != nil:
				w.cfg.Stderr.Write(m.Stderr)
			case m.Emit != nil && w.cfg.Emit != nil:
				w.cfg.Emit(*m.Emit)
			case m.Action != nil && w.cfg.Action != nil:
				w.cfg.Action(*m.Action)
			case m.Read != nil:
				if err := w.ctl.Encode(workerCtl{Read: readFor(f, m.Read)}); err != nil {
					return WorkerDone{}, w.died("")
				}
			case m.Phase == phaseRunning:
				running, left, since = true, timeout+workerGrace, time.Now()
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

// readFor reads what a worker asked of the processes of f.
func readFor(f frame.Frame, r *workerRead) *workerReadReply {
	procs := make([]*procwalk.Process, 0, len(r.IDs))
	for _, id := range r.IDs {
		if p := f.Snapshot.Lookup(id); p != nil {
			procs = append(procs, p)
		}
	}
	f.ReadMore(procs, r.Fields&workerReadFields) // a failed read leaves the fields unread
	reply := &workerReadReply{Procs: make([]procwalk.Process, len(r.IDs))}
	for i, id := range r.IDs {
		if p := f.Snapshot.Lookup(id); p != nil {
			reply.Procs[i] = *p
		}
	}
	return reply
}

// Close asks the worker to end (its stdin closes), waits for it, and
// removes the memory cgroup.
func (w *Worker) Close() {
	if w.cmd != nil {
		w.stop(0)
	}
	if w.cgroup != nil {
		w.cgroup.remove()
		w.cgroup = nil
	}
}

// stop ends the worker: sig first (0: only stdin's end), SIGKILL after
// workerStopWait. It waits for the worker and its output.
func (w *Worker) stop(sig syscall.Signal) {
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
func (w *Worker) wait() {
	w.cmd.Wait()
	if ru, ok := w.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		w.peakRSS = uint64(ru.Maxrss) << 10 // kernel's unit: KiB
	}
	w.cmd, w.ctl, w.msgs = nil, nil, nil
	w.ctlW.Close()
}

// died reaps a worker that ended in the middle of a run and returns the
// error saying why, in one line. why says it when the parent knows (it
// killed the worker); else the exit status, the cgroup's OOM kills and the
// runtime's last words do.
func (w *Worker) died(why string) error {
	pid := w.cmd.Process.Pid
	w.cmd.Process.Kill() // when it only closed its messages
	for range w.msgs {
	}
	state := w.cmd
	w.wait()
	if why == "" {
		why = w.deathCause(state.ProcessState, w.cgroup.oomKills() > w.ooms, procwalk.Printable(w.out.cause()))
	}
	return fmt.Errorf("%w (pid %d) %s after a peak RSS of %s; the script's state was lost, and the next run starts a new worker",
		ErrWorker, pid, why, procwalk.FormatBytes(w.peakRSS))
}

// deathCause says how a worker ended, from its exit status, whether its
// memory cgroup counted an OOM kill, and the first line of the Go
// runtime's crash output.
func (w *Worker) deathCause(ps *os.ProcessState, oomKilled bool, crash string) string {
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL && oomKilled:
		return fmt.Sprintf("was killed by the kernel's OOM killer at its memory cgroup's limit of %s", procwalk.FormatBytes(w.cgroup.limit))
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return "was killed by SIGKILL (the kernel's OOM killer, or another process)"
	case ws.Signaled():
		return "was killed by " + ws.Signal().String()
	case ps.ExitCode() == workerExitCPU:
		return "used up its CPU time limit (RLIMIT_CPU)"
	case strings.Contains(crash, "out of memory"), strings.Contains(crash, "cannot allocate memory"):
		return "ran out of its address-space limit (RLIMIT_AS): " + crash
	case crash != "":
		return "crashed: " + crash
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
