package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// worker_child.go is the worker's side (worker.go has the parent's): it
// runs the parent's command line with its stdout and stderr turned into
// messages, and runs the script once per workerTick under kernel limits.
//
// Kills: the worker calls the engine's Killer itself, with every
// protection (the protected list, --protect, identity checks, procwalk and
// its ancestors, the parent among them). Forwarding kill requests to the
// parent would protect nothing more: the worker runs as the same user with
// the same rights, so code that escaped the Lua sandbox could signal
// anything the parent could without asking. The sandbox bounds what a
// script can ask; the kernel limits bound what it can cost.

// workerExitCPU is the exit status of a worker past its CPU time limit:
// none of procwalk's own (0-2, 124) nor a Go crash's (2).
const workerExitCPU = 125

// asSlack is address space a worker may map beyond what it had at its start
// and twice its heap budgets (Go's GC lets the heap reach about twice what
// is live): thread stacks (8 MiB each under cgo), the Monitor's buffers of a
// busy host, and the runtime's own metadata.
const asSlack = 512 << 20

// workerConn is the worker's end of the pipes: commands on stdin, messages
// on fd 3. Sends come from the goroutine running the script; mu orders
// them anyway (a log record from another goroutine must not interleave).
type workerConn struct {
	mu  sync.Mutex
	enc *gob.Encoder
	ctl *gob.Decoder
}

// runWorker is main for a worker: it reads the command line from ctl and
// runs it with e's output sent to the parent through msgs.
func runWorker(ctx context.Context, ctl io.Reader, msgs io.Writer) error {
	c := &workerConn{enc: gob.NewEncoder(msgs), ctl: gob.NewDecoder(ctl)}
	var start workerStart
	if err := c.ctl.Decode(&start); err != nil {
		fmt.Fprintln(os.Stderr, "procwalk: script-worker is procwalk's own script worker, started by run, watch and telegraf --execd; it is not a command")
		return &exitErr{Code: exitUsage}
	}
	e := newEnv(strings.NewReader(""), workerOut{c, false}, workerOut{c, true})
	e.conn = c
	return runEnv(ctx, e, start.Args)
}

// send writes one message; a parent that has gone ends the worker.
func (c *workerConn) send(m workerMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.enc.Encode(&m); err != nil {
		os.Exit(exitError)
	}
}

// workerOut is the worker's stdout or stderr: each write one message.
type workerOut struct {
	c      *workerConn
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

// serve answers the parent's workerTicks, one run each, until the parent
// closes stdin. tick does the run: its note and error go back in workerDone.
func (c *workerConn) serve(ctx context.Context, l scripting.Limits, tick func(context.Context) (note string, err error)) error {
	limitAddressSpace(l)
	// Past the soft RLIMIT_CPU the kernel sends SIGXCPU, which Go ignores
	// unless asked: end the worker, with the status the parent explains.
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		if _, ok := <-xcpu; ok {
			os.Exit(workerExitCPU)
		}
	}()
	defer signal.Stop(xcpu)
	for ctx.Err() == nil {
		var t workerTick
		if c.ctl.Decode(&t) != nil {
			return nil // the parent is done with us
		}
		note, err := tick(ctx)
		d := workerDone{Note: note}
		if err != nil {
			d.Err, d.Code = err.Error(), exitCode(err)
			var ee *exitErr
			if errors.As(err, &ee) && ee.Err != nil {
				d.Err = ee.Err.Error()
			}
		}
		c.send(workerMsg{Done: &d})
	}
	return nil
}

// runGuard brackets a run of the script in a worker: the parent's deadline
// starts, and a CPU time limit holds until the run ends.
type runGuard struct {
	c       *workerConn
	timeout time.Duration
}

// begin tells the parent the script starts and sets the soft RLIMIT_CPU to
// the CPU time used so far plus twice the deadline (the GC runs on other
// cores beside the script) and a second; the hard limit is left as it is,
// so that end can lift the soft one again for the next run.
func (g *runGuard) begin() {
	if g == nil {
		return
	}
	g.c.send(workerMsg{Phase: phaseRunning})
	var ru unix.Rusage
	var lim unix.Rlimit
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil || unix.Getrlimit(unix.RLIMIT_CPU, &lim) != nil {
		return
	}
	used := ru.Utime.Sec + ru.Stime.Sec + 1 // rounded up: the limit is in whole seconds
	lim.Cur = min(uint64(used)+uint64(2*g.timeout/time.Second)+2, lim.Max)
	unix.Setrlimit(unix.RLIMIT_CPU, &lim)
}

// end lifts the soft CPU limit begin set.
func (g *runGuard) end() {
	if g == nil {
		return
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_CPU, &lim) == nil {
		lim.Cur = lim.Max
		unix.Setrlimit(unix.RLIMIT_CPU, &lim)
	}
}

// guard returns the runGuard of a worker (nil in-process).
func (c *workerConn) guard(l scripting.Limits) *runGuard {
	if c == nil {
		return nil
	}
	return &runGuard{c: c, timeout: l.Timeout}
}

// limitAddressSpace sets RLIMIT_AS to the worker's address space now plus
// twice its heap budgets and asSlack. Go reserves address space it never
// touches (1.9 GiB at the start, measured), so the limit is no RSS bound:
// the heap watchdog and the retained-state check are, in the worker as
// in-process. RLIMIT_AS stops what they cannot see in time, a single
// allocation of gigabytes, with an out-of-memory crash of the worker
// instead of the host's OOM killer. A memory cgroup would bound RSS, but
// needs a delegated cgroup tree, which an execd under Telegraf's user
// does not have; RLIMIT_AS works for any user.
func limitAddressSpace(l scripting.Limits) {
	b, err := os.ReadFile("/proc/self/statm") // the worker's own, never --proc's
	if err != nil {
		return
	}
	pages, err := strconv.ParseUint(strings.Fields(string(b) + " 0")[0], 10, 64)
	if err != nil {
		return
	}
	limit := pages*uint64(os.Getpagesize()) + 2*(l.HeapBudgetBytes+l.RetainedBytes) + asSlack
	var cur unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &cur) == nil && cur.Max < limit {
		limit = cur.Max
	}
	unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit})
}

// pausingKiller tells the parent when a kill waits out its grace, time the
// script's deadline does not count either.
type pausingKiller struct {
	scripting.Killer
	c *workerConn
}

func (k pausingKiller) Kill(ctx context.Context, scope kill.Scope, opts scripting.KillOptions) (*kill.Report, error) {
	k.c.send(workerMsg{Phase: phasePause})
	defer k.c.send(workerMsg{Phase: phaseResume})
	return k.Killer.Kill(ctx, scope, opts)
}
