package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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
// nil, when Stdin reaches EOF (Telegraf is stopping us: it closes stdin,
// then sends SIGTERM 5 s later), when ctx ends (SIGTERM), or when Stdout
// is closed (nobody reads any more). A Stdin already at its end when Run
// starts (StdinEnded) is no channel to Telegraf: the modes that gather on
// their own then ignore it, and SignalStdin says why it stops at once.
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
	// ReturnMemory, after the first, silent gather and after each batch
	// (under 5,000 processes, once the gathers since the last one
	// allocated a megabyte: see Collector.returnMemory), runs a garbage
	// collection and returns the freed memory to the kernel; after every
	// batch it hands back the pages of the Process array the Collector
	// keeps for the next gather (zeroed, the next scan maps them again in
	// one call): between gathers the process holds little more than
	// the rate samples and the sessions' counters. At 10,000 processes the
	// collection is about 1 ms of CPU, and the whole 1 to 7 % of a gather
	// in our runs of BenchmarkExecd*ReturnMemory against BenchmarkExecd*,
	// about the noise between runs. The runtime's GC settings are left
	// alone: with the array reused, a gather leaves about 1 MB of garbage
	// at 10,000 processes, and what the peak holds beyond the
	// between-gathers size is data live during the gather, which a lower
	// GOGC or a memory limit cannot free, only chase at a CPU cost.
	ReturnMemory bool
	// StdinEnded says Stdin was at its end before Run began: /dev/null, a
	// file, a pipe whose writers are gone (cron, nohup, </dev/null).
	// Nobody will write to it or close it to stop us: SignalNone and the
	// signal modes gather on, until SIGTERM or a closed Stdout, and say so
	// in an I! line; SignalStdin stops at once, with a W! line saying why.
	StdinEnded bool

	stopped bool // the reader of Stdout went away
}

// Run gathers until told to stop. Its error is a failure to write the
// output other than a closed pipe.
func (e *Execd) Run(ctx context.Context) error {
	if e.Signal == SignalNone && e.Interval <= 0 {
		return fmt.Errorf("%w: signal %q needs a positive interval", ErrConfig, SignalNone)
	}
	stop := make(chan struct{})
	defer close(stop)
	queued, lines, eof := readLines(e.Stdin, stop)
	if e.StdinEnded && e.Signal != SignalStdin {
		e.Log.Infof("stdin is at its end (</dev/null, cron, nohup): --signal %s gathers on until SIGTERM or until stdout is closed", e.Signal)
		eof = nil // never ready: its end stops nothing
	}
	answered := false // a stdin line was answered

	// A first, silent gather: the first batch written then has rates.
	if err := e.Collector.Prime(); err != nil {
		e.Log.Errorf("%v", err)
	}
	if e.ReturnMemory {
		e.Collector.returnMemory()
	}
	var tick <-chan time.Time
	if e.Signal == SignalNone {
		t := time.NewTicker(e.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			e.Log.Debugf("stopping: %v", context.Cause(ctx))
			return nil
		case <-eof:
			var err error
			if e.Signal != SignalNone && e.merge(queued.Swap(0)) {
				err = e.write() // lines came before the end: one last batch
				answered = true
			}
			if e.Signal == SignalStdin && !answered {
				e.Log.Warnf("stdin ended before its first line: --signal %s gathers once per line Telegraf writes to stdin; under cron, nohup or </dev/null use --signal %s, which gathers every --interval", SignalStdin, SignalNone)
			}
			e.Log.Debugf("stdin closed: stopping")
			return err
		case <-lines:
			if e.Signal == SignalNone || !e.merge(queued.Swap(0)) {
				continue // stdin is read only to see EOF; or already answered
			}
			answered = true
		case sig := <-e.Signals:
			e.Log.Debugf("gathering on %v", sig)
		case <-tick:
		}
		if err := e.write(); err != nil || e.stopped {
			return err
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

// write gathers and writes one batch. A closed reader sets e.stopped.
func (e *Execd) write() error {
	err := e.Collector.WriteBatch(e.Stdout, e.Log)
	if e.ReturnMemory {
		e.Collector.returnMemory()
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrNothingGathered):
		e.Log.Errorf("%v", err) // try again next time: /proc may come back
	case errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrClosedPipe):
		e.stopped = true // the reader went away: nothing left to do
	default:
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
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
