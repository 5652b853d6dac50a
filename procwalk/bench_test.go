//go:build linux

package procwalk

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// bench_test.go measures Snapshot against raw loops that do nothing but the
// syscalls: list /proc, then open, read to EOF and close each pid's files.
// The raw loops are as lean as the engine's own read path (one reused
// buffer, openat relative to a /proc directory fd, no parsing), so
// Snapshot's cost over theirs is what parsing, interning and building the
// tree cost. BenchmarkRatio gives the headline figures. Run it on the live
// /proc with about 2,000 processes, e.g. under the team's load generator:
//
//	tmux-load start -s 100 -p 18 -c 0 -L bench
//	go test ./procwalk/ -run '^$' -bench . -cpu 1 -count 5
//
// The targets: default fields ≤ 1.2× the stat+statm loop, smaps ≤
// 1.1× the stat+statm+smaps_rollup loop, allocations per process ≈ 0.

// rawLoop is the baseline: it reads files of every pid and keeps nothing.
type rawLoop struct {
	root  int // open while scanning
	dents []byte
	buf   []byte
	path  []byte
	pids  []int
}

func newRawLoop() *rawLoop {
	return &rawLoop{dents: make([]byte, 32<<10), buf: make([]byte, 4096), path: make([]byte, 0, 64)}
}

// scan lists the pids and reads files of each; it returns the number of
// pids whose first file (stat) could be read: like Snapshot, it drops a pid
// that is gone but keeps one that lacks a later file (smaps_rollup of a
// kernel thread).
func (r *rawLoop) scan(b *testing.B, files ...string) int {
	root, err := syscall.Open(DefaultRoot, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Skipf("cannot open %s: %v", DefaultRoot, err)
	}
	defer syscall.Close(root)
	r.root = root
	r.pids = r.pids[:0]
	err = fsio.EachDirent(r.root, r.dents, func(name []byte, _ byte) {
		if pid, ok := fsio.Atou(name); ok {
			r.pids = append(r.pids, int(pid))
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	read := 0
	for _, pid := range r.pids {
		if !r.readFile(pid, files[0]) {
			continue
		}
		for _, f := range files[1:] {
			r.readFile(pid, f)
		}
		read++
	}
	return read
}

func (r *rawLoop) readFile(pid int, file string) bool {
	p := strconv.AppendInt(r.path[:0], int64(pid), 10)
	p = append(p, '/')
	p = append(p, file...)
	p = append(p, 0)
	r.path = p
	fd, err := fsio.Openat(r.root, p, syscall.O_RDONLY)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.Read(fd, r.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
	}
}

// benchProcs runs fn b.N times and reports processes per op and heap
// allocations per process (allocs/op divided by processes).
func benchProcs(b *testing.B, fn func() int) {
	procs := fn() // warm up: buffers, the comm cache
	if procs == 0 {
		b.Skip("no processes visible")
	}
	var before, after runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	runtime.ReadMemStats(&before)
	total := 0
	for range b.N {
		total += fn()
	}
	runtime.ReadMemStats(&after)
	b.StopTimer()
	b.ReportMetric(float64(total)/float64(b.N), "procs/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(total), "allocs/proc")
}

func benchScanner(b *testing.B) *Scanner {
	fs, err := NewFS(DefaultRoot)
	if err != nil {
		b.Skip(err)
	}
	return NewScanner(fs)
}

func snapshotFunc(b *testing.B, sc *Scanner, fields Fields) func() int {
	return func() int {
		s, err := sc.Snapshot(fields)
		if err != nil {
			b.Fatal(err)
		}
		return len(s.Procs)
	}
}

var (
	rawDefaultFiles = []string{"stat", "statm"}
	rawSmapsFiles   = []string{"stat", "statm", "smaps_rollup"}
)

func BenchmarkRawStatStatm(b *testing.B) {
	r := newRawLoop()
	benchProcs(b, func() int { return r.scan(b, rawDefaultFiles...) })
}

func BenchmarkSnapshotDefault(b *testing.B) {
	benchProcs(b, snapshotFunc(b, benchScanner(b), 0))
}

func BenchmarkRawStatStatmSmaps(b *testing.B) {
	r := newRawLoop()
	benchProcs(b, func() int { return r.scan(b, rawSmapsFiles...) })
}

func BenchmarkSnapshotSmaps(b *testing.B) {
	benchProcs(b, snapshotFunc(b, benchScanner(b), FieldSmaps))
}

func BenchmarkSnapshotAllFields(b *testing.B) {
	benchProcs(b, snapshotFunc(b, benchScanner(b), AllFields|FieldSmaps))
}

// BenchmarkRatio interleaves the raw loop and Snapshot in every iteration
// and reports Snapshot's cost over the raw loop's. The ratio is of process
// CPU time (user + system, all threads, so GC included): on a shared
// machine, wall time also counts the time spent waiting for a core, which
// falls unevenly on the two sides; interleaving evens out the rest. The
// wall-clock ratio is reported too.
func BenchmarkRatio(b *testing.B) {
	for _, c := range []struct {
		name   string
		fields Fields
		files  []string
		target float64
	}{
		{"default", 0, rawDefaultFiles, 1.2},
		{"smaps", FieldSmaps, rawSmapsFiles, 1.1},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRawLoop()
			snap := snapshotFunc(b, benchScanner(b), c.fields)
			r.scan(b, c.files...)
			snap()
			b.ResetTimer()
			var rawCPU, engineCPU, rawWall, engineWall time.Duration
			measure := func(fn func(), cpu, wall *time.Duration) {
				c0, t0 := cpuTime(b), time.Now()
				fn()
				*cpu += cpuTime(b) - c0
				*wall += time.Since(t0)
			}
			procs := 0
			raw := func() { r.scan(b, c.files...) }
			engine := func() { procs += snap() }
			for i := range b.N {
				// Alternate which goes first, so neither always finds the
				// other's caches warm.
				if i%2 == 0 {
					measure(raw, &rawCPU, &rawWall)
					measure(engine, &engineCPU, &engineWall)
				} else {
					measure(engine, &engineCPU, &engineWall)
					measure(raw, &rawCPU, &rawWall)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(rawCPU.Nanoseconds())/n, "raw-cpu-ns/op")
			b.ReportMetric(float64(engineCPU.Nanoseconds())/n, "snapshot-cpu-ns/op")
			b.ReportMetric(engineCPU.Seconds()/rawCPU.Seconds(), "x-raw")
			b.ReportMetric(engineWall.Seconds()/rawWall.Seconds(), "x-raw-wall")
			b.ReportMetric(c.target, "x-target")
			b.ReportMetric(float64(procs)/n, "procs/op")
		})
	}
}

// cpuTime is the CPU time this process has used, user plus system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
