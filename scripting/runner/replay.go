//go:build linux

package runner

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/recording"
)

// replay.go runs a script on a recording's frames (run --replay, watch
// --replay) instead of this host's: on the recorded clock (pw.now(), the
// snapshots' times that ages, debounce durations and emitted lines read),
// the recorded host's user names, and every kill rehearsed on the frame
// (scripting.ReplayKiller): reported as a dry run, never sent.

// Replay is a script run's recording.
type Replay struct {
	Path   string
	Header recording.Header
	// r reads the frames; nil in a worker, which runs on its parent's.
	r *recording.Reader
	// frame is the one the script runs on now; ran is set after the first.
	frame frame.Frame
	ran   bool
}

// OpenReplay opens the recording at path; frames: this process reads its
// frames (a worker reads only the header: the user names).
func OpenReplay(path string, frames bool) (*Replay, error) {
	r, err := recording.Open(path)
	if err != nil {
		return nil, err
	}
	rp := &Replay{Path: path, Header: r.Header()}
	if frames {
		rp.r = r
	} else {
		r.Close()
	}
	return rp, nil
}

// Close closes the recording.
func (rp *Replay) Close() {
	if rp.r != nil {
		rp.r.Close()
	}
}

// Reader reads the recording's frames; nil when opened without them.
func (rp *Replay) Reader() *recording.Reader { return rp.r }

// Snapshot is the snapshot of the frame the script runs on: what its
// kills are rehearsed on (scripting.ReplayKiller).
func (rp *Replay) Snapshot() *procwalk.Snapshot { return rp.frame.Snapshot }

// Now is the script's clock: the time of the frame it runs on.
func (rp *Replay) Now() time.Time {
	if rp.frame.Snapshot == nil {
		return time.Time{}
	}
	return rp.frame.Snapshot.Time
}

// Logger is a text logger on w with each record dated on the script's
// clock, the recorded time of its frame.
func (rp *Replay) Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			a.Value = slog.TimeValue(rp.Now())
		}
		return a
	}}))
}

// Each hands the recording's frames to tick in order, n counting from 1,
// those pick takes (nil: every one), until tick returns false or the
// frames end. A file cut short or damaged ends the replay with a note on
// stderr naming the frame; the frames before it were replayed.
func (rp *Replay) Each(stderr io.Writer, pick func(frame.Frame) bool, tick func(n int, f frame.Frame) bool) (frames int, first, last time.Time) {
	for i := 0; ; i++ {
		f, err := rp.r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "procwalk: note: replay stopped: %s\n", procwalk.Printable(err.Error()))
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

// EveryInterval picks frames at least interval apart, as watch --interval
// would have ticked on the recorded host (0: every frame, nil). The rates
// of a frame were measured since the frame recorded before it.
func EveryInterval(interval time.Duration) func(frame.Frame) bool {
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

// ParseAt reads run --replay's --at: an offset from the first frame
// ("+90s", "5m"), a clock time on the first frame's day in the local time
// zone ("03:12", "03:12:30"), or an RFC 3339 time.
func ParseAt(s string, first time.Time) (time.Time, error) {
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
	return time.Time{}, &OptionError{Flag: "at", Value: strconv.Quote(s), Err: errors.New("want an offset from the first frame (+90s, 5m), a time of day (03:12, 03:12:30) or an RFC 3339 time")}
}

// FrameAt is the index in r of the frame at names (ParseAt's forms, first
// the time of r's first frame): the last frame at or before that time,
// the one on screen then. A bad at, or one before the first frame, is an
// *OptionError of --at; a recording that cannot be read, of --replay.
func FrameAt(r *recording.Reader, at string, first time.Time) (int, error) {
	t, err := ParseAt(at, first)
	if err != nil {
		return 0, err
	}
	i, err := r.IndexAt(t)
	if err != nil {
		return 0, &OptionError{Flag: "replay", Err: err}
	}
	if i < 0 {
		return 0, &OptionError{Flag: "at", Value: at, Err: fmt.Errorf("the recording starts later, at %s", first.Local().Format(time.RFC3339))}
	}
	return i, nil
}

// PickAt picks, for Script.ReplayRuns, the frame at names (FrameAt); nil
// when at is "" (every frame).
func (rp *Replay) PickAt(at string) (func(frame.Frame) bool, error) {
	if at == "" {
		return nil, nil
	}
	first, err := rp.r.Frame(0)
	if err != nil {
		return nil, &OptionError{Flag: "replay", Err: err}
	}
	chosen, err := FrameAt(rp.r, at, first.Snapshot.Time)
	if err != nil {
		return nil, err
	}
	i := -1
	return func(frame.Frame) bool { i++; return i == chosen }, nil
}

// FrameLine is the line run --replay writes on stderr before each frame's
// run: which frame, when, and how far into the recording.
func FrameLine(n int, f, first time.Time) string {
	return fmt.Sprintf("procwalk: replay: frame %d at %s (+%s)", n, f.Local().Format("2006-01-02 15:04:05"), f.Sub(first).Round(time.Millisecond))
}
