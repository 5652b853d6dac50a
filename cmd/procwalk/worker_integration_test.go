//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lines collects the lines of r as they come, for a test to wait for.
type lines struct {
	ch  chan string
	all strings.Builder
}

func readLines(r io.Reader) *lines {
	l := &lines{ch: make(chan string, 1024)}
	go func() {
		defer close(l.ch)
		s := bufio.NewScanner(r)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			l.ch <- s.Text()
		}
	}()
	return l
}

// waitFor returns the first line holding want; it fails the test when the
// stream ends or two minutes pass (a bound for a hung procwalk only).
func (l *lines) waitFor(t *testing.T, want string) string {
	t.Helper()
	limit := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-l.ch:
			if !ok {
				t.Fatalf("ended without %q; got:\n%.4000s", want, l.all.String())
			}
			l.all.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return line
			}
		case <-limit:
			t.Fatalf("no %q after 2 minutes; got:\n%.4000s", want, l.all.String())
		}
	}
}

// workerOf returns the pid of procwalk's script worker: its only child
// (each thread lists the children it started).
func workerOf(t *testing.T, pid int) int {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var f []string
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			t.Skipf("cannot find the worker: %v", err)
		}
		f = append(f, strings.Fields(string(b))...)
	}
	if len(f) != 1 {
		t.Fatalf("procwalk %d has children %q, want its one worker", pid, f)
	}
	w, _ := strconv.Atoi(f[0])
	return w
}

// limitOf returns a line of /proc/PID/limits, such as "Max cpu time".
func limitOf(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name) {
			return l
		}
	}
	t.Fatalf("no %q in\n%s", name, b)
	return ""
}

// counter is a script that counts its runs in procwalk.state, prints the
// count, and on its first run loops until it is stopped.
const counter = `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print("run " .. pw.state.n)
if pw.state.n == 1 then while true do end end`

// watch and telegraf --execd go on gathering after their worker dies:
// SIGKILLed by the test, or stopped (SIGSTOP) in the middle of a run, so
// that only the parent's deadline can end it. Each death is one line that
// says the state was lost; the next run starts a new worker with an empty
// state (run 1 again) and a gather before it. The worker the test signals
// is the child of the procwalk the test started.
func TestIntegrationWorkerDeathIsSurvived(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	path := writeScript(t, "counter.lua", counter)
	common := []string{"--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux", "--script-timeout", "5s"}
	for _, mode := range []string{"watch", "execd"} {
		for _, death := range []string{"SIGKILL", "SIGSTOP"} {
			t.Run(mode+"/"+death, func(t *testing.T) {
				var cmd *exec.Cmd
				if mode == "watch" {
					cmd = exec.Command(bin, append(append([]string{"watch"}, common...), "--interval", "200ms", path)...)
				} else {
					cmd = exec.Command(bin, append(append([]string{"telegraf", "--execd", "--session-kinds", "user"}, common...), "--script", path)...)
				}
				stdin, _ := cmd.StdinPipe()
				stdoutR, _ := cmd.StdoutPipe()
				stderrR, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				stdout, stderr := readLines(stdoutR), readLines(stderrR)
				// Where the script's print goes: watch's stdout, an I! line
				// under execd, which gathers once per stdin line.
				printed, gather := stdout, func() {}
				if mode == "execd" {
					printed, gather = stderr, func() { io.WriteString(stdin, "\n") }
				}
				gather()
				printed.waitFor(t, "run 1")
				worker := workerOf(t, cmd.Process.Pid)
				// It carries procwalk's name, not /proc/self/exe's "exe".
				comm, _ := os.ReadFile("/proc/" + strconv.Itoa(worker) + "/comm")
				argv, _ := os.ReadFile("/proc/" + strconv.Itoa(worker) + "/cmdline")
				if strings.TrimSpace(string(comm)) != workerName || !strings.HasPrefix(string(argv), workerName+"\x00"+workerArg+"\x00") {
					t.Errorf("worker comm %q, argv %q; want %s, %s %s", comm, argv, workerName, workerName, workerArg)
				}
				// In the run: the kernel limits hold.
				if l := limitOf(t, worker, "Max address space"); strings.Contains(l, "unlimited") {
					t.Errorf("no RLIMIT_AS on the worker: %s", l)
				}
				if l := strings.Fields(limitOf(t, worker, "Max cpu time")); l[3] == "unlimited" {
					t.Errorf("no soft RLIMIT_CPU on the worker in a run: %v", l)
				}
				sig := syscall.SIGKILL
				want := "was killed by SIGKILL"
				if death == "SIGSTOP" {
					sig, want = syscall.SIGSTOP, "ran past the script's 5s deadline by 1s and was killed"
				}
				// Through a pidfd opened while the pid is still found as
				// procwalk's one child: the signal reaches that worker only.
				wp, err := os.FindProcess(worker)
				if err != nil {
					t.Fatal(err)
				}
				defer wp.Release()
				if w := workerOf(t, cmd.Process.Pid); w != worker {
					t.Fatalf("the worker changed from %d to %d before the test signalled it", worker, w)
				}
				start := time.Now()
				if err := wp.Signal(sig); err != nil {
					t.Fatal(err)
				}
				line := stderr.waitFor(t, want)
				t.Logf("%s, %s: the parent said after %v: %s", mode, death, time.Since(start).Round(time.Millisecond), line)
				if !strings.Contains(line, "state was lost") || (mode == "execd" && !strings.HasPrefix(line, "W! ")) {
					t.Errorf("want one W! line (execd) saying the state was lost, got %q", line)
				}
				if mode == "execd" {
					stdout.waitFor(t, "procwalk,") // the batch of the gather the worker died in
				}
				gather()
				printed.waitFor(t, "run 1") // a new worker, an empty state
				if w := workerOf(t, cmd.Process.Pid); w == worker {
					t.Errorf("the worker is still %d", w)
				}
				if mode == "execd" {
					stdin.Close() // ends after this run, which its own deadline stops
				} else {
					cmd.Process.Signal(syscall.SIGTERM)
				}
				if err := cmd.Wait(); err != nil {
					t.Errorf("exit %v", err)
				}
			})
		}
	}
}

// watch runs every hostile script tick after tick: each tick fails with
// its limit's message and the next one runs (execd: the test beside
// TestIntegrationExecdSurvivesHostileScripts).
func TestIntegrationWatchSurvivesHostileScripts(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, c := range hostileScripts() {
		if c.class == "6" {
			continue // refused before the first tick, exit 2: TestCompileErrors
		}
		t.Run("class"+c.class+"/"+c.name, func(t *testing.T) {
			path := writeScript(t, "hostile.lua", c.src)
			cmd := exec.Command(bin, "watch", "--script-timeout", scriptTimeout(c.msg), "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux",
				"--interval", "100ms", "--count", "3", "--script-memory", "64MiB", path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("exit %v:\n%.3000s", err, out)
			}
			if n := strings.Count(string(out), "watch: tick "); n != 3 || !mentions(string(out), c.msg) {
				t.Errorf("%d failed ticks, want 3 with %q:\n%.3000s", n, c.msg, out)
			}
		})
	}
}
