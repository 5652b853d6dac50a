//go:build linux

package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/scripting"
)

// loop.go runs a script again and again: on this host's frames every
// interval (watch), or on a recording's frames (watch and run --replay).
// A failed run is a line on stderr, and the next goes on; only a reader
// of stdout that has gone, or the context, ends the loop.

// Loop is the state kept across ticks: the Run (its pipeline, Lua state
// and session grouper), or the worker running the script.
type Loop struct {
	Run    *Run
	Stdout *Stdout
	// Worker runs the ticks when set (scripts isolated).
	Worker *scripting.Worker
	// What names a tick in a failure's line: "watch: tick" unless set.
	What string

	failed      int // consecutive failed ticks
	failedTotal int
	ticked      bool // a tick ran: the first's note is printed, whatever its n
}

// Failed is how many ticks failed in all.
func (l *Loop) Failed() int { return l.failedTotal }

// Every ticks until ctx ends, count ticks have run (0: no end), or stdout
// is closed: the pipeline's driver, a frame every interval from the first
// at once. Ticks that a slow run overlaps are skipped, not queued.
func (l *Loop) Every(ctx context.Context, interval time.Duration, count int) {
	n := 0
	l.Run.Pipeline.Run(ctx, frame.Count(frame.Every(interval, true), count), func(f frame.Frame, err error) error {
		n++
		if !l.Tick(ctx, n, f, err) {
			return frame.ErrStop
		}
		return nil
	})
}

// Tick runs the script once on f (the n-th: a replay's --at counts the
// recording's frames), here or in the worker, and reports whether to go
// on: only a closed stdout stops the loop; every other failure (gatherErr:
// the gather's) is logged and the next tick goes on. The first tick's note
// is printed.
func (l *Loop) Tick(ctx context.Context, n int, f frame.Frame, gatherErr error) bool {
	if ctx.Err() != nil {
		return false
	}
	first := !l.ticked
	l.ticked = true
	var note string
	var err error
	switch {
	case gatherErr != nil:
		err = fmt.Errorf("scanning /proc: %w", gatherErr)
	case l.Worker != nil:
		var d scripting.WorkerDone
		if d, err = l.Worker.Tick(ctx, f); err == nil {
			note, err = d.Note, Done(d)
		}
		// The run's lines, kept by the worker's parent side until it ended.
		if ferr := l.Run.Out.Flush(l.Stdout); ferr != nil && !ClosedPipe(ferr) && err == nil {
			err = fmt.Errorf("writing metrics: %w", ferr)
		}
	default:
		note, err = l.Run.Frame(ctx, f, l.Stdout)
	}
	switch {
	case l.Stdout.Gone():
		return false // nobody reads any more
	case ctx.Err() != nil: // interrupted mid-run: not the script's fault
	case err != nil:
		l.fail(n, err)
	default:
		l.failed = 0
		if note != "" && first {
			fmt.Fprintf(l.Run.Stderr, "procwalk: %s\n", note)
		}
	}
	return true
}

// fail logs a failed tick; a run of failures says how many in a row.
func (l *Loop) fail(n int, err error) {
	l.failed++
	l.failedTotal++
	suffix := ""
	if l.failed > 1 {
		suffix = fmt.Sprintf(" (%d failed ticks in a row)", l.failed)
	}
	// One line, escaped: the message may name a process, and holds the
	// script's traceback.
	what := l.What
	if what == "" {
		what = "watch: tick"
	}
	fmt.Fprintf(l.Run.Stderr, "procwalk: %s %d failed%s: %s\n", what, n, suffix, procwalk.Printable(err.Error()))
}

// Replay is watch --replay: the recording's frames as ticks, every frame
// or interval apart on the recorded clock, at most count (0: all); a line
// on stderr says what was replayed.
func (l *Loop) Replay(ctx context.Context, interval time.Duration, count int) {
	rp := l.Run.Replay
	frames, first, last := rp.Each(l.Run.Stderr, EveryInterval(interval), func(n int, f frame.Frame) bool {
		return l.Tick(ctx, n, f, nil) && (count <= 0 || n < count)
	})
	if ctx.Err() == nil && !l.Stdout.Gone() {
		fmt.Fprintf(l.Run.Stderr, "procwalk: replayed %d frames of %s, %s to %s\n", frames, procwalk.Printable(rp.Path),
			first.Local().Format("2006-01-02 15:04:05"), last.Local().Format("15:04:05"))
	}
}
