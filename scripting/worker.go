//go:build linux

package scripting

import (
	"context"
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
	"github.com/procwalk/procwalk/procwalk/gobwire"
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
// KillsLeft is what is left of the hourly kill budget, which the parent
// keeps (a new worker must not start a new hour).
type workerTick struct {
	Frame     []byte
	KillsLeft int
}

// workerRead asks the parent to read Fields of the processes IDs of the
// run's frame: those whose rates its Sampler measures (io, smaps_rollup).
type workerRead struct {
	IDs    []procwalk.ProcID
	Fields procwalk.Fields
}

// workerReadReply answers a workerRead: each process as the parent read
// it, in the order asked; a zero ID for one not in the frame.
type workerReadReply struct{ Procs []procwalk.Process }

// workerMsg is one message from a worker: exactly one field is set.
type workerMsg struct {
	Stdout, Stderr []byte            // to write, as the in-process run would
	Emit           *WorkerEmit       // a metric for the parent to encode
	Action         *kill.ActionEvent // a kill's outcome, for the parent to encode
	Read           *workerRead       // read fields of the frame's processes
	Running        bool              // the script starts: the deadline runs
	Moved          time.Duration     // a kill moved the script's deadline by this
	Done           *WorkerDone
}

// WorkerEmit is a metric a script emitted, already checked by the worker.
// The parent encodes it itself, as the in-process run does: line protocol
// never passes through the escaping of the worker's text.
type WorkerEmit struct {
	Measurement string
	Tags        map[string]string
	Fields      map[string]any
	Time        time.Time
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
	// Name is the worker's argv[0], what ps and procwalk show as its
	// command: the host's name ("procwalk"), not Path's /proc/self/exe.
	// Empty: Path.
	Name string
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
	// the parent to encode (nil: not expected), in the order the script
	// made them, when the run ends (RunOutput.End: a failed run's metrics
	// are dropped, its kills' outcomes kept). What the worker prints and
	// logs is streamed to Stdout and Stderr as it comes.
	Emit   func(WorkerEmit)
	Action func(kill.ActionEvent)
	// Self reads the host's own /proc (never a --proc fixture): where the
	// memory cgroup goes. Zero: the worker gets none.
	Self procwalk.FS
	// Now is the clock of the hourly kill budget; nil: time.Now.
	Now func() time.Time
}

// Worker is the parent's side of a worker, started at the first run and
// again after one dies. Not safe for concurrent use.
type Worker struct {
	cfg WorkerConfig

	cmd    *exec.Cmd
	ctl    *gobwire.Encoder
	ctlW   *os.File
	frames *frame.Encoder // this worker's: its Decoder reads its frames alone
	msgs   chan workerMsg
	out    *crashOutput
	// cgroup is the workers' memory cgroup, nil where none can be made.
	cgroup *memoryCgroup
	ooms   uint64 // the cgroup's OOM kills when the worker started
	// peakRSS is the worker's peak resident memory as last read (its
	// status's VmHWM, at the start and end of each run and before the
	// parent kills it); peakFinal is set when that was its last moment.
	// wait4's ru_maxrss cannot say it: it keeps the parent's peak, whose
	// address space the worker shared until exec.
	peakRSS   uint64
	peakFinal bool
	// kills is the hourly kill budget, kept here across workers: spent
	// by the outcomes the workers report.
	kills *KillLedger
	// pending keeps a run's metrics and kills' outcomes until it ends.
	pending RunOutput
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
	return &Worker{cfg: cfg, cgroup: newMemoryCgroup(cfg.Self, cgroupLimit(cfg.Limits)), kills: NewKillLedger(cfg.Limits.KillsPerHour, cfg.Now)}
}

// PeakRSSBytes is the peak resident memory of the worker, its own (its
// VmHWM), as last read: at the end of its last run, or before the parent
// killed it.
func (w *Worker) PeakRSSBytes() uint64 { return w.peakRSS }

// readPeak reads the running worker's peak resident memory.
func (w *Worker) readPeak() {
	if w.cfg.Self.Root() == "" || w.cmd == nil {
		return
	}
	if st, err := w.cfg.Self.ReadStatus(w.cmd.Process.Pid); err == nil && st.PeakRSSBytes > 0 {
		w.peakRSS = max(w.peakRSS, st.PeakRSSBytes)
	}
}

// kill reads the worker's peak resident memory one last time and kills it.
func (w *Worker) kill() {
	w.readPeak()
	w.peakFinal = true
	w.cmd.Process.Kill()
}

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
	if w.cfg.Name != "" {
		cmd.Args[0] = w.cfg.Name
	}
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
	w.cmd, w.ctlW, w.ctl, w.frames = cmd, ctlW, gobwire.NewEncoder(ctlW), frame.NewEncoder()
	w.peakRSS, w.peakFinal = 0, false
	w.msgs = make(chan workerMsg, 16)
	go func() { // ends when the worker's fd 3 closes: it exited
		defer close(w.msgs)
		defer msgR.Close()
		dec := gobwire.NewDecoder(msgR)
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
// WorkerDone. ctx ending stops the worker and returns ctx's error. The
// run's metrics reach cfg.Emit only when it succeeded; its kills' outcomes
// reach cfg.Action in every case.
func (w *Worker) Tick(ctx context.Context, f frame.Frame) (d WorkerDone, err error) {
	defer func() { w.pending.End(err == nil && d.Err == "", w.emit, w.action) }()
	return w.tick(ctx, f)
}

func (w *Worker) emit(m WorkerEmit) {
	if w.cfg.Emit != nil {
		w.cfg.Emit(m)
	}
}

func (w *Worker) action(e kill.ActionEvent) {
	if w.cfg.Action != nil {
		w.cfg.Action(e)
	}
}

func (w *Worker) tick(ctx context.Context, f frame.Frame) (WorkerDone, error) {
	if w.cmd == nil {
		if err := w.start(); err != nil {
			return WorkerDone{}, err
		}
	}
	b, err := w.frames.Encode(f)
	if err != nil {
		return WorkerDone{}, err
	}
	if err := w.ctl.Encode(workerCtl{Tick: &workerTick{Frame: b, KillsLeft: w.kills.Left()}}); err != nil {
		return WorkerDone{}, w.died("")
	}
	timer := time.NewTimer(w.cfg.GatherWait)
	defer timer.Stop()
	timeout := w.cfg.Limits.Timeout
	var end time.Time // the deadline, once running
	running := false
	for {
		select {
		case <-ctx.Done():
			w.stop(syscall.SIGTERM)
			return WorkerDone{}, ctx.Err()
		case <-timer.C:
			w.kill()
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
			case m.Emit != nil:
				w.pending.Emit(*m.Emit)
				// The worker stops a run at its budget before it sends
				// more: one that sends more is not ours to trust.
				if lines, bytes := w.pending.Metrics(); lines > w.cfg.Limits.MaxEmitLines || bytes > w.cfg.Limits.MaxEmitBytes {
					w.kill()
					return WorkerDone{}, w.died(fmt.Sprintf("sent more than a run's budget of %d metrics and %s and was killed", w.cfg.Limits.MaxEmitLines, procwalk.FormatBytes(uint64(w.cfg.Limits.MaxEmitBytes))))
				}
			case m.Action != nil:
				if len(m.Action.Signals) > 0 && !m.Action.DryRun {
					w.kills.Spend(1)
				}
				w.pending.Action(*m.Action)
			case m.Read != nil:
				if err := w.ctl.Encode(workerCtl{Read: readFor(f, m.Read)}); err != nil {
					return WorkerDone{}, w.died("")
				}
			case m.Running:
				w.readPeak()
				running, end = true, time.Now().Add(timeout+workerGrace)
				timer.Reset(timeout + workerGrace)
			case m.Moved != 0 && running:
				end = end.Add(m.Moved)
				timer.Reset(max(time.Until(end), 0))
			case m.Done != nil:
				w.readPeak()
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
	peak := "after a peak RSS of " + procwalk.FormatBytes(w.peakRSS)
	if !w.peakFinal {
		peak = "after a peak RSS of at least " + procwalk.FormatBytes(w.peakRSS) + " (its last reading, at a run's start or end)"
	}
	return fmt.Errorf("%w (pid %d) %s %s; the script's state was lost, and the next run starts a new worker",
		ErrWorker, pid, why, peak)
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
