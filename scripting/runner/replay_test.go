//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

const recordingFixture = "../../procwalk/recording/testdata/format2-codec1.pwrec"

func TestParseAt(t *testing.T) {
	first := time.Date(2026, 11, 28, 3, 0, 0, 0, time.Local)
	for _, tt := range []struct {
		in   string
		want time.Time
	}{
		{"+90s", first.Add(90 * time.Second)},
		{"5m", first.Add(5 * time.Minute)},
		{"03:12", first.Add(12 * time.Minute)},
		{"03:12:30", first.Add(12*time.Minute + 30*time.Second)},
		{"2026-11-28T01:00:00Z", time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)},
	} {
		if got, err := ParseAt(tt.in, first); err != nil || !got.Equal(tt.want) {
			t.Errorf("%q: %v %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"-5s", "soon", "25:00"} {
		if _, err := ParseAt(bad, first); err == nil || !strings.HasPrefix(err.Error(), "--at ") {
			t.Errorf("%q: %v; want an error naming --at", bad, err)
		}
	}
}

func TestFrameLine(t *testing.T) {
	first := time.Date(2026, 11, 28, 3, 0, 0, 0, time.Local)
	if got, want := FrameLine(2, first.Add(1500*time.Millisecond), first), "procwalk: replay: frame 2 at 2026-11-28 03:00:01 (+1.5s)"; got != want {
		t.Errorf("%q; want %q", got, want)
	}
}

// Each hands every frame, or those pick takes, on the recorded clock.
func TestReplayEach(t *testing.T) {
	rp, err := OpenReplay(recordingFixture, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	var stderr bytes.Buffer
	var times []time.Time
	frames, first, last := rp.Each(&stderr, nil, func(n int, f frame.Frame) bool {
		rp.frame = f
		times = append(times, rp.Now())
		return true
	})
	if frames != 3 || len(times) != 3 || !first.Equal(times[0]) || !last.Equal(times[2]) || stderr.Len() != 0 {
		t.Fatalf("%d frames %v, first %v last %v, stderr %q; want 3", frames, times, first, last, stderr.String())
	}
	if rp.Header.Host != "vm" {
		t.Errorf("host %q", rp.Header.Host)
	}

	// Frames at least their spacing plus a nanosecond apart: every other.
	rp2, err := OpenReplay(recordingFixture, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rp2.Close()
	n, _, _ := rp2.Each(&stderr, EveryInterval(times[1].Sub(times[0])+1), func(int, frame.Frame) bool { return true })
	if want := 2; n != want {
		t.Errorf("EveryInterval: %d frames; want %d", n, want)
	}
	if EveryInterval(0) != nil {
		t.Error("EveryInterval(0) picks")
	}
}

// watch --replay on a recording: every frame a tick on the recorded
// clock, then a line saying what was replayed.
func TestLoopReplay(t *testing.T) {
	var stderr bytes.Buffer
	rp, err := OpenReplay(recordingFixture, true)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, `local pw = require "procwalk"
pw.emit("t", {}, {host = pw.hostname(), now = pw.now()})`, &stderr, rp)
	var stdout bytes.Buffer
	ctx, out, stop := WatchStdout(context.Background(), &stdout, false)
	defer stop()
	l := &Loop{Run: r, Stdout: out}
	l.Replay(ctx, 0, 2)
	// On the recorded clock and host: the fixture's first two frames.
	want := "t host=vm now=1.7958689888104253e+09\nt host=vm now=1.7958689898105402e+09\n"
	if stdout.String() != want {
		t.Errorf("stdout %q; want %q", stdout.String(), want)
	}
	if want := "procwalk: 35 processes\nprocwalk: replayed 2 frames of " + recordingFixture; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q; want it to start %q", stderr.String(), want)
	}
}

// --at names the last frame at or before its time; a time before the
// first frame, or a bad one, is --at's OptionError.
func TestFrameAt(t *testing.T) {
	rp, err := OpenReplay(recordingFixture, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	first, err := rp.Reader().Frame(0)
	if err != nil {
		t.Fatal(err)
	}
	start := first.Snapshot.Time
	for _, tt := range []struct {
		at   string
		want int
	}{{"+0s", 0}, {"+500ms", 0}, {"+1500ms", 1}, {"+1h", 2}} {
		if got, err := FrameAt(rp.Reader(), tt.at, start); got != tt.want || err != nil {
			t.Errorf("FrameAt(%q) = %d, %v; want %d", tt.at, got, err, tt.want)
		}
	}
	before := start.Add(-time.Hour).Format(time.RFC3339)
	for _, tt := range []struct{ at, want string }{
		{"soon", `--at "soon": want an offset from the first frame`},
		{before, "--at " + before + ": the recording starts later, at " + start.Local().Format(time.RFC3339)},
	} {
		_, err := FrameAt(rp.Reader(), tt.at, start)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Flag != "at" || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("FrameAt(%q) = %v; want --at's error %q", tt.at, err, tt.want)
		}
	}
}

// replayScript is a Script of source on the fixture recording.
func replayScript(t *testing.T, source, mode string, stderr *bytes.Buffer) *Script {
	var print bytes.Buffer
	o := options(t, source, mode, stderr, &print)
	o.Replay = recordingFixture
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// run --replay: a fresh run per frame, a line before each; --at one
// frame; failed runs counted in the error; a bad --at an OptionError.
func TestScriptReplayRuns(t *testing.T) {
	const rule = `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
pw.emit("t", {}, {n = pw.state.n, now = pw.now()})`
	var stderr, stdout bytes.Buffer
	ctx, out, stop := WatchStdout(context.Background(), &stdout, false)
	defer stop()
	s := replayScript(t, rule, "run", &stderr)
	if err := s.ReplayRuns(ctx, out, ""); err != nil {
		t.Fatal(err)
	}
	// Each frame a fresh run (n = 1), on the recorded clock.
	want := "t n=1 now=1.7958689888104253e+09\nt n=1 now=1.7958689898105402e+09\nt n=1 now="
	if !strings.HasPrefix(stdout.String(), want) || strings.Count(stdout.String(), "\n") != 3 || strings.Count(stderr.String(), "procwalk: replay: frame ") != 3 {
		t.Errorf("stdout %q, stderr %q; want 3 fresh runs", stdout.String(), stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	s = replayScript(t, rule, "run", &stderr)
	if err := s.ReplayRuns(ctx, out, "+1500ms"); err != nil || stdout.String() != "t n=1 now=1.7958689898105402e+09\n" {
		t.Errorf("--at +1500ms: %v, stdout %q; want the second frame alone", err, stdout.String())
	}
	// Its line names it as the recording's second frame, 1 s in (it said
	// "frame 1 ... (+0s)", counting the frames --at picked).
	if want := "procwalk: replay: frame 2 at "; !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), " (+1s)\n") {
		t.Errorf("--at +1500ms: stderr %q, want %q... (+1s)", stderr.String(), want)
	}
	// The frame --at picks is the run's first: its note is printed (it
	// was not when the frame was not the recording's first).
	stderr.Reset()
	var print bytes.Buffer
	o := options(t, rule, "run", &stderr, &print)
	o.Replay = recordingFixture
	o.Note = func(*procwalk.Snapshot) string { return "the frame's note" }
	noted, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer noted.Close()
	if err := noted.ReplayRuns(ctx, out, "+1500ms"); err != nil || !strings.Contains(stderr.String(), "procwalk: the frame's note\n") {
		t.Errorf("--at +1500ms with a note: %v, stderr %q; want the note", err, stderr.String())
	}
	var oe *OptionError
	if err := replayScript(t, rule, "run", &stderr).ReplayRuns(ctx, out, "soon"); !errors.As(err, &oe) || oe.Flag != "at" {
		t.Errorf("--at soon: %v; want --at's OptionError", err)
	}
	err = replayScript(t, `error("no")`, "run", &stderr).ReplayRuns(ctx, out, "")
	if err == nil || err.Error() != "3 of 3 runs failed" || errors.As(err, &oe) {
		t.Errorf("failing runs: %v; want 3 of 3 runs failed, no OptionError", err)
	}
}

// watch --replay: the state kept from tick to tick, count ticks, then
// the line saying what was replayed.
func TestScriptWatchReplay(t *testing.T) {
	var stderr, stdout bytes.Buffer
	ctx, out, stop := WatchStdout(context.Background(), &stdout, false)
	defer stop()
	s := replayScript(t, `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
pw.emit("t", {}, {n = pw.state.n})`, "watch", &stderr)
	s.Watch(ctx, out, 0, 2)
	if stdout.String() != "t n=1\nt n=2\n" || !strings.Contains(stderr.String(), "procwalk: replayed 2 frames of "+recordingFixture) {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
