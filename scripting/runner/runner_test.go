//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// textEncoder writes "measurement k=v ..." lines, keys sorted, and
// refuses a measurement named "bad".
type textEncoder struct{}

func (textEncoder) AppendMetric(dst []byte, m string, tags map[string]string, fields map[string]any, _ time.Time) ([]byte, error) {
	if m == "bad" {
		return dst, errors.New("refused")
	}
	dst = append(dst, m...)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		dst = fmt.Appendf(dst, " %s=%v", k, fields[k])
	}
	return append(dst, '\n'), nil
}

func (textEncoder) AppendActions(dst []byte, events ...kill.ActionEvent) ([]byte, error) {
	for _, e := range events {
		dst = fmt.Appendf(dst, "action pid=%d\n", e.PID)
	}
	return dst, nil
}

func TestLines(t *testing.T) {
	var alerts []string
	l := &Lines{Enc: textEncoder{}, Alert: func(m scripting.WorkerEmit) { alerts = append(alerts, m.Measurement) }}
	l.Add(scripting.WorkerEmit{Measurement: "m", Fields: map[string]any{"v": 1}})
	l.Add(scripting.WorkerEmit{Measurement: scripting.AlertMeasurement, Fields: map[string]any{"message": "x"}})
	l.Add(scripting.WorkerEmit{Measurement: "bad"})
	l.Action(kill.ActionEvent{PID: 42})
	var out bytes.Buffer
	if err := l.Flush(&out); err != nil {
		t.Fatal(err)
	}
	if want := "m v=1\nprocwalk_alert message=x\naction pid=42\n"; out.String() != want {
		t.Errorf("lines %q; want %q", out.String(), want)
	}
	if !slices.Equal(alerts, []string{scripting.AlertMeasurement}) {
		t.Errorf("alerts %v", alerts)
	}
	out.Reset()
	l.Flush(&out)
	if out.Len() != 0 {
		t.Errorf("flushed twice: %q", out.String())
	}

	var passed []string
	c := &Checked{Enc: textEncoder{}, To: func(m scripting.WorkerEmit) { passed = append(passed, m.Measurement) }}
	if err := c.Emit("m", nil, map[string]any{"v": 1}, time.Time{}); err != nil {
		t.Error(err)
	}
	if err := c.Emit("bad", nil, nil, time.Time{}); err == nil {
		t.Error("a refused metric is no error")
	}
	if !slices.Equal(passed, []string{"m"}) {
		t.Errorf("passed on %v; want [m]", passed)
	}
}

// fixtureFrame is a frame of the fixture /proc.
func fixtureFrame(t *testing.T) frame.Frame {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.AllFields)
	if err != nil {
		t.Fatal(err)
	}
	return frame.Frame{Snapshot: snap, Notes: []string{"a note\x1b"}}
}

// newRun is a Run of source in this process, its output on stderr.
func newRun(t *testing.T, source string, stderr io.Writer, rp ...*Replay) *Run {
	script, err := scripting.Compile("rule.lua", []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{Script: script, Out: &Lines{Enc: textEncoder{}}, Stderr: stderr,
		Hint: func(err error) error { return fmt.Errorf("%w (hint)", err) },
		Note: func(s *procwalk.Snapshot) string { return fmt.Sprintf("%d processes", len(s.Procs)) }}
	if len(rp) > 0 {
		r.Replay = rp[0]
	}
	r.Start(scripting.Config{Emitter: &Checked{Enc: textEncoder{}, To: r.Keep}, Mode: "watch", Limits: scripting.DefaultLimits()})
	t.Cleanup(r.Close)
	return r
}

// A run's metrics are written when it ends, with the frame's note; the
// grouping's notes are printed, escaped, when the script asks for
// sessions; a failed run's error gets the hint.
func TestRunFrame(t *testing.T) {
	var stderr, stdout bytes.Buffer
	r := newRun(t, `local pw = require "procwalk"
pw.sessions()
pw.emit("m", {}, {n = #pw.processes()})
if pw.state.ran then error("second run") end
pw.state.ran = true`, &stderr)
	f := fixtureFrame(t)
	note, err := r.Frame(context.Background(), f, &stdout)
	want := fmt.Sprintf("m n=%d\n", len(f.Snapshot.Procs))
	if err != nil || note != fmt.Sprintf("%d processes", len(f.Snapshot.Procs)) || stdout.String() != want {
		t.Errorf("note %q, err %v, stdout %q; want %q", note, err, stdout.String(), want)
	}
	if want := "procwalk: note: a note\\x1b\n"; stderr.String() != want {
		t.Errorf("stderr %q; want %q", stderr.String(), want)
	}
	stdout.Reset()
	_, err = r.Frame(context.Background(), f, &stdout)
	if err == nil || !strings.Contains(err.Error(), "second run") || !strings.HasSuffix(err.Error(), "(hint)") || stdout.Len() != 0 {
		t.Errorf("failed run: err %v, stdout %q; want the hint, no lines", err, stdout.String())
	}
}

type pipeGone struct{ writes int }

func (p *pipeGone) Write(b []byte) (int, error) {
	p.writes++
	return 0, syscall.EPIPE
}

// A failed tick is a line, counted in a row; a good one resets the count;
// a reader of stdout gone ends the loop and cancels the context.
func TestLoopTicks(t *testing.T) {
	var stderr bytes.Buffer
	r := newRun(t, `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
if pw.state.n ~= 3 then error("tick " .. pw.state.n) end
pw.emit("m", {}, {n = pw.state.n})`, &stderr)
	ctx, stdout, stop := WatchStdout(context.Background(), io.Discard, false)
	defer stop()
	l := &Loop{Run: r, Stdout: stdout}
	f := fixtureFrame(t)
	for n := 1; n <= 4; n++ {
		if !l.Tick(ctx, n, f, nil) {
			t.Fatalf("tick %d stopped the loop", n)
		}
	}
	l.Tick(ctx, 5, f, errors.New("gather failed"))
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	want := []string{
		"procwalk: watch: tick 1 failed: ",
		"procwalk: watch: tick 2 failed (2 failed ticks in a row): ",
		"procwalk: watch: tick 4 failed: ",
		"procwalk: watch: tick 5 failed (2 failed ticks in a row): scanning /proc: gather failed",
	}
	if len(lines) != len(want) || l.Failed() != 4 {
		t.Fatalf("stderr:\n%s\nfailed %d; want 4 lines starting %q", stderr.String(), l.Failed(), want)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %q; want it to start %q", i, lines[i], want[i])
		}
	}

	gone := &pipeGone{}
	ctx, stdout, stop = WatchStdout(context.Background(), gone, false)
	defer stop()
	r = newRun(t, `require("procwalk").emit("m", {}, {v = 1})`, io.Discard)
	l = &Loop{Run: r, Stdout: stdout}
	if l.Tick(ctx, 1, f, nil) || !stdout.Gone() || ctx.Err() == nil || gone.writes != 1 {
		t.Errorf("stdout gone: the loop goes on (gone %v, ctx %v, %d writes)", stdout.Gone(), ctx.Err(), gone.writes)
	}
}

func TestDone(t *testing.T) {
	if err := Done(scripting.WorkerDone{}); err != nil {
		t.Errorf("a run that succeeded: %v", err)
	}
	var ee *ExitError
	if err := Done(scripting.WorkerDone{Err: "boom", Code: 3}); !errors.As(err, &ee) || ee.Code != 3 || err.Error() != "boom" {
		t.Errorf("a failed run: %v", err)
	}
}
