//go:build linux

package scripting

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/gobwire"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// worker_child.go is the worker's side (worker.go has the parent's): the
// host runs the parent's command line with its stdout and stderr turned
// into messages (WorkerConn), and Serve runs the script once per request
// under kernel limits.
//
// Kills: the worker calls the engine's Killer itself, with every
// protection (the protected list, --protect, identity checks, procwalk and
// its ancestors, the parent among them). Forwarding kill requests to the
// parent would protect nothing more: the worker runs as the same user with
// the same rights, so code that escaped the Lua sandbox could signal
// anything the parent could without asking. The sandbox bounds what a
// script can ask; the kernel limits bound what it can cost.

// asSlack is address space a worker may map beyond what it had at its start
// and twice its heap budgets (Go's GC lets the heap reach about twice what
// is live): thread stacks, the Monitor's buffers of a busy host, and the
// runtime's own metadata.
const asSlack = 512 << 20

// goSlack is what the Go runtime's soft memory limit leaves a worker beyond
// its heap budgets: the runtime itself and its snapshot of a busy host.
const goSlack = 64 << 20

// WorkerConn is the worker's end of the pipes: requests on stdin, messages
// on fd 3. Sends come from the goroutine running the script; mu orders
// them anyway (a log record from another goroutine must not interleave).
type WorkerConn struct {
	mu   sync.Mutex
	enc  *gobwire.Encoder
	ctl  *gobwire.Decoder
	exit func(code int)
	// killsLeft is the parent's hourly allowance for this run, less what
	// the run's kills signalled (the worker's KillBudget).
	killsLeft int
}

// errNotAWorker is AcceptWorker's error when no parent sent a command line.
var errNotAWorker = errors.New("this is procwalk's own script worker, started by run, watch and telegraf --execd; it is not a command")

// AcceptWorker reads the parent's first message on ctl, the command line
// the worker runs, and returns the connection whose Stdout and Stderr the
// host writes to. exit ends the process (os.Exit): when the parent has
// gone, and past the CPU time limit with workerExitCPU.
func AcceptWorker(ctl io.Reader, msgs io.Writer, exit func(code int)) (*WorkerConn, []string, error) {
	c := &WorkerConn{enc: gobwire.NewEncoder(msgs), ctl: gobwire.NewDecoder(ctl), exit: exit}
	var start workerStart
	if err := c.ctl.Decode(&start); err != nil {
		return nil, nil, errNotAWorker
	}
	return c, start.Args, nil
}

// send writes one message; a parent that has gone ends the worker.
func (c *WorkerConn) send(m workerMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.enc.Encode(&m); err != nil {
		c.exit(1)
	}
}

// Stdout and Stderr are what the host writes to as it would to its own:
// each write is one message, which the parent writes out.
func (c *WorkerConn) Stdout() io.Writer { return workerOut{c, false} }
func (c *WorkerConn) Stderr() io.Writer { return workerOut{c, true} }

// workerOut is the worker's stdout or stderr: each write one message.
type workerOut struct {
	c      *WorkerConn
	stderr bool
}

func (o workerOut) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	b = bytes.Clone(b)
	if o.stderr {
		o.c.send(workerMsg{Stderr: b})
	} else {
		o.c.send(workerMsg{Stdout: b})
	}
	return len(b), nil
}

// Emit sends a metric the script emitted to the parent's batch.
func (c *WorkerConn) Emit(m WorkerEmit) { c.send(workerMsg{Emit: &m}) }

// Action sends a kill's outcome to the parent's batch.
func (c *WorkerConn) Action(e kill.ActionEvent) { c.send(workerMsg{Action: &e}) }

// Serve answers the parent's requests, one run each on the frame the
// parent sent, until the parent closes stdin. tick does the run: its note
// and error go back in WorkerDone, with code(err) as the exit code the
// error means. self reads the worker's own /proc (its address space, for
// RLIMIT_AS); data is the /proc the frames are of, where the worker reads
// the fields a script asks of a process that the frame lacks (io and
// smaps_rollup excepted: the parent reads those, for their rates).
func (c *WorkerConn) Serve(ctx context.Context, l Limits, self, data procwalk.FS, tick func(context.Context, frame.Frame) (note string, err error), code func(error) int) error {
	l = l.withDefaults()
	limitAddressSpace(self, l)
	// The GC works harder as the worker nears its budgets plus goSlack
	// (frame.WorkerGC): what the budgets let a script keep, not what the
	// GC leaves, bounds the worker's resident memory, well below its
	// memory cgroup's limit.
	frame.WorkerGC(int64(l.HeapBudgetBytes + l.RetainedBytes + goSlack))
	// Past the soft RLIMIT_CPU the kernel sends SIGXCPU, which Go ignores
	// unless asked: end the worker, with the status the parent explains.
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		if _, ok := <-xcpu; ok {
			c.exit(workerExitCPU)
		}
	}()
	defer signal.Stop(xcpu)
	frames := frame.NewDecoder()
	reader := &workerReader{c: c, local: procwalk.NewScanner(data)}
	for ctx.Err() == nil {
		var m workerCtl
		if c.ctl.Decode(&m) != nil {
			return nil // the parent is done with us
		}
		if m.Tick == nil {
			return nil // out of step: only a reply to our own read comes otherwise
		}
		c.killsLeft = m.Tick.KillsLeft
		var note string
		f, err := frames.Decode(m.Tick.Frame)
		if err == nil {
			note, err = tick(ctx, f.WithReader(reader))
		}
		d := WorkerDone{Note: note}
		if err != nil {
			d.Err, d.Code = err.Error(), code(err)
		}
		c.send(workerMsg{Done: &d})
	}
	return nil
}

// workerReadFields are the fields a worker asks its parent to read: those
// the parent's Sampler turns into rates.
const workerReadFields = procwalk.FieldIO | procwalk.FieldSmaps

// workerReader reads more of a decoded frame's processes: workerReadFields
// through the parent, the rest from /proc here, each read bounded as a
// scan's is.
type workerReader struct {
	c     *WorkerConn
	local *procwalk.Scanner
}

func (r *workerReader) ReadMore(procs []*procwalk.Process, f procwalk.Fields) error {
	if local := f &^ workerReadFields; local != 0 {
		if err := r.local.ReadMore(procs, local); err != nil {
			return err
		}
	}
	f &= workerReadFields
	if f == 0 || len(procs) == 0 {
		return nil
	}
	req := &workerRead{IDs: make([]procwalk.ProcID, len(procs)), Fields: f}
	for i, p := range procs {
		req.IDs[i] = p.ID
	}
	r.c.send(workerMsg{Read: req})
	var m workerCtl
	if err := r.c.ctl.Decode(&m); err != nil || m.Read == nil || len(m.Read.Procs) != len(procs) {
		r.c.exit(1) // the parent is gone, or out of step: nothing sane is left to do
		return errors.New("the parent did not answer a read")
	}
	for i, p := range procs {
		if got := &m.Read.Procs[i]; got.ID == p.ID {
			mergeRead(p, got, f)
		}
	}
	return nil
}

// mergeRead copies into p what the parent read of fields f (io,
// smaps_rollup) into its copy got: the values, their outcome bits and
// their rates. What the worker read itself stays.
func mergeRead(p, got *procwalk.Process, f procwalk.Fields) {
	if f&procwalk.FieldIO != 0 {
		p.IO = got.IO
		p.Rates.HaveIO, p.Rates.ReadBytesPerSecond, p.Rates.WriteBytesPerSecond = got.Rates.HaveIO, got.Rates.ReadBytesPerSecond, got.Rates.WriteBytesPerSecond
	}
	if f&procwalk.FieldSmaps != 0 {
		p.Smaps, p.SwapBytes = got.Smaps, got.SwapBytes
		p.Rates.HaveSmaps, p.Rates.PSSGrowthBytesPerMinute, p.Rates.USSGrowthBytesPerMinute = got.Rates.HaveSmaps, got.Rates.PSSGrowthBytesPerMinute, got.Rates.USSGrowthBytesPerMinute
	}
	p.Read = p.Read&^f | got.Read&f
	p.Denied = p.Denied&^f | got.Denied&f
	p.Malformed = p.Malformed&^f | got.Malformed&f
	p.ReadTimedOut = p.ReadTimedOut || got.ReadTimedOut
}

// RunGuard brackets a run of the script in a worker: the parent's deadline
// starts, and a CPU time limit holds until the run ends. A nil one (a run
// in the host's own process) does nothing.
type RunGuard struct {
	c       *WorkerConn
	timeout time.Duration
}

// Guard returns the RunGuard of runs with limits l; nil on a nil
// connection (in-process).
func (c *WorkerConn) Guard(l Limits) *RunGuard {
	if c == nil {
		return nil
	}
	return &RunGuard{c: c, timeout: l.withDefaults().Timeout}
}

// Begin tells the parent the script starts and sets the soft RLIMIT_CPU to
// the CPU time used so far plus twice the deadline (the GC runs on other
// cores beside the script) and a second; the hard limit is left as it is,
// so that End can lift the soft one again for the next run.
func (g *RunGuard) Begin() {
	if g == nil {
		return
	}
	g.c.send(workerMsg{Running: true})
	var ru unix.Rusage
	var lim unix.Rlimit
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil || unix.Getrlimit(unix.RLIMIT_CPU, &lim) != nil {
		return
	}
	used := ru.Utime.Sec + ru.Stime.Sec + 1 // rounded up: the limit is in whole seconds
	lim.Cur = min(uint64(used)+uint64(2*g.timeout/time.Second)+2, lim.Max)
	unix.Setrlimit(unix.RLIMIT_CPU, &lim)
}

// End lifts the soft CPU limit Begin set.
func (g *RunGuard) End() {
	if g == nil {
		return
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_CPU, &lim) == nil {
		lim.Cur = lim.Max
		unix.Setrlimit(unix.RLIMIT_CPU, &lim)
	}
}

// limitAddressSpace sets RLIMIT_AS to the worker's address space now (its
// stat's vsize, read through the engine) plus twice its heap budgets and
// asSlack. Go reserves address space it never touches (1.9 GiB at the
// start, measured), so the limit is no RSS bound: the checks before big
// allocations, the heap watchdog, the retained-state check and, where one
// can be made, the memory cgroup are. RLIMIT_AS stops what they cannot see
// in time, a single allocation of gigabytes, with an out-of-memory crash
// of the worker instead of the host's OOM killer, for any user.
func limitAddressSpace(self procwalk.FS, l Limits) {
	if self.Root() == "" {
		return
	}
	st, err := self.ReadStat(os.Getpid())
	if err != nil {
		return
	}
	limit := st.VSizeBytes + 2*(l.HeapBudgetBytes+l.RetainedBytes) + asSlack
	var cur unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &cur) == nil && cur.Max < limit {
		limit = cur.Max
	}
	unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit})
}

// DeadlineMoved is Config.DeadlineMoved of a worker's runtime: the parent
// moves its own deadline by as much.
func (c *WorkerConn) DeadlineMoved(by time.Duration) { c.send(workerMsg{Moved: by}) }

// Left and Spend make the connection the worker's KillBudget: the parent's
// hourly allowance, sent with each run. The parent spends its own ledger
// from the kill outcomes the worker reports.
func (c *WorkerConn) Left() int   { return c.killsLeft }
func (c *WorkerConn) Spend(n int) { c.killsLeft = max(c.killsLeft-n, 0) }
