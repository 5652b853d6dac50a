//go:build linux

package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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
