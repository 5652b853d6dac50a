//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkOneShotRatio runs procwalk's one-shot commands as processes of
// their own against the raw loop run the same way (procwalk/testdata/rawloop:
// list /proc, read every stat and statm, parse nothing, exit), interleaved
// in every iteration, and reports each command's CPU (user + system of the
// whole process) over the loop's: x-raw. A one-shot command pays for
// starting a Go process and its first scan, and so does the loop. Run it on
// a host of about 2,500 processes, e.g.
//
//	/work/shared/load/tmux-load start -s 100 -p 18 -m 1 -c 0 -L bench
//	go test ./cmd/procwalk -run '^$' -bench OneShotRatio -benchtime 20x
//
// Issue 9's targets are the x-target figures. The raw-loop-with-* rows are
// the raw loop reading more, run the same way, to show each command's
// floor: with-status reads every status too (sessions' SWAP column and
// user sessions need it); with-kinds reads what the default session kinds
// need (interpreters' command lines, every cgroup.procs of the walked
// hierarchies, one tmux list-panes per server), the floor of telegraf exec;
// with-kinds-status both, the floor of sessions.
func BenchmarkOneShotRatio(b *testing.B) {
	bin := buildProcwalk(b)
	raw := filepath.Join(b.TempDir(), "rawloop")
	build := exec.Command("go", "build", "-o", raw, "./procwalk/testdata/rawloop")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the raw loop: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name   string
		bin    string // procwalk's when ""
		args   []string
		target float64
	}{
		{"raw-loop-with-status", raw, []string{"status"}, 0},
		{"raw-loop-with-kinds", raw, []string{"kinds"}, 0},
		{"raw-loop-with-kinds-status", raw, []string{"kinds", "status"}, 0},
		{"telegraf-exec-default", "", []string{"telegraf"}, 1.2},
		{"sessions-no-rates", "", []string{"sessions", "--no-rates"}, 1.3},
		{"ps-pid-ppid-rss-comm", "", []string{"ps", "--no-rates", "--columns", "pid,ppid,rss,comm"}, 1.15},
	} {
		cmd := c.bin
		if cmd == "" {
			cmd = bin
		}
		b.Run(c.name, func(b *testing.B) {
			var rawCPU, cmdCPU float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternate which goes first, so neither always finds the
				// other's caches warm.
				if i%2 == 0 {
					rawCPU += childCPU(b, raw)
					cmdCPU += childCPU(b, cmd, c.args...)
				} else {
					cmdCPU += childCPU(b, cmd, c.args...)
					rawCPU += childCPU(b, raw)
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(rawCPU*1000/n, "raw-cpu-ms/op")
			b.ReportMetric(cmdCPU*1000/n, "cmd-cpu-ms/op")
			b.ReportMetric(cmdCPU/rawCPU, "x-raw")
			if c.target > 0 {
				b.ReportMetric(c.target, "x-target")
			}
		})
	}
}

// childCPU runs name with args, output discarded, and returns the CPU
// seconds it used.
func childCPU(b *testing.B, name string, args ...string) float64 {
	cmd := exec.Command(name, args...)
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v", name, args, err)
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// BenchmarkScriptIsolation measures what running a script in a worker
// process costs, against --script-isolation off, interleaved in every
// iteration: for a one-shot run on the test fixture and on this host (a
// second process: its start, its own flags and script), and per tick of watch (the messages of a run; the
// worker is started once). CPU is the whole process tree's (the worker is
// reaped by procwalk, so its time is in procwalk's); wall time is the
// command's. The script reads every process once, as a rule does:
//
//	go test ./cmd/procwalk -run '^$' -bench ScriptIsolation -benchtime 10x
func BenchmarkScriptIsolation(b *testing.B) {
	bin := buildProcwalk(b)
	script := filepath.Join(b.TempDir(), "count.lua")
	if err := os.WriteFile(script, []byte(`local pw = require "procwalk"
pw.emit("count", {}, {n = #pw.processes()})`), 0o644); err != nil {
		b.Fatal(err)
	}
	const ticks = 20
	for _, c := range []struct {
		name  string
		args  []string
		ticks int
	}{
		{"run-fixture", []string{"run", "--no-rates", "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux", script}, 1},
		{"run", []string{"run", "--no-rates", "--tmux-socket", "/nonexistent/tmux", script}, 1},
		{"watch-per-tick", []string{"watch", "--interval", "1ms", "--count", strconv.Itoa(ticks), "--tmux-socket", "/nonexistent/tmux", script}, ticks},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu, wall [2]float64 // [0] worker, [1] off
			for i := 0; i < b.N; i++ {
				for k, iso := range []string{"worker", "off"} {
					if i%2 == 1 {
						k, iso = 1-k, []string{"worker", "off"}[1-k]
					}
					start := time.Now()
					cpu[k] += childCPU(b, bin, append([]string{c.args[0], "--script-isolation", iso}, c.args[1:]...)...)
					wall[k] += time.Since(start).Seconds()
				}
			}
			n := float64(b.N * c.ticks)
			b.ReportMetric(cpu[0]*1000/n, "worker-cpu-ms/run")
			b.ReportMetric(cpu[1]*1000/n, "off-cpu-ms/run")
			b.ReportMetric(wall[0]*1000/n, "worker-wall-ms/run")
			b.ReportMetric(wall[1]*1000/n, "off-wall-ms/run")
			b.ReportMetric(cpu[0]/cpu[1], "x-cpu")
		})
	}
}
