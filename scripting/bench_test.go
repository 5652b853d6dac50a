//go:build linux

package scripting

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// synthSnapshot makes a snapshot of n processes without reading /proc.
func synthSnapshot(n int) *procwalk.Snapshot {
	s := &procwalk.Snapshot{Time: time.Unix(1700000000, 0), Procs: make([]procwalk.Process, n)}
	comms := []string{"bash", "node", "python3", "claude", "make", "cc1", "sshd", "java"}
	for i := range s.Procs {
		s.Procs[i] = procwalk.Process{
			ID:       procwalk.ProcID{PID: i + 1, StartTicks: uint64(i)},
			PPID:     i / 2,
			Comm:     comms[i%len(comms)],
			State:    'S',
			Threads:  1 + i%8,
			RSSBytes: uint64(i%512) << 20,
			Start:    time.Unix(1699990000, 0),
		}
	}
	return s
}

// visitAll is a rule visiting every process and reading two fields.
const visitAll = `local pw = require "procwalk"
local big, limit = 0, 256 * pw.MiB
local procs = pw.processes()
for i = 1, #procs do
  local p = procs[i]
  if p.rss > limit and p.comm ~= "sshd" then big = big + 1 end
end
return big`

// visitAllIpairs is the same rule with ipairs, which calls a Go iterator
// per element.
const visitAllIpairs = `local pw = require "procwalk"
local big, limit = 0, 256 * pw.MiB
for _, p in ipairs(pw.processes()) do
  if p.rss > limit and p.comm ~= "sshd" then big = big + 1 end
end
return big`

func benchRun(b *testing.B, src string, snap *procwalk.Snapshot) {
	s, err := Compile("bench.lua", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	r := New(Config{})
	defer r.Close()
	in := Input{Snapshot: snap}
	ctx := context.Background()
	if err := r.Run(ctx, s, in); err != nil { // build the state once
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := r.Run(ctx, s, in); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op: on a shared machine, wall time per op grows
// with the other load, CPU time (GC included) much less.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(cpuTime()-since)/float64(b.N), "cpu-ns/op")
}

// The Lua rule over 10,000 processes: the budget is 10 ms.
func BenchmarkRuleVisitAll10k(b *testing.B) { benchRun(b, visitAll, synthSnapshot(10000)) }

func BenchmarkRuleVisitAll10kIpairs(b *testing.B) { benchRun(b, visitAllIpairs, synthSnapshot(10000)) }

// The floor of the VM itself: the same loop over 10,000 plain Lua tables
// already built, no procwalk objects and no Go calls (same sandbox, same
// deadline checks).
func BenchmarkPlainLuaTables10k(b *testing.B) {
	benchRun(b, `local pw = require "procwalk"
if not pw.state.procs then
  local t = {}
  for i = 1, 10000 do t[i] = {rss = (i % 512) * pw.MiB, comm = "bash"} end
  pw.state.procs = t
end
local big, limit, procs = 0, 256 * pw.MiB, pw.state.procs
for i = 1, #procs do
  local p = procs[i]
  if p.rss > limit and p.comm ~= "sshd" then big = big + 1 end
end
return big`, synthSnapshot(10))
}

// The same rule as a raw Go loop, for the ratio.
func BenchmarkGoVisitAll10k(b *testing.B) {
	snap := synthSnapshot(10000)
	b.ReportAllocs()
	b.ResetTimer()
	big := 0
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		big = 0
		for j := range snap.Procs {
			p := &snap.Procs[j]
			if p.RSSBytes > 256<<20 && p.Comm != "sshd" {
				big++
			}
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(big), "big")
}

// Per-tick overhead of a compiled script that only loads the module: the
// deadline timer, the heap watchdog and the protected call.
func BenchmarkEmptyRun(b *testing.B) { benchRun(b, `local pw = require "procwalk"`, synthSnapshot(10)) }

// A small rule over a realistic host (500 processes) with one session-like
// lookup per process.
func BenchmarkRule500(b *testing.B) {
	benchRun(b, `local pw = require "procwalk"
local n = 0
for _, p in ipairs(pw.processes{kernel = false}) do
  if p.comm == "claude" and p.rss > pw.GiB then n = n + 1 end
end`, synthSnapshot(500))
}
