//go:build linux

package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// holes_test.go: the hostile-script classes of issue 10, each closed in
// process with an error naming the limit and the script's line. A case is
// judged by the kind of error that stopped it, never by how long it took:
// CI is a loaded 2-core machine.

type holeCase struct {
	name, src string
	want      error // nil: the run must succeed
	msg       string
}

// runHoles runs each case as hole.lua, the source on line 2, under a 32 MiB
// heap budget and a deadline that only the time bombs (want ErrTimeout)
// get short.
func runHoles(t *testing.T, cases []holeCase) {
	t.Helper()
	w := newWorld(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := w.cfg
			cfg.Limits = Limits{Timeout: time.Minute, HeapBudgetBytes: 32 << 20}
			if c.want == ErrTimeout {
				cfg.Limits.Timeout = 200 * time.Millisecond
			}
			out, err := run(t, cfg, "hole.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
			if c.want == nil {
				if err != nil || !strings.Contains(out, c.msg) {
					t.Fatalf("got %v, printed %q; want success printing %q", err, out, c.msg)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v\nwant %v with %q", err, c.want, c.msg)
			}
			if !strings.Contains(err.Error(), "hole.lua:") {
				t.Errorf("the error names no line: %v", err)
			}
		})
	}
}

// Class 1: resuming a running or normal coroutine recursed until Go's
// stack overflowed (a fatal error).
func TestHoleResumeNonSuspended(t *testing.T) {
	runHoles(t, []holeCase{
		{"resume itself", `local co co = coroutine.create(function() print(coroutine.resume(co)) end) coroutine.resume(co)`, nil, "false\tcannot resume non-suspended coroutine"},
		{"resume the resumer", `local a, b
a = coroutine.create(function() coroutine.resume(b) end)
b = coroutine.create(function() print(coroutine.resume(a)) end)
coroutine.resume(a)`, nil, "false\tcannot resume non-suspended coroutine"},
		{"wrap calls itself", `local w w = coroutine.wrap(function() w() end) w()`, ErrScript, "hole.lua:2: cannot resume non-suspended coroutine"},
		{"wrap cycle of three", `local a, b, c
a = coroutine.wrap(function() b() end)
b = coroutine.wrap(function() c() end)
c = coroutine.wrap(function() a() end)
a()`, ErrScript, "hole.lua:5: cannot resume non-suspended coroutine"},
		{"resume inside pcall", `local co co = coroutine.create(function() print(pcall(coroutine.resume, co)) end) coroutine.resume(co)`, nil, "true\tfalse\tcannot resume non-suspended coroutine"},
		{"suspended ones still resume", `local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
print(coroutine.resume(co, 1)) print(coroutine.resume(co, 5)) print(coroutine.status(co))`, nil, "true\t2\ntrue\t10\ndead"},
	})
}

// Class 2: one .. of many big operands allocated past the heap budget in
// one uninterruptible step.
func TestHoleConcatBudget(t *testing.T) {
	chain := "s" + strings.Repeat(" .. s", 39)
	runHoles(t, []holeCase{
		{"40 operands of 4 MiB", `local s = string.rep("x", 4e6) local r = ` + chain, ErrMemory, ".. would make a string of 152.6 MiB"},
		{"inside pcall", `local s = string.rep("x", 4e6) print(pcall(function() return ` + chain + ` end)) local t = {} for i = 1, 10 do t[i] = i end`, ErrMemory, "over the budget of 32.0 MiB"},
		{"inside a coroutine", `local s = string.rep("x", 4e6) coroutine.wrap(function() local r = ` + chain + ` end)()`, ErrMemory, ".. would make a string of"},
		{"growing chains", `local s = "x" for i = 1, 20 do s = s .. s .. s .. s end`, ErrMemory, "over the budget of 32.0 MiB"},
		{"small joins are unchanged", `local s = "a" .. 1 .. "b" .. 2.5 local t = setmetatable({}, {__concat = function(a, b) return "T" end}) print(s, t .. "x", "x" .. t, #(string.rep("y", 1e6) .. string.rep("z", 1e6)))`, nil, "a1b2.5\tT\tT\t2000000"},
		{"a join within the budget", `local s = string.rep("x", 4e6) print(#(s .. s .. s))`, nil, "12000000"},
	})
}

// Class 3: t[k] = v far past the end of a table's array part filled every
// slot up to k (gigabytes); the patched VM keeps such keys in the hash part.
func TestHoleSparseArray(t *testing.T) {
	runHoles(t, []holeCase{
		{"near the array limit", `local t = {} t[2^26 - 1] = 1 print(t[2^26 - 1], #t)`, nil, "1\t0"},
		{"a pid as key", `local t = {} t[4194303] = "p" t[4194302] = "q" print(t[4194303], t[4194302], rawget(t, 4194303))`, nil, "p\tq\tp"},
		{"table.insert far out", `local t = {1, 2} table.insert(t, 6e7, "x") print(t[6e7], #t)`, nil, "x\t2"},
		{"rawset far out", `local t = {} rawset(t, 3e7, true) print(rawget(t, 3e7))`, nil, "true"},
		{"many far keys", `local t = {} for i = 1, 1000 do t[i * 50000] = i end local n = 0 for k, v in pairs(t) do n = n + 1 end print(n, t[50000000])`, nil, "1000\t1000"},
		{"the array reaches hash keys", `local t = {} t[20000] = "far" for i = 1, 19999 do t[i] = i end t[20001] = "next"
local n = 0 for k in pairs(t) do n = n + 1 end print(#t, t[20000], n, select("#", unpack(t, 19999, 20001)))`, nil, "20001\tfar\t20001\t3"},
		{"a small gap is filled", `local t = {1} t[100] = 100 print(#t, t[100])`, nil, "100\t100"},
		{"ipairs and # after the array reaches them", `local t = {} t[30000] = "b" t[30001] = "c" for i = 1, 29999 do t[#t + 1] = "a" end
local n = 0 for _ in ipairs(t) do n = n + 1 end print(#t, n, t[30001])`, nil, "30001\t30001\tc"},
		{"removing a far key", `local t = {} t[1e6] = 1 t[1e6] = nil local n = 0 for _ in pairs(t) do n = n + 1 end print(n, t[1e6])`, nil, "0\tnil"},
	})
}

// The compile limits leave room for any real script: 150 levels of
// brackets and blocks, and 500-term expressions, compile and run.
func TestCompileLimitsLeaveRoom(t *testing.T) {
	w := newWorld(t)
	src := "local a = 1\nlocal x = " + strings.Repeat("(", 150) + "a" + strings.Repeat(")", 150) + "\n" +
		strings.Repeat("do ", 150) + "x = x + 1" + strings.Repeat(" end", 150) + "\n" +
		"local t = " + strings.Repeat("{", 150) + strings.Repeat("}", 150) + "\n" +
		"local y = " + strings.Repeat("a + ", 500) + "a\n" +
		"local s = " + strings.Repeat("'x' .. ", 150) + "'x'\n" +
		"print(x, y, #s)"
	if out, err := run(t, w.cfg, "room.lua", src, w.in); err != nil || out != "2\t501\t151\n" {
		t.Errorf("got %q, %v", out, err)
	}
}

// Class 4: an error inside pcall at the end of a loop of tail calls built a
// traceback line per call: minutes and GiBs.
func TestHoleTailCallTraceback(t *testing.T) {
	runHoles(t, []holeCase{
		{"endless tail calls in pcall", `local function f() return f() end pcall(f)`, ErrTimeout, "ran past its 200ms deadline"},
		{"in xpcall", `local function f() return f() end xpcall(f, function(m) return m end)`, ErrTimeout, "deadline"},
		{"in a coroutine", `local function f() return f() end coroutine.wrap(function() pcall(f) end)()`, ErrTimeout, "deadline"},
		{"a million tail calls then an error", `local n = 0 local function f() n = n + 1 if n > 1e6 then error("end") end return f() end print(pcall(f))`, nil, "false\thole.lua:2: end"},
	})
}

// Class 3 (the patched VM's GrowCheck): Go's append makes a table's new
// array part (or list of keys) beside the old one in one step, a quarter
// bigger; the size is checked against the heap budget before. Only
// booleans go in, so the slices are all that grows and the check, not the
// watchdog, is what stops each run.
func TestHoleTableGrowth(t *testing.T) {
	const msg = "a table would grow by a slice of"
	runHoles(t, []holeCase{
		{"t[i] = true", `local t = {} for i = 1, 1e9 do t[i] = true end`, ErrMemory, msg},
		{"t[#t + 1] in pcall", `local t = {} print(pcall(function() for i = 1, 1e9 do t[#t + 1] = true end end))`, ErrMemory, msg},
		{"table.insert at the end", `local t = {} for i = 1, 1e9 do table.insert(t, true) end`, ErrMemory, msg},
		{"table.insert before the last", `local t = {true} for i = 1, 1e9 do table.insert(t, #t, true) end`, ErrMemory, msg},
		{"rawset", `local t = {} for i = 1, 1e9 do rawset(t, i, true) end`, ErrMemory, msg},
		{"gap fills", `local t = {} for i = 1, 1e9 do t[i * 16000] = true end`, ErrMemory, "over the budget of 32.0 MiB"},
		{"hash keys", `local t = {} for i = 1, 1e9 do t[-i] = true end`, ErrMemory, "over the budget of 32.0 MiB"},
		{"a big table within the budget", `local t = {} for i = 1, 5e5 do t[i] = true end for i = 1, 5e4 do t[-i] = true end print(#t)`, nil, "500000"},
	})
}

// Class 7: an error message is capped as print is; an error object's
// __tostring may not make more than that, checked before it allocates, and
// error() checks the copy of its message it makes.
func TestHoleErrorTextCapped(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		src  string
		want error
		msg  string
	}{
		{`error(setmetatable({}, {__tostring = function() return string.rep("x", 4e6) .. string.rep("y", 4e6) end}))`, ErrLimit,
			"(an error object whose __tostring failed: big.lua:2: an error object's __tostring would make a string of 7.6 MiB, over the 4.0 MiB limit of an error message)"},
		{`error(setmetatable({}, {__tostring = function() local s = "" for i = 1, 10 do s = s .. string.rep("x", 1e6) end return s end}))`, ErrLimit, "over the 4.0 MiB limit of an error message"},
		{`local big = string.rep("x", 4e6) .. string.rep("y", 4e6) error(setmetatable({}, {__tostring = function() return big end}))`, ErrScript, "(error message of 7.6 MiB cut at 2.0 KiB)"},
		{`error(setmetatable({}, {__tostring = function() error("no text") end}))`, ErrScript, "(an error object whose __tostring failed: big.lua:2: no text)"},
		{`error(string.rep("x", 4e6) .. string.rep("y", 4e6))`, ErrScript, "(error message of 7.6 MiB cut at 2.0 KiB)"},
		{`local big = string.rep("x", 4e6) .. string.rep("y", 4e6) local t = setmetatable({}, {__index = function() error(big) end}) local v = t.x`, ErrScript, "(error message of 7.6 MiB cut at 2.0 KiB)"},
		{`local s = string.rep("x", 4e6) local big = s .. s .. s .. s .. s .. s error(big)`, ErrMemory, "error would copy a message of 22.9 MiB with the Go heap already"},
	} {
		cfg := w.cfg
		cfg.Limits = Limits{MaxStringBytes: 4 << 20, HeapBudgetBytes: 40 << 20}
		_, err := run(t, cfg, "big.lua", "\n"+c.src, w.in)
		if !errors.Is(err, c.want) || len(err.Error()) > 4<<20+1024 || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "big.lua:2:") {
			t.Errorf("%s: got an error of %d bytes: %.300s\nwant %v with %q", c.src, len(err.Error()), err, c.want, c.msg)
		}
	}
}

// string.upper, lower and reverse make up to three times their input at
// once: checked against the heap budget before.
func TestHoleStringCopies(t *testing.T) {
	runHoles(t, []holeCase{
		{"upper", `local s = string.rep("x", 4e6) s = s .. s .. s .. s local u = s:upper()`, ErrMemory, "string.upper would make strings of 45.8 MiB"},
		{"reverse", `local s = string.rep("x", 4e6) s = s .. s .. s .. s local u = string.reverse(s)`, ErrMemory, "string.reverse would make strings of"},
		{"small ones are unchanged", `print(("abc"):upper(), ("ABC"):lower(), ("abc"):reverse(), #string.rep("x", 4e6):upper())`, nil, "ABC\tabc\tcba\t4000000"},
	})
}

// Class 9: Go panics inside gopher-lua were recovered without a position.
func TestHoleGoPanics(t *testing.T) {
	runHoles(t, []holeCase{
		{"math.random(0)", `print(math.random(0))`, ErrScript, "hole.lua:2: bad argument #1 to random (interval is empty)"},
		{"math.random(2, 1)", `print(math.random(2, 1))`, ErrScript, "bad argument #2 to random (interval is empty)"},
		{"math.random(nan)", `print(math.random(0/0))`, ErrScript, "interval is empty"},
		{"math.random overflow", `print(math.random(-2^62, 2^62))`, ErrScript, "interval is too large"},
		{"math.random in range", `math.randomseed(42) for i = 1, 1000 do local a, b, c = math.random(3), math.random(-2, 2), math.random() assert(a >= 1 and a <= 3 and a % 1 == 0 and b >= -2 and b <= 2 and c >= 0 and c < 1) end print("ok")`, nil, "ok"},
		{"yield inside pcall", `local co = coroutine.create(function() print(pcall(coroutine.yield, 1)) end) coroutine.resume(co) print(coroutine.resume(co))`, nil, "false\thole.lua:2: attempt to yield across a call from Go"},
		{"yield in a sort comparator", `local co = coroutine.wrap(function() table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end) end) co() co()`, ErrScript, "hole.lua:2: attempt to yield across a call from Go"},
		{"yield in __index", `local t = setmetatable({}, {__index = function() coroutine.yield() end}) local co = coroutine.wrap(function() return t.x end) co() co()`, ErrScript, "hole.lua:2: attempt to yield across a call from Go"},
		{"yield in a gsub replacement", `local co = coroutine.wrap(function() string.gsub("ab", "%w", function(c) coroutine.yield(c) end) end) co()`, ErrScript, "attempt to yield across a call from Go"},
		{"yield in a filter", `local co = coroutine.wrap(function() pw.processes(function(p) coroutine.yield() return true end) end) co()`, ErrScript, "attempt to yield across a call from Go"},
		{"plain yields still work", `local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) print(co(), co(), co())`, nil, "1\t2\t3"},
	})
}

// A Go panic inside a Go function (here a nil dereference) surfaces with
// the line that called it.
func TestHoleGoPanicNamesTheLine(t *testing.T) {
	w := newWorld(t)
	s, err := Compile("panic.lua", []byte("local x = 1\nif boom then boom() end"))
	if err != nil {
		t.Fatal(err)
	}
	r := New(w.cfg)
	defer r.Close()
	if err := r.Run(t.Context(), s, w.in); err != nil { // builds the state
		t.Fatal(err)
	}
	r.L.SetGlobal("boom", r.L.NewFunction(func(L *lua.LState) int {
		var p *lua.LTable
		return p.Len() // a nil dereference
	}))
	err = r.Run(t.Context(), s, w.in)
	if !errors.Is(err, ErrLimit) || !strings.HasPrefix(strings.TrimPrefix(err.Error(), ErrLimit.Error()+": "), "panic.lua:2: a Go panic in the Lua VM (runtime error: invalid memory address") {
		t.Errorf("got %v", err)
	}
	if r.L != nil {
		t.Error("the state was kept after a Go panic")
	}
}

// Class 5: what a watch or telegraf state keeps from run to run is bounded.
func TestHoleRetainedAcrossRuns(t *testing.T) {
	w := newWorld(t)
	w.cfg.Mode = "watch"
	w.cfg.Limits = Limits{RetainedBytes: 24 << 20}
	const keeper = `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print(pw.state.n)
if pw.state.n <= 4 then pw.state[pw.state.n] = string.rep("x", 4e6) .. string.rep("y", 4e6) end`
	prints, errs := ticks(t, w, keeper, 6)
	// Each of ticks 1 to 4 keeps 8 MB more: by tick 4 (32 MB) the state is
	// past 24 MiB, dropped, and the next tick starts over.
	var dropped int
	for i, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "tick.lua: the Lua state keeps") || !strings.Contains(err.Error(), "over the 24.0 MiB a state may keep from run to run: it was dropped") {
			t.Fatalf("tick %d: %v", i+1, err)
		}
		dropped = i
		break
	}
	if dropped == 0 || prints[dropped+1] != "1" {
		t.Errorf("prints %q, errors %v: want a drop, then a fresh state", prints, errs)
	}
	// A dropped state is freed: it does not count in the next state's
	// base, so a script that keeps 8 MB a tick is dropped every fourth
	// tick, not later and later (a dropped state the module still pointed
	// to let the next one keep as much again).
	forever := `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
pw.state[pw.state.n] = string.rep("x", 4e6) .. pw.state.n .. string.rep("y", 4e6)`
	_, errs = ticks(t, w, forever, 12)
	var drops []int
	for i, err := range errs {
		if err != nil {
			drops = append(drops, i+1)
		}
	}
	if len(drops) != 3 || drops[1]-drops[0] != drops[0] || drops[2]-drops[1] != drops[0] {
		t.Errorf("dropped at ticks %v, want three drops evenly spaced", drops)
	}
	// In run mode nothing lasts, nothing is checked: the same script,
	// which watch mode dropped above, runs every tick without an error.
	w.cfg.Mode = "run"
	_, errs = ticks(t, w, keeper, 6)
	for i, err := range errs {
		if err != nil {
			t.Errorf("run mode, tick %d: %v", i+1, err)
		}
	}
}

// A Go panic inside the VM stops the run at the script's line and drops
// the state, whether pcall caught it, a coroutine's resume did, or it
// escaped the protected call; unpack's count no longer overflows.
func TestGoPanicsStopTheRun(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		// Depending on how the value stack grew, pcall catches a registry
		// overflow, or the VM panics with an index out of range [-1] that
		// escaped pcall without a line.
		{"vararg tail call in pcall", "local function g(...) return g(1,2,3,4,5,6,7,8,...) end\nprint(pcall(g))\nerror('registry overflow, caught')", "panic.lua:2: a Go panic in the Lua VM (runtime error: index out of range [-1])|panic.lua:4: registry overflow, caught"},
		{"wrap of yield, twice", "local f = coroutine.wrap(coroutine.yield)\nprint(pcall(f))\nprint(pcall(f))", "panic.lua:4: a Go panic in the Lua VM (runtime error: invalid memory address or nil pointer dereference)"},
		{"unpack's count", "print(unpack({}, -1e300, 1))", "panic.lua:2: unpack: 1e+300 results are too many (at most 8000)"},
		{"a table of 25,550 items works", "local t = {" + strings.Repeat("7,", 25550) + "}\nassert(#t == 25550 and t[25550] == 7 and t[0] == nil)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.cfg.Mode = "watch" // a state that lasts: is it dropped?
			// What ends these runs is the panic or the registry's bound, not
			// the clock: the default 2 s deadline was hit once at load 18.
			w.cfg.Limits.Timeout = time.Minute
			s, err := Compile("panic.lua", []byte("local pw = require 'procwalk' pw.state.kept = true\n"+c.src))
			if err != nil {
				t.Fatal(err)
			}
			r := New(w.cfg)
			defer r.Close()
			err = r.Run(t.Context(), s, w.in)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !mentionsAny(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
			if errors.Is(err, ErrLimit) && r.L != nil {
				t.Error("the state was kept")
			}
		})
	}
}

// mentionsAny reports whether text holds one of want's |-separated parts.
func mentionsAny(text, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// Coroutines kept from run to run may resume each other inside each other
// without end (each run adds one to the chain): each such resume recursed
// in Go until the goroutine stack limit, a fatal error. At most
// MaxCoroutines nest; past it the run fails and the state is dropped.
func TestNestedResumesAcrossRuns(t *testing.T) {
	w := newWorld(t)
	w.cfg.Mode = "watch"
	s, err := Compile("chain.lua", []byte(`local pw = require "procwalk"
local prev = pw.state.top
pw.state.n = (pw.state.n or 0) + 1
pw.state.top = coroutine.wrap(function() while true do if prev then prev() end coroutine.yield() end end)
pw.state.top()`))
	if err != nil {
		t.Fatal(err)
	}
	r := New(w.cfg)
	defer r.Close()
	for run := 1; run <= 70; run++ {
		err := r.Run(t.Context(), s, w.in)
		switch {
		case run <= 64 && err != nil:
			t.Fatalf("run %d: %v", run, err)
		case run == 65:
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "more than 64 coroutines resumed inside each other") {
				t.Fatalf("run 65: %v, want the nesting limit", err)
			}
			return
		}
	}
}

// The helpers' Go calls, which no deadline interrupts, are bounded in
// procwalk's own process too: pw.printable checks what it would make.
func TestHelpersBounded(t *testing.T) {
	w := newWorld(t)
	_, err := run(t, w.cfg, "helpers.lua", `local pw = require "procwalk" local s = pw.printable(("\255"):rep(2^21))`, w.in)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "procwalk.printable: a result of 8.0 MiB is over the 4.0 MiB string limit") {
		t.Errorf("printable of 2 MiB of invalid bytes: %v", err)
	}
	out, err := run(t, w.cfg, "helpers.lua", `local pw = require "procwalk" print(#pw.printable(("\255"):rep(2^20)), #pw.wrap(("w"):rep(2^21), 80))`, w.in)
	// The 2 MiB word stays whole: pw.wrap never cuts a word.
	if err != nil || out != "4194304\t2097152\n" {
		t.Errorf("got %q, %v", out, err)
	}
}
