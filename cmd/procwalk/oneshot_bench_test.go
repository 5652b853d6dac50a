//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkOneShotRatio runs procwalk's one-shot commands as processes of
// their own against the raw loop run the same way (procwalk/testdata/rawloop:
// list /proc, read every stat and statm, parse nothing, exit) and against
// the floor of their data (the raw loop reading what the command's data
// needs, the plainest way), interleaved in rotating order in every
// iteration, and reports each command's CPU (user + system of the whole
// process) over the loop's (x-raw) and over its floor's (x-floor). A
// one-shot command pays for starting a Go process and its first scan, and
// so do the loops. Run it on a host of about 2,500 processes, e.g.
//
//	/work/shared/load/tmux-load start -s 100 -p 18 -m 1 -c 0 -L bench
//	go test ./cmd/procwalk -run '^$' -bench OneShotRatio -benchtime 20x
//
// The floors: kinds reads what the default session kinds need
// (interpreters' command lines, every cgroup.procs of the walked
// hierarchies, one tmux list-panes per server), the floor of telegraf
// exec; sessions adds the owner of every /proc/PID (user sessions'
// effective uid), and every status where swap is in use (its SWAP
// column; none is read where no swap is, every VmSwap being 0). The version row
// is procwalk --version against an empty Go program
// (procwalk/testdata/emptyprog): x-raw there is over the empty program.
// Issue 21's targets are the x-target figures (x-raw for sessions and
// version, x-floor for telegraf exec).
func BenchmarkOneShotRatio(b *testing.B) {
	bin := buildProcwalk(b)
	raw := buildTestProgram(b, "rawloop")
	empty := buildTestProgram(b, "emptyprog")
	sessionsFloor := []string{"kinds", "owner"}
	if !noSwapInUse() {
		sessionsFloor = append(sessionsFloor, "status")
	}
	for _, c := range []struct {
		name   string
		args   []string
		ref    string   // the raw loop when ""
		floor  []string // the raw loop's arguments for the command's floor; none when nil
		target float64
	}{
		{"telegraf-exec-default", []string{"telegraf"}, "", []string{"kinds"}, 1.1},
		{"sessions-no-rates", []string{"sessions", "--no-rates"}, "", sessionsFloor, 1.3},
		{"ps-pid-ppid-rss-comm", []string{"ps", "--no-rates", "--columns", "pid,ppid,rss,comm"}, "", nil, 1.15},
		{"version", []string{"--version"}, empty, nil, 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			ref := c.ref
			if ref == "" {
				ref = raw
			}
			runs := []func() float64{
				func() float64 { return childCPU(b, ref) },
				func() float64 { return childCPU(b, bin, c.args...) },
			}
			if c.floor != nil {
				runs = append(runs, func() float64 { return childCPU(b, raw, c.floor...) })
			}
			cpu := make([]float64, len(runs))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Rotate which goes first, so that none always finds the
				// others' caches warm.
				for k := range runs {
					j := (i + k) % len(runs)
					cpu[j] += runs[j]()
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(cpu[0]*1000/n, "raw-cpu-ms/op")
			b.ReportMetric(cpu[1]*1000/n, "cmd-cpu-ms/op")
			b.ReportMetric(cpu[1]/cpu[0], "x-raw")
			if c.floor != nil {
				b.ReportMetric(cpu[2]*1000/n, "floor-cpu-ms/op")
				b.ReportMetric(cpu[1]/cpu[2], "x-floor")
			}
			b.ReportMetric(c.target, "x-target")
		})
	}
}

// buildTestProgram builds procwalk/testdata/NAME into a temporary
// directory and returns its path.
func buildTestProgram(b *testing.B, name string) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-o", out, "./procwalk/testdata/"+name)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, msg)
	}
	return out
}

// noSwapInUse reports whether this host's meminfo says SwapTotal equals
// SwapFree: then every VmSwap is 0 and sessions reads no status.
func noSwapInUse() bool {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return false
	}
	var total, free string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "SwapTotal:" {
			total = f[1]
		}
		if len(f) >= 2 && f[0] == "SwapFree:" {
			free = f[1]
		}
	}
	return total != "" && total == free
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

// BenchmarkBuildCommand is what building a one-shot command (its flag set,
// defaults and usages) costs every run of it, before it reads anything:
//
//	go test ./cmd/procwalk -run '^$' -bench BuildCommand -benchtime 2000x
func BenchmarkBuildCommand(b *testing.B) {
	e := newEnv(strings.NewReader(""), new(strings.Builder), new(strings.Builder))
	for _, name := range []string{"sessions", "ps"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			build := commandNamed(name).build
			for i := 0; i < b.N; i++ {
				build(&globals{}, e)
			}
		})
	}
}
