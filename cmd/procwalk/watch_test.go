//go:build linux

package main

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tickScript prints the tick number kept in procwalk.state, the CPU % of
// pid 1 (nil until a second tick measured it) and emits one line a tick;
// tick 2 fails, with an escape sequence in its message (as a process name
// may hold).
const tickScript = `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print("tick", pw.state.n, pw.process(1).cpu, pw.mode)
pw.emit("tick", {script = pw.script}, {n = pw.state.n})
if pw.state.n == 2 then error("tick two breaks \27[31m") end`

func TestWatchTicks(t *testing.T) {
	path := writeScript(t, "tick.lua", tickScript)
	// --lines-only: print to stderr, stdout for the emitted lines alone.
	r := scriptCLI(t, "watch", "--lines-only", "--interval", "20ms", "--count", "3", path)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// State carries over; rates are measured from the second tick (the
	// fixture's counters do not move: 0 %); tick 2's error is logged and
	// tick 3 runs. The error is one line, escaped.
	for _, want := range []string{
		"tick\t1\tnil\twatch\n",
		"tick\t2\t0\twatch\n",
		`procwalk: watch: tick 2 failed: lua script error: tick.lua:5: tick two breaks \x1b[31m\nstack traceback:\n\ttick.lua:5: in main chunk` + "\n",
		"tick\t3\t0\twatch\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The failed tick's metric is not written.
	lines := checkLines(t, r.stdout, 2)
	for i, l := range lines {
		if want := "tick,script=tick.lua n=" + string(rune('1'+2*i)) + " "; !strings.HasPrefix(l, want) {
			t.Errorf("line %d: %q, want prefix %q", i+1, l, want)
		}
	}
}

// Flags after the name, and the interval from the environment.
func TestWatchFlagsAndEnv(t *testing.T) {
	path := writeScript(t, "tick.lua", `print("tick")`)
	clearEnv(t)
	t.Setenv("PROCWALK_INTERVAL", "10ms")
	start := time.Now()
	r := cli(t, "watch", "--proc", scriptProc, path, "--count", "3")
	if r.code != exitOK || strings.Count(r.stdout, "tick\n") != 3 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The default 10s interval puts 3 ticks at least 20 s apart, by the
	// clock: any shorter run used the 10ms, however slow the machine.
	if d := time.Since(start); d >= 20*time.Second {
		t.Errorf("3 ticks took %v: PROCWALK_INTERVAL was not used", d)
	}
}

// SIGINT and SIGTERM cancel main's context: watch ends with exit 0, even
// in the middle of a run. The context is cancelled once tick 2 has started
// its endless loop, however slow the machine.
func TestWatchStopsOnSignal(t *testing.T) {
	path := writeScript(t, "slow.lua", `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print("tick", pw.state.n)
if pw.state.n == 2 then while true do end end`)
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stderr := &cancelOnWrite{cancel: cancel, when: "tick\t2\n"}
	var stdout strings.Builder
	err := run(ctx, []string{"watch", "--lines-only", "--proc", scriptProc, "--interval", "50ms", "--script-timeout", "10m", path},
		strings.NewReader(""), &stdout, stderr)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("tick 2 never started: %v\n%s", ctx.Err(), stderr.String())
	}
	if code := exitCode(err); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// A hang guard: the cancel stops the run at once; ignored, the 10m
	// script timeout would.
	if d := time.Since(stderr.at); d > time.Minute {
		t.Errorf("took %v to stop after the cancel", d)
	}
	if strings.Contains(stderr.String(), "failed") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// cancelOnWrite is a stderr that calls cancel once when what was written
// contains when. It embeds no writer, so that io.WriteString cannot bypass
// Write.
type cancelOnWrite struct {
	b      strings.Builder
	cancel context.CancelFunc
	when   string
	at     time.Time
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	n, err := w.b.Write(p)
	if w.at.IsZero() && strings.Contains(w.b.String(), w.when) {
		w.at = time.Now()
		w.cancel()
	}
	return n, err
}

func (w *cancelOnWrite) String() string { return w.b.String() }

func TestWatchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0s", "zombies"}, "--interval 0s: want a positive tick"},
		{[]string{"--count", "-1", "zombies"}, "--count -1"},
		{[]string{"--no-rates", "zombies"}, "--no-rates does not apply to watch"},
		{[]string{"nope"}, `no script "nope"`},
		{[]string{"zombies", "alert=1"}, "script arguments go after --"},
	} {
		r := scriptCLI(t, "watch", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// A tick that hits a limit is logged, and the next one starts from a
// fresh state.
func TestWatchRecoversFromLimits(t *testing.T) {
	path := writeScript(t, "bomb.lua", `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print("tick", pw.state.n)
if pw.debounce("first", true, 1) and not pw.debounce("second", true, 2) then local s = string.rep("x", 1e10) end`)
	r := scriptCLI(t, "watch", "--lines-only", "--interval", "10ms", "--count", "3", path)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "tick\t1\nprocwalk: watch: tick 1 failed: lua script hit a sandbox limit: bomb.lua:4: string.rep: a result of 9.3 GiB is over the 4.0 MiB string limit"
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "tick\t1\ntick\t2\n") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// A reader that goes away ends watch: no tick is lost to a half-written
// batch, and the exit is clean.
func TestWatchStopsWhenStdoutCloses(t *testing.T) {
	path := writeScript(t, "emit.lua", `require("procwalk").emit("tick", {}, {n = 1})`)
	clearEnv(t)
	var stderr strings.Builder
	err := run(context.Background(), []string{"watch", "--proc", scriptProc, "--interval", "10ms", path},
		strings.NewReader(""), closedWriter{}, &stderr)
	if exitCode(err) != exitOK || stderr.Len() != 0 {
		t.Errorf("exit %d, stderr %q", exitCode(err), stderr.String())
	}
}

// closedWriter is a stdout whose reader has gone.
type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }
