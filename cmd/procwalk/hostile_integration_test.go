//go:build linux

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// hostileScripts are the classes of issue 10, each a script that once
// crashed procwalk or grew it to GiBs, with the message that now stops it.
// Only the time bombs (message "ran past its 2s deadline") get a 2 s
// --script-timeout; the others get a minute, so that a loaded machine
// cannot turn their limit into a timeout.
func hostileScripts() []struct{ class, name, src, msg string } {
	return []struct{ class, name, src, msg string }{
		{"1", "resume the resumer", "local a, b\na = coroutine.wrap(function() b() end)\nb = coroutine.wrap(function() a() end)\na()", "cannot resume non-suspended coroutine"},
		{"1", "resume the resumer's resumer", "local co\nco = coroutine.create(function() local inner = coroutine.create(function() return coroutine.resume(co) end) print(coroutine.resume(inner)) end)\nprint(coroutine.resume(co))\nlocal w\nw = coroutine.wrap(function() local i = coroutine.wrap(function() w() end) i() end)\nw()", "cannot resume non-suspended coroutine"},
		{"2", "concat chain", "local s = string.rep('x', 4e6)\nlocal t = {}\nfor i = 1, 10 do t[i] = s" + strings.Repeat(" .. s", 39) + " end", ".. would make a string of"},
		{"2", "growing chain", "local s = 'x'\nfor i = 1, 20 do s = s .. s .. s .. s end", "over the budget of 64.0 MiB"},
		{"2", "many joins kept", "local s = string.rep('x', 4e6)\nlocal t = {}\nfor i = 1, 100 do t[i] = s .. i end", ".. would make a string of"},
		// Stopped by whichever limit it reaches first: the heap on a fast
		// machine, the deadline on a loaded one.
		{"3", "sparse index", "local t = {}\nfor i = 1, 1e9 do t[2^26 - i] = i end", "ran past its 2s deadline|over the budget of 64.0 MiB"},
		{"3", "table.insert far out", "local t = {}\nfor i = 1, 1e9 do table.insert(t, 2^26 - i, i) end", "ran past its 2s deadline|over the budget of 64.0 MiB"},
		{"3", "array growth", "local t = {}\nfor i = 1, 1e9 do t[i] = true end", "ran past its 2s deadline|a table would grow by a slice of"},
		{"3", "gap fills", "local t = {}\nfor i = 1, 1e9 do t[i * 16000] = true end", "ran past its 2s deadline|over the budget of 64.0 MiB"},
		{"4", "tail calls in pcall", "local function f() return f() end\npcall(f)", "ran past its 2s deadline"},
		{"4", "mutual tail calls in pcall", "local g\nlocal function f(n) return g(n + 1) end\ng = function(n) return f(n) end\nprint(pcall(f, 1))", "ran past its 2s deadline"},
		{"6", "nested constructors", "return " + strings.Repeat("{", 100000) + strings.Repeat("}", 100000), "chunk has too many syntax levels"},
		{"6", "call chain", "local f\nreturn f" + strings.Repeat("()", 100000), "expression too complex"},
		{"7", "huge error object", "local s = string.rep('x', 4e6)\nerror(setmetatable({}, {__tostring = function() return s .. s .. s .. s .. s end}))", "over the 4.0 MiB limit of an error message"},
		{"7", "error object returning a kept string", "local s = string.rep('x', 4e6)\nlocal big = s .. s .. s .. s .. s\nerror(setmetatable({}, {__tostring = function() return big end}))", "cut at 2.0 KiB)"},
		{"7", "huge error string", "local s = string.rep('x', 4e6)\nlocal big = s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s .. s\nfor i = 1, 10 do pcall(error, big) end", "error would copy a message of"},
		{"8", "forged action", "require('procwalk').emit('procwalk_action', {}, {pid = 1})", "measurement procwalk_action is reserved"},
		{"8", "comment measurement", "require('procwalk').emit('#x', {}, {v = 1})", "must not start with #"},
		{"9", "math.random(0)", "print(math.random(0))", "interval is empty"},
		{"9", "yield inside pcall", "local co = coroutine.wrap(function() table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end) end)\nco() co()", "attempt to yield across a call from Go"},
	}
}

// mentions reports whether text holds one of msg's |-separated messages.
func mentions(text, msg string) bool {
	return slices.ContainsFunc(strings.Split(msg, "|"), func(m string) bool { return strings.Contains(text, m) })
}

// scriptTimeout is the --script-timeout of a hostile script whose expected
// message is msg.
func scriptTimeout(msg string) string {
	if strings.Contains(msg, "deadline") {
		return "2s"
	}
	return "1m"
}

// workerOverhead is what a worker may hold on top of the heap budget: the
// Go runtime and binary (about 10 MiB), its snapshot, and garbage the GC
// has freed but not yet given back to the kernel.
const workerOverhead = 64 << 20

// workerPeakRSS returns the worker's peak RSS that a failed run's message
// gives, "(the worker's peak RSS: 12.3 MiB)", in bytes: its own, from
// wait4's rusage of it alone.
func workerPeakRSS(t *testing.T, stderr string) uint64 {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "the worker's peak RSS: ")
	rest, _, _ = strings.Cut(rest, ")")
	n, err := procwalk.ParseBytes(strings.ReplaceAll(rest, " ", ""))
	if !ok || err != nil {
		t.Fatalf("no worker peak RSS in %.2000s", stderr)
	}
	return n
}

// Each hostile script, run by the real binary with --script-memory 64MiB,
// ends with its limit's message, in its worker: the worker's own peak RSS
// stays under the budget plus a fixed overhead. The time to
// stop is logged: for the time bombs, from start to exit, which holds the
// worker's start and its scan besides the 2 s deadline; it is asserted
// only against bounds no loaded machine reaches.
func TestIntegrationHostileScriptsBounded(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, c := range hostileScripts() {
		t.Run("class"+c.class+"/"+c.name, func(t *testing.T) {
			path := writeScript(t, "hostile.lua", c.src)
			cmd := exec.Command(bin, "run", "--script-timeout", scriptTimeout(c.msg), "--no-rates", "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux",
				"--script-memory", "64MiB", path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if err == nil || !mentions(stderr.String(), c.msg) {
				t.Fatalf("exit %v, stderr:\n%.2000s\nwant %q", err, stderr.String(), c.msg)
			}
			if !strings.Contains(stderr.String(), "hostile.lua:") {
				t.Errorf("no file:line in %.500s", stderr.String())
			}
			// A compile error is refused by the parent, before any worker:
			// then the figure is wait4's of procwalk, an upper bound (it keeps
			// the peak of the test binary procwalk was forked from, too).
			peak, whose := uint64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)<<10, "procwalk's (at most)"
			if c.class != "6" {
				peak, whose = workerPeakRSS(t, stderr.String()), "the worker's"
			}
			t.Logf("class %s %s: %s peak RSS %.1f MiB, stopped after %v", c.class, c.name, whose, float64(peak)/(1<<20), took.Round(time.Millisecond))
			if peak > 64<<20+workerOverhead {
				t.Errorf("peak RSS %d MiB, over the 64 MiB budget + %d MiB", peak>>20, workerOverhead>>20)
			}
			if took > 2*time.Minute {
				t.Errorf("took %v to stop", took)
			}
		})
	}
}

// telegraf --execd gathers again after each hostile run: the failing run is
// one W! line, and the batch (the procwalk line) is still written.
func TestIntegrationExecdSurvivesHostileScripts(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, c := range hostileScripts() {
		if c.class == "6" {
			continue // refused before the first gather, exit 2: TestCompileErrors
		}
		t.Run("class"+c.class+"/"+c.name, func(t *testing.T) {
			path := writeScript(t, "hostile.lua", c.src)
			cmd := exec.Command(bin, "telegraf", "--execd", "--script-timeout", scriptTimeout(c.msg), "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux",
				"--session-kinds", "user", "--signal", "none", "--script-memory", "64MiB", "--script", path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			// A hung procwalk ends the reads below instead of the test run.
			hung := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
			defer hung.Stop()
			lines := bufio.NewScanner(stdout)
			lines.Buffer(nil, 1<<20)
			for gather := 1; gather <= 3; gather++ {
				io.WriteString(stdin, "\n")
				for {
					if !lines.Scan() {
						t.Fatalf("gather %d: stdout ended; stderr:\n%.2000s", gather, stderr.String())
					}
					if strings.HasPrefix(lines.Text(), "procwalk,") {
						break // the batch's last line
					}
				}
			}
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit %v", err)
			}
			if n := strings.Count(stderr.String(), "W! "); n < 3 || !mentions(stderr.String(), c.msg) {
				t.Errorf("%d W! lines, want one a gather with %q:\n%.3000s", n, c.msg, stderr.String())
			}
		})
	}
}

// watch drops a state that keeps too much from tick to tick, says so, and
// goes on with a fresh one.
func TestIntegrationWatchDropsRetainedState(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	path := writeScript(t, "keeper.lua", `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print("tick", pw.state.n)
pw.state[pw.state.n] = string.rep("x", 4e6) .. string.rep("y", 4e6)`)
	cmd := exec.Command(bin, "watch", "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux",
		"--interval", "100ms", "--count", "8", "--script-retained", "20MiB", path)
	cmd.Env = append(os.Environ()[:0:0], "PATH="+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	drop := strings.Index(s, "the Lua state keeps")
	if drop < 0 || !strings.Contains(s, "raise --script-retained") || !strings.Contains(s[drop:], "tick\t1\n") {
		t.Errorf("want a drop, then tick 1 again:\n%s", s)
	}
}
