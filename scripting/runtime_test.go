//go:build linux

package scripting

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// ticks runs src n times in one Runtime, as watch does, and returns what
// each run printed and the error of each run.
func ticks(t *testing.T, w *world, src string, n int) ([]string, []error) {
	t.Helper()
	s, err := Compile("tick.lua", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := w.cfg
	cfg.Print = &out
	r := New(cfg)
	defer r.Close()
	var prints []string
	var errs []error
	for i := 0; i < n; i++ {
		out.Reset()
		errs = append(errs, r.Run(context.Background(), s, w.in))
		prints = append(prints, strings.TrimSuffix(out.String(), "\n"))
	}
	return prints, errs
}

func TestStatePersistsAcrossRuns(t *testing.T) {
	w := newWorld(t)
	prints, errs := ticks(t, w, `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
counter = (counter or 0) + 1 -- globals persist too
print(pw.state.n, counter)`, 3)
	if got := strings.Join(prints, " "); got != "1\t1 2\t2 3\t3" {
		t.Errorf("got %q", got)
	}
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// A coroutine kept in procwalk.state goes on in later runs (it was bound to
// the context of the run that created it, so it failed with "context
// canceled" from the second run on).
func TestCoroutinesPersistAcrossRuns(t *testing.T) {
	w := newWorld(t)
	prints, errs := ticks(t, w, `local pw = require "procwalk"
local function counter() local i = 0 while true do i = i + 1 coroutine.yield(i) end end
pw.state.gen = pw.state.gen or coroutine.wrap(counter)
pw.state.co = pw.state.co or coroutine.create(counter)
print(pw.state.gen(), coroutine.resume(pw.state.co))`, 3)
	if got := strings.Join(prints, " "); got != "1\ttrue\t1 2\ttrue\t2 3\ttrue\t3" {
		t.Errorf("got %q, errors %v", got, errs)
	}
}

func TestDebounce(t *testing.T) {
	w := newWorld(t)
	// The condition holds in ticks 1-3, fails in 4, holds in 5-6; "gone" is
	// asked about only in tick 1 and 3, so it restarts.
	prints, _ := ticks(t, w, `local pw = require "procwalk"
pw.state.tick = (pw.state.tick or 0) + 1
local t = pw.state.tick
local held = pw.debounce("hot", t ~= 4, 2)
local gone = (t == 1 or t == 3) and pw.debounce("gone", true, 2)
print(held, gone)`, 6)
	want := []string{"false\tfalse", "true\tfalse", "true\tfalse", "false\tfalse", "false\tfalse", "true\tfalse"}
	if strings.Join(prints, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", prints, want)
	}
}

// TestDebounceDuration: with a duration, debounce holds once the
// condition has held in every run for that long on the snapshots' clock,
// whatever the number of runs: snapshots 2 minutes apart reach "5m" at the
// fourth (6 minutes after the first), a false run starts again (false at
// 10m: held again from 12m, at 18m), and so does a key not asked about in
// a run ("asked", 3 minutes from 16m: at 20m).
func TestDebounceDuration(t *testing.T) {
	w := newWorld(t)
	s, err := Compile("held.lua", []byte(`local pw = require "procwalk"
local t = pw.state.t or 0
pw.state.t = t + 1
local held = pw.debounce("hot", t ~= 5, "5m")
local asked = (t < 2 or t > 7) and pw.debounce("asked", true, "3m")
print(held, asked)`))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := w.cfg
	cfg.Print = &out
	r := New(cfg)
	defer r.Close()
	start := w.in.Snapshot.Time
	var got []string
	for i := range 11 {
		snap := *w.in.Snapshot
		snap.Time = start.Add(time.Duration(i) * 2 * time.Minute)
		in := w.in
		in.Snapshot = &snap
		out.Reset()
		if err := r.Run(context.Background(), s, in); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimSuffix(out.String(), "\n"))
	}
	want := []string{"false\tfalse", "false\tfalse", "false\tfalse", "true\tfalse", "true\tfalse", "false\tfalse",
		"false\tfalse", "false\tfalse", "false\tfalse", "true\tfalse", "true\ttrue"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestScriptErrorKeepsStateLimitErrorResetsIt(t *testing.T) {
	w := newWorld(t)
	// Tick 3 loops until this deadline; the others take microseconds, so a
	// second leaves them room on a loaded machine.
	w.cfg.Limits.Timeout = time.Second
	prints, errs := ticks(t, w, `local pw = require "procwalk"
pw.state.tick = (pw.state.tick or 0) + 1
print(pw.state.tick)
if pw.state.tick == 2 then error("tick two fails") end
if pw.state.tick == 3 then while true do end end`, 5)
	// Tick 2 fails but keeps the state; tick 3 times out and the state is
	// rebuilt, so the count starts again.
	if got := strings.Join(prints, " "); got != "1 2 3 1 2" {
		t.Errorf("got %q", got)
	}
	if !errors.Is(errs[1], ErrScript) || !strings.Contains(errs[1].Error(), "tick.lua:4: tick two fails") {
		t.Errorf("tick 2: %v", errs[1])
	}
	if !errors.Is(errs[2], ErrTimeout) || !strings.Contains(errs[2].Error(), "tick.lua:5:") {
		t.Errorf("tick 3: %v", errs[2])
	}
	if errs[0] != nil || errs[3] != nil || !errors.Is(errs[4], ErrScript) {
		t.Errorf("ticks 1, 4, 5: %v, %v, %v; want nil, nil and tick two's error again", errs[0], errs[3], errs[4])
	}
}

// A limit error the script caught does not make its own later error a
// limit error, nor cost it its state.
func TestCaughtLimitIsNotTheRunsError(t *testing.T) {
	w := newWorld(t)
	prints, errs := ticks(t, w, `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print(pw.state.n, pcall(string.rep, "x", 1e10))
if pw.state.n == 1 then error("my own bug") end`, 2)
	if !errors.Is(errs[0], ErrScript) || errors.Is(errs[0], ErrLimit) || !strings.Contains(errs[0].Error(), "tick.lua:4: my own bug") {
		t.Errorf("tick 1: %v, want ErrScript", errs[0])
	}
	if !strings.HasPrefix(prints[0], "1\tfalse\ttick.lua:3: string.rep: a result of 9.3 GiB") || !strings.HasPrefix(prints[1], "2\tfalse") || errs[1] != nil {
		t.Errorf("got %q, %v; want the state kept into tick 2", prints, errs[1])
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"local x = = 1", "broken.lua:1: syntax error near '='"},
		{"print('a')\nif x then\n", "broken.lua: at end of file"},
		{"x = 'unfinished", "broken.lua: at end of file: unterminated string"},
		{"goto x", "no visible label 'x' for <goto> at line 1"},
		// gopher-lua lost the items past 25,550 (SETLIST's operand).
		{"local t = {" + strings.Repeat("1,", 25551) + "}", "broken.lua:1: a table constructor of 25551 list items, more than 25550 (Lua 5.1's limit): fill the table in a loop"},
		{strings.Repeat("-", 2<<20), "over the 256.0 KiB limit"},
		// Deep nesting: the compiler recurses, the Go stack grows; no crash.
		{"return " + strings.Repeat("{", 100000) + strings.Repeat("}", 100000), "broken.lua:1: chunk has too many syntax levels"},
		// Compile cost (issue 10, class 6): each shape below cost seconds to
		// minutes and up to a GiB at a megabyte; the checks before the
		// parser and the compiler (precheck.go) refuse them at a depth of
		// 1000, whatever the size.
		{"return " + strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000), "broken.lua:1: chunk has too many syntax levels"},
		{strings.Repeat("do ", 2000) + strings.Repeat(" end", 2000), "broken.lua:1: chunk has too many syntax levels"},
		{"local a = ''\nreturn " + strings.Repeat("a..", 20000) + "a", "broken.lua:2: chunk has too many syntax levels"},
		{"return " + strings.Repeat("2^", 20000) + "1", "chunk has too many syntax levels"},
		{"return " + strings.Repeat("- ", 20000) + "1", "chunk has too many syntax levels"},
		{"return " + strings.Repeat("not ", 20000) + "1", "chunk has too many syntax levels"},
		{"local a = 1\nreturn " + strings.Repeat("a+", 20000) + "a", "broken.lua:2: expression too complex (more than 1000 levels)"},
		{"return " + strings.Repeat("1+", 20000) + "1", "expression too complex (more than 1000 levels)"},
		{"local a = 1\nreturn " + strings.Repeat("a and ", 20000) + "a", "expression too complex"},
		{"local f\nreturn f" + strings.Repeat("()", 20000), "expression too complex"},
		{"local t\nreturn t" + strings.Repeat(".t", 20000), "expression too complex"},
	} {
		_, err := Compile("broken.lua", []byte(c.src))
		if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: got %v, want ErrCompile with %q", c.src, err, c.want)
		}
	}
	if _, err := LoadFile("testdata/no-such.lua"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadFile of a missing file: %v", err)
	}
}

func TestRunErrorsNameTheLine(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{"local t = nil\nprint(t.x)", "err.lua:2: attempt to index a non-table object(nil) with key 'x'"},
		{"local function f()\n  error('deep')\nend\nf()", "err.lua:2: deep\nstack traceback:\n\terr.lua:2: in function 'f'\n\terr.lua:4: in main chunk"},
		{"error('no position', 0)", "no position\nstack traceback:\n\terr.lua:1: in main chunk"},
		{"error({code = 1})", "table: 0x"},
		{"local x = 1 + {}", "err.lua:1: cannot perform add operation between number and table"},
		{"local f = coroutine.wrap(function() string.gsub('ab', '%w', function(c) coroutine.yield(c) end) end)\nf()",
			"err.lua:1: attempt to yield across a call from Go (pcall, a metamethod, a sort comparator, a string.gsub replacement"},
	} {
		_, err := run(t, w.cfg, "err.lua", c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want ErrScript with %q", c.src, err, c.want)
		}
	}
}

func TestCancelledRunSaysInterrupted(t *testing.T) {
	w := newWorld(t)
	s, err := Compile("loop.lua", []byte("while true do end"))
	if err != nil {
		t.Fatal(err)
	}
	r := New(w.cfg)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = r.Run(ctx, s, w.in)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "loop.lua:1: interrupted") {
		t.Errorf("got %v, want an interruption by the caller, not a script timeout", err)
	}
}
