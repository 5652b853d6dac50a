//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/scripting"
)

// replay.go runs a script on a recording's frames (run --replay, watch
// --replay) instead of this host's: on the recorded clock (pw.now(), the
// snapshots' times that ages, debounce durations and emitted lines read),
// the recorded host's user names, and every kill rehearsed on the frame
// (scripting.ReplayKiller): reported as a dry run, never sent.

// replay is a script run's recording.
type replay struct {
	path   string
	header recording.Header
	// r reads the frames; nil in a worker, which runs on its parent's.
	r *recording.Reader
	// frame is the one the script runs on now; ran is set after the first.
	frame frame.Frame
	ran   bool
}

// openReplay opens the recording at path; frames: this process reads its
// frames (a worker reads only the header: the user names).
func openReplay(path string, frames bool) (*replay, error) {
	r, err := recording.Open(path)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	rp := &replay{path: path, header: r.Header()}
	if frames {
		rp.r = r
	} else {
		r.Close()
	}
	return rp, nil
}

func (rp *replay) close() {
	if rp.r != nil {
		rp.r.Close()
	}
}

// snapshot is the snapshot of the frame the script runs on: what its kills
// are rehearsed on.
func (rp *replay) snapshot() *procwalk.Snapshot { return rp.frame.Snapshot }

// now is the script's clock: the time of the frame it runs on.
func (rp *replay) now() time.Time {
	if rp.frame.Snapshot == nil {
		return time.Time{}
	}
	return rp.frame.Snapshot.Time
}

// logger is textLogger with each record dated on the script's clock, the
// recorded time of its frame.
func (rp *replay) logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			a.Value = slog.TimeValue(rp.now())
		}
		return a
	}}))
}

// at sets the frame of the next run. Under run, each frame is a run of
// its own, as procwalk run at that time would have been: a fresh state.
func (rp *replay) at(f frame.Frame, sr *scriptRun) {
	rp.frame = f
	if sr.cfg.Mode == "run" && rp.ran {
		sr.rt.Close()
		sr.rt = scripting.New(sr.cfg)
	}
	rp.ran = true
}

// each hands the recording's frames to tick in order, n counting from 1,
// those pick takes (nil: every one), until tick returns false or the
// frames end. A file cut short or damaged ends the replay with a note
// naming the frame; the frames before it were replayed.
func (rp *replay) each(stderr io.Writer, pick func(frame.Frame) bool, tick func(n int, f frame.Frame) bool) (frames int, first, last time.Time) {
	for i := 0; ; i++ {
		f, err := rp.r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "procwalk: note: replay stopped: %s\n", printable(err.Error()))
			break
		}
		if pick != nil && !pick(f) {
			continue
		}
		frames++
		if first.IsZero() {
			first = f.Snapshot.Time
		}
		last = f.Snapshot.Time
		if !tick(frames, f) {
			break
		}
	}
	return frames, first, last
}

// everyInterval picks frames at least interval apart, as watch --interval
// would have ticked on the recorded host (0: every frame). The rates of a
// frame were measured since the frame recorded before it.
func everyInterval(interval time.Duration) func(frame.Frame) bool {
	if interval <= 0 {
		return nil
	}
	var last time.Time
	return func(f frame.Frame) bool {
		t := f.Snapshot.Time
		if !last.IsZero() && t.Sub(last) < interval {
			return false
		}
		last = t
		return true
	}
}

// parseAt reads run --replay's --at: an offset from the first frame
// ("+90s", "5m"), a clock time on the first frame's day in the local time
// zone ("03:12", "03:12:30"), or an RFC 3339 time.
func parseAt(s string, first time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "+")); err == nil && d >= 0 {
		return first.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	day := first.Local()
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return time.Date(day.Year(), day.Month(), day.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.Local), nil
		}
	}
	return time.Time{}, fmt.Errorf("--at %q: want an offset from the first frame (+90s, 5m), a time of day (03:12, 03:12:30) or an RFC 3339 time", s)
}

// frameLine is the line run --replay writes on stderr before each frame's
// run: which frame, when, and how far into the recording.
func frameLine(n int, f, first time.Time) string {
	return fmt.Sprintf("procwalk: replay: frame %d at %s (+%s)", n, f.Local().Format("2006-01-02 15:04:05"), f.Sub(first).Round(time.Millisecond))
}

// replayRun is run --replay: one run per frame, each a fresh run as
// procwalk run would have made then (a line on stderr before each says
// which), or the one frame --at names. It fails (exit 1) when a run
// failed.
func (c *runCommand) replayRun(ctx context.Context, sr *scriptRun, stdout *readerGone) error {
	w := &watchLoop{sr: sr, e: c.e, stdout: stdout, what: "run: frame"}
	if c.s.isolated(c.e) {
		w.worker = sr.worker(stdout, scripting.WorkerGatherWait)
		defer w.worker.Close()
	}
	var pick func(frame.Frame) bool
	if c.at != "" {
		first, err := sr.replay.r.Frame(0)
		if err != nil {
			return usageErrorf("--replay: %v", err)
		}
		at, err := parseAt(c.at, first.Snapshot.Time)
		if err != nil {
			return usageErrorf("%v", err)
		}
		// The last frame at or before at: the one on screen then.
		n, err := sr.replay.r.Len()
		if err != nil {
			return usageErrorf("--replay: %v", err)
		}
		chosen := -1
		for i := 0; i < n; i++ {
			f, err := sr.replay.r.Frame(i)
			if err != nil || f.Snapshot.Time.After(at) {
				break
			}
			chosen = i
		}
		if chosen < 0 {
			return usageErrorf("--at %s: the recording starts later, at %s", c.at, first.Snapshot.Time.Local().Format(time.RFC3339))
		}
		i := -1
		pick = func(frame.Frame) bool { i++; return i == chosen }
	}
	var first time.Time
	frames, _, _ := sr.replay.each(c.e.stderr, pick, func(n int, f frame.Frame) bool {
		if first.IsZero() {
			first = f.Snapshot.Time
		}
		fmt.Fprintln(c.e.stderr, frameLine(n, f.Snapshot.Time, first))
		return w.tick(ctx, n, f, nil)
	})
	switch {
	case stdout.Gone():
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s interrupted: %w", sr.script.Name, context.Cause(ctx))
	case frames == 0:
		return &exitErr{Code: exitError, Err: fmt.Errorf("--replay %s: no frame to run on", sr.replay.path)}
	case w.failedTotal > 0:
		return &exitErr{Code: exitError, Err: fmt.Errorf("%d of %d runs failed", w.failedTotal, frames)}
	}
	return nil
}

// replayWatch is watch --replay: the frames as ticks, every frame or
// --interval apart on the recorded clock, at most count; a line on stderr
// says what was replayed.
func (w *watchLoop) replayWatch(ctx context.Context, interval time.Duration, count int) {
	rp := w.sr.replay
	frames, first, last := rp.each(w.e.stderr, everyInterval(interval), func(n int, f frame.Frame) bool {
		return w.tick(ctx, n, f, nil) && (count <= 0 || n < count)
	})
	if ctx.Err() == nil && !w.stdout.Gone() {
		fmt.Fprintf(w.e.stderr, "procwalk: replayed %d frames of %s, %s to %s\n", frames, printable(rp.path),
			first.Local().Format("2006-01-02 15:04:05"), last.Local().Format("15:04:05"))
	}
}
