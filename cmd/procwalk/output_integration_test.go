//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// floods are scripts that write without end: each run is stopped by an
// output budget before it sends anything more.
func floods() []struct{ name, src, msg string } {
	return []struct{ name, src, msg string }{
		{"emit without end", `local pw = require "procwalk" local i = 0 while true do i = i + 1 pw.emit("flood", {}, {n = i}) end`, "emitted more than its budget of 20000 metrics"},
		{"emit 1 MB lines", `local pw = require "procwalk" local s = ("x"):rep(1e6) for i = 1, 250 do pw.emit("flood", {}, {s = s, n = i}) end`, "emitted more than its budget of 16.0 MiB of metrics"},
		{"print in a loop", `local s = ("x"):rep(1e6) while true do print(s) end`, "printed and logged more than its budget of 16.0 MiB of text"},
		{"log in a loop", `local pw = require "procwalk" local s = ("x"):rep(1e5) while true do pw.log(s) end`, "printed and logged more than its budget of 16.0 MiB of text"},
	}
}

// vmHWM returns the peak resident memory of pid, from its status.
func vmHWM(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM for pid %d", pid)
	return 0
}

// parentBound is the most procwalk itself may hold, whatever a script
// writes: 64 MiB plus one run's output budget (16 MiB of metrics, which
// it keeps until the run ends; text is streamed).
const parentBound = 64<<20 + 16<<20

// Scripts that emit, print or log without end, under watch and telegraf
// --execd, in a worker and in-process: each run stops at its output budget
// (the message names it), the next run goes on, and procwalk's own peak
// RSS stays under parentBound, the worker's under the heap budget and its
// overhead. Before the budgets the parent of execd peaked at 1.38 GiB and
// watch's at 916 MiB. The figures are logged.
func TestIntegrationOutputFloodsBounded(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	common := []string{"--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux", "--script-timeout", "1m", "--script-memory", "64MiB"}
	for _, f := range floods() {
		for _, mode := range []string{"watch", "execd", "watch-in-process", "execd-in-process"} {
			t.Run(f.name+"/"+mode, func(t *testing.T) {
				path := writeScript(t, "flood.lua", f.src)
				args := append([]string{"watch", "--interval", "100ms"}, common...)
				if strings.HasPrefix(mode, "execd") {
					args = append([]string{"telegraf", "--execd", "--session-kinds", "user", "--skip-self-metrics"}, common...)
					args = append(args, "--script", path)
				} else {
					args = append(args, path)
				}
				inWorker := !strings.HasSuffix(mode, "in-process")
				if !inWorker {
					args = append(args, "--script-isolation", "off")
				}
				cmd := exec.Command(bin, args...)
				stdin, _ := cmd.StdinPipe()
				stdoutR, _ := cmd.StdoutPipe()
				stderrR, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				hung := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
				defer hung.Stop()
				written := make(chan int64, 1)
				go func() { n, _ := io.Copy(io.Discard, stdoutR); written <- n }()
				stderr := readLines(stderrR)
				start := time.Now()
				for run := 1; run <= 3; run++ {
					if mode[0] == 'e' {
						io.WriteString(stdin, "\n")
					}
					stderr.waitFor(t, f.msg)
				}
				took := time.Since(start) / 3
				parent := vmHWM(t, cmd.Process.Pid)
				var worker uint64
				if inWorker {
					worker = vmHWM(t, workerOf(t, cmd.Process.Pid))
				}
				if mode[0] == 'e' {
					stdin.Close()
				} else {
					cmd.Process.Signal(syscall.SIGTERM)
				}
				go func() {
					for range stderr.ch { // drain what is left
					}
				}()
				if err := cmd.Wait(); err != nil {
					t.Errorf("exit %v", err)
				}
				out := <-written
				t.Logf("%s, %s: procwalk's peak RSS %.1f MiB, the worker's %.1f MiB; a run stopped after %v; %.1f MiB on stdout",
					f.name, mode, float64(parent)/(1<<20), float64(worker)/(1<<20), took.Round(time.Millisecond), float64(out)/(1<<20))
				if parent > parentBound {
					t.Errorf("procwalk's peak RSS %.1f MiB, over %d MiB", float64(parent)/(1<<20), parentBound>>20)
				}
				if worker > 64<<20+workerOverhead {
					t.Errorf("the worker's peak RSS %.1f MiB, over %d MiB", float64(worker)/(1<<20), (64<<20+workerOverhead)>>20)
				}
			})
		}
	}
}
