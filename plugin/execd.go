//go:build linux

package plugin

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/frame"
)

// Signal modes of Telegraf's execd input that Execd supports.
const (
	// SignalStdin: Telegraf writes a line to stdin each interval; gather
	// once per line.
	SignalStdin = "STDIN"
	// SignalNone: gather on our own Interval.
	SignalNone = "none"
	// SignalSIGHUP, SignalSIGUSR1, SignalSIGUSR2: Telegraf sends that
	// signal each interval; gather once per signal received.
	SignalSIGHUP  = "SIGHUP"
	SignalSIGUSR1 = "SIGUSR1"
	SignalSIGUSR2 = "SIGUSR2"
)

// ParseSignal accepts execd's signal setting, case-insensitively.
func ParseSignal(s string) (string, error) {
	switch strings.ToUpper(s) {
	case "STDIN":
		return SignalStdin, nil
	case "NONE":
		return SignalNone, nil
	case SignalSIGHUP, SignalSIGUSR1, SignalSIGUSR2:
		return strings.ToUpper(s), nil
	}
	return "", fmt.Errorf("%w: signal (--signal) %q: want %q (gather once per line Telegraf writes), %q, %q or %q (gather once per signal Telegraf sends) or %q (gather every --interval)",
		ErrConfig, s, SignalStdin, SignalSIGHUP, SignalSIGUSR1, SignalSIGUSR2, SignalNone)
}

// Execd speaks Telegraf's execd protocol: batches of line protocol on
// Stdout, one per line read from Stdin (every mode but SignalNone), per
// value received on Signals (every mode) or per Interval (SignalNone), log
// lines with level markers through Log. It ends, returning
// nil, when Stdin reaches EOF (Telegraf is stopping us), when ctx ends
// (SIGTERM), or when Stdout is closed (nobody reads any more).
type Execd struct {
	Collector *Collector
	Stdin     io.Reader
	Stdout    io.Writer
	Log       Logger
	Signal    string        // SignalStdin, SignalNone or a SignalSIG* mode
	Interval  time.Duration // SignalNone's period
	// Signals delivers the signals Telegraf sends in its SIGHUP, SIGUSR1
	// and SIGUSR2 modes (the caller's signal.Notify): one gather each.
	// Nil when nobody sends any.
	Signals <-chan os.Signal
	// ReturnMemory gives the kernel back, after the first, silent gather
	// and after each batch, what the process does not need until the next
	// gather (frame.Memory.Return says what and what it costs).
	ReturnMemory bool
	// StdinEnded says Stdin was at its end before Run began: /dev/null, a
	// file, a pipe whose writers are gone (cron, nohup, </dev/null).
	// Nobody will write to it or close it to stop us: SignalNone and the
	// signal modes gather on, until SIGTERM or a closed Stdout, and say so
	// in an I! line; SignalStdin stops at once, with a W! line saying why.
	StdinEnded bool
	// FirstLineWait is how long SignalStdin waits for its first line
	// before a W! line says that none came (0: two minutes). Telegraf's
	// execd writes one a gather only with signal = "STDIN"; with its
	// default, "none", it writes none, and nothing at all would say why no
	// metric ever comes.
	FirstLineWait time.Duration
}

// Run gathers until told to stop: the pipeline's driver, with a Trigger
// that fires per stdin line (merged when several queued up), per signal
// or per Interval. Its error is a failure to write the output other than
// a closed pipe. When ctx ends, Run returns even while a batch is being
// written to a Stdout nobody reads (cancelWriter).
func (e *Execd) Run(ctx context.Context) error {
	if e.Signal == SignalNone && e.Interval <= 0 {
		return fmt.Errorf("%w: signal %q needs a positive interval", ErrConfig, SignalNone)
	}
	stop := make(chan struct{})
	defer close(stop)
	t := &execdTrigger{e: e}
	t.queued, t.lines, t.eof = readLines(e.Stdin, stop)
	if e.StdinEnded && e.Signal != SignalStdin {
		e.Log.Infof("stdin is at its end (</dev/null, cron, nohup): --signal %s gathers on until SIGTERM or until stdout is closed", e.Signal)
		t.eof = nil // never ready: its end stops nothing
	}

	p := e.Collector.pipeline
	p.SetReturn(e.ReturnMemory)
	// Start-up is over: what it alone used (its garbage, the pages of the
	// binary only it ran: flags, the BPF program's load) goes back before
	// the first gather, so that the gathers' peak does not hold it too.
	p.ReturnMemory(frame.Frame{})
	// A first, silent gather: the first batch written then has rates.
	f, err := e.Collector.Gather()
	if err != nil {
		e.Log.Errorf("%v", err)
	}
	p.ReturnMemory(f)
	if e.Signal == SignalNone {
		tick := time.NewTicker(e.Interval)
		defer tick.Stop()
		t.tick = tick.C
	}
	if e.Signal == SignalStdin {
		t.firstLineWait = cmp.Or(e.FirstLineWait, 2*time.Minute)
		quiet := time.NewTimer(t.firstLineWait)
		defer quiet.Stop()
		t.quiet = quiet.C
	}
	out := cancelWriter{ctx: ctx, w: e.Stdout, grace: time.Second}
	return p.Run(ctx, t, func(f frame.Frame, err error) error {
		c := e.Collector
		c.problems, c.notes = c.problems[:0], nil
		if err != nil {
			e.Log.Errorf("%v", fmt.Errorf("%w: %w", ErrNothingGathered, err)) // try again next time: /proc may come back
			return nil
		}
		c.notes = f.Notes
		switch err := c.writeFrame(f, out, e.Log); {
		case err == nil:
			return nil
		case errors.Is(err, errWriteLeft):
			// The write goes on reading the batch's buffer: the next
			// batch, should this Collector run again, gets its own.
			c.lw = lineWriter{}
			e.Log.Debugf("stopping: %v", context.Cause(ctx))
			return frame.ErrStop
		case errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrClosedPipe):
			return frame.ErrStop // the reader went away: nothing left to do
		default:
			return fmt.Errorf("writing metrics: %w", err)
		}
	})
}

// errWriteLeft is cancelWriter's error for a write it stopped waiting for.
var errWriteLeft = errors.New("write left blocked: the run was cancelled")

// cancelWriter writes to w in a goroutine of its own and waits for it,
// and once ctx has ended for at most grace more: a write to a stdout
// nobody reads (a Telegraf that stopped reading, a test's pipe) blocks for
// good, and must not keep Run from returning at SIGTERM, while the batch
// of a gather SIGTERM came in reaches a reader that still reads. A write
// left so ends when w's reader reads or goes away, or when the process
// exits (closing a pipe's descriptor does not end a write(2) under way;
// the reader may then see the batch's last line cut); it reads p until
// then, so the caller does not reuse p.
type cancelWriter struct {
	ctx   context.Context
	w     io.Writer
	grace time.Duration
}

func (c cancelWriter) Write(p []byte) (int, error) {
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1) // the write's goroutine never waits on it
	go func() {
		n, err := c.w.Write(p)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-c.ctx.Done():
	}
	grace := time.NewTimer(c.grace)
	defer grace.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-grace.C:
		return 0, errWriteLeft
	}
}

// execdTrigger fires the gathers of Execd: per stdin line (every mode but
// SignalNone), per signal (every mode), per tick (SignalNone).
type execdTrigger struct {
	e      *Execd
	queued *atomic.Int64
	lines  <-chan struct{}
	eof    <-chan struct{}
	tick   <-chan time.Time
	quiet  <-chan time.Time // SignalStdin: firstLineWait is over
	// firstLineWait is Execd.FirstLineWait or its default.
	firstLineWait time.Duration
	// ended is set once stdin closed: the gather for lines that came
	// before the end, if any, is the last.
	ended bool
	// answered is set once a stdin line was answered.
	answered bool
}

func (t *execdTrigger) Wait(ctx context.Context) bool {
	e := t.e
	if t.ended {
		e.Log.Debugf("stdin closed: stopping")
		return false
	}
	for {
		select {
		case <-ctx.Done():
			e.Log.Debugf("stopping: %v", context.Cause(ctx))
			return false
		case <-t.eof:
			t.ended = true
			if e.Signal != SignalNone && e.merge(t.queued.Swap(0)) {
				return true // lines came before the end: one last batch
			}
			if e.Signal == SignalStdin && !t.answered {
				e.Log.Warnf("stdin ended before its first line: --signal %s gathers once per line Telegraf writes to stdin (Telegraf's execd does only with signal = \"STDIN\"); under cron, nohup or </dev/null use --signal %s, which gathers every --interval", SignalStdin, SignalNone)
			}
			e.Log.Debugf("stdin closed: stopping")
			return false
		case <-t.lines:
			if e.Signal == SignalNone || !e.merge(t.queued.Swap(0)) {
				continue // stdin is read only to see EOF; or already answered
			}
			t.answered = true
			return true
		case sig := <-e.Signals:
			e.Log.Debugf("gathering on %v", sig)
			return true
		case <-t.tick:
			return true
		case <-t.quiet:
			t.quiet = nil
			if !t.answered {
				e.Log.Warnf("no line on stdin in %v: --signal %s gathers once per line Telegraf writes to stdin, which Telegraf's execd does only with signal = \"STDIN\" (its default is \"none\"): give procwalk the --signal of Telegraf's signal setting (none: --signal none --interval as Telegraf's interval), or ignore this if Telegraf's interval is longer", t.firstLineWait, SignalStdin)
			}
		}
	}
}

// merge answers n queued stdin lines with one gather: the lines that came
// while a gather ran (Telegraf's interval shorter than a gather, or a
// reader that fell behind) would otherwise each cost a gather of stale
// data. The lines beyond the first are counted as skipped gathers in the
// self metrics. false: nothing is queued.
func (e *Execd) merge(n int64) bool {
	if n <= 0 {
		return false
	}
	e.Collector.skippedGathers += int(n - 1)
	return true
}

// readLines counts the lines read from r in queued and signals lines
// after each (at most one signal waits: a reader that wakes takes every line
// queued so far with one Swap). It closes eof when r ends, after counting
// every line read. The goroutine stops at r's end, or at the next line once
// stop is closed.
func readLines(r io.Reader, stop <-chan struct{}) (queued *atomic.Int64, lines <-chan struct{}, eof <-chan struct{}) {
	queued = new(atomic.Int64)
	l := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(r)
		for {
			_, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				continue // an absurdly long line is still one line
			}
			if err != nil {
				return
			}
			queued.Add(1)
			select {
			case l <- struct{}{}:
			default: // a signal is already waiting
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	return queued, l, done
}
