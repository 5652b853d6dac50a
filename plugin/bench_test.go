//go:build linux

package plugin

import (
	"io"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// bench_test.go measures execd's steady state on this host's /proc: one
// gather and encode per op, as `procwalk telegraf --execd` does per stdin
// line, against a raw loop that only opens and reads stat and statm of every
// pid. Run it under load, e.g.
//
//	/work/shared/load/tmux-load start -s 100 -p 18 -c 0 -L bench
//	go test ./plugin/ -run '^$' -bench Execd -cpu 1 -count 3
//
// Targets: allocs/proc ≈ 0 in BenchmarkExecdNoSessions (the scanner's and
// the encoder's buffers are reused); with sessions, what remains is per
// session (the grouper's member lists and counters) and per tmux server
// asked (one exec), reported as allocs/session. Time: BenchmarkExecdRatio,
// a gather's CPU over the raw loop's in one run; issue 9's target is 1.1×
// for the default kinds.

func benchCollector(b *testing.B, cfg Config) *Collector {
	b.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		b.Skipf("no procfs: %v", err)
	}
	c, err := NewCollector(fs, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Prime(); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchGathers runs gathers and reports allocations per process per gather
// and the CPU time of the whole process per gather (cpu-ms/op: garbage
// collection on other threads included, which ns/op leaves out). With
// returnMemory, each gather is followed by what Execd.ReturnMemory does.
func benchGathers(b *testing.B, c *Collector, returnMemory bool) {
	c.pipeline.SetReturn(returnMemory)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := processCPUSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := c.Gather()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.writeFrame(f, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
		if returnMemory {
			c.pipeline.ReturnMemory(f) // as Execd does between gathers
		}
	}
	b.StopTimer()
	b.ReportMetric((processCPUSeconds()-cpu)*1000/float64(b.N), "cpu-ms/op")
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / float64(b.N)
	if c.lastProcesses > 0 {
		b.ReportMetric(allocs/float64(c.lastProcesses), "allocs/proc")
	}
	if c.lastSessions > 0 {
		b.ReportMetric(allocs/float64(c.lastSessions), "allocs/session")
	}
	b.ReportMetric(float64(c.lastProcesses), "procs")
	b.ReportMetric(float64(c.lastSessions), "sessions")
}

// processCPUSeconds is the user and system CPU time of this process so far.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkExecdNoSessions isolates the per-process path: scan (stat,
// statm), rates, encoding and the self line, with no session to build. Its
// allocations per gather do not grow with the number of processes.
func BenchmarkExecdNoSessions(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{Group: session.Config{Kinds: []string{session.KindGroup}}}), false)
}

// BenchmarkExecdTmux is the cheap configuration: stat and statm per
// process, tmux sessions from the tmux servers found.
func BenchmarkExecdTmux(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{Group: session.Config{Kinds: []string{session.KindTmux}}}), false)
}

// BenchmarkExecdTmuxReturnMemory is BenchmarkExecdTmux as `procwalk
// telegraf --execd` runs it: a garbage collection that returns freed memory
// to the kernel after each batch. Its cpu-ms/op against BenchmarkExecdTmux's
// is what that costs.
func BenchmarkExecdTmuxReturnMemory(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{Group: session.Config{Kinds: []string{session.KindTmux}}}), true)
}

// BenchmarkExecdDefault is the default session kinds (tmux, cgroup, user,
// agent, tree, group): they read status, cgroup, cmdline and cwd too.
func BenchmarkExecdDefault(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{}), false)
}

// BenchmarkExecdDefaultReturnMemory is BenchmarkExecdDefault with the
// collection after each batch, as in BenchmarkExecdTmuxReturnMemory.
func BenchmarkExecdDefaultReturnMemory(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{}), true)
}

// BenchmarkExecdTop3 adds the top 3 processes of every session.
func BenchmarkExecdTop3(b *testing.B) {
	benchGathers(b, benchCollector(b, Config{Processes: ProcessConfig{Top: 3}}), false)
}

// BenchmarkRawStatStatm is the baseline: list /proc, then open, read and
// close stat and statm of every pid, parsing nothing. Its path strings
// allocate, a cost far below the syscalls'; procwalk/bench_test.go keeps an
// allocation-free variant for the engine's own comparison.
func BenchmarkRawStatStatm(b *testing.B) {
	raw := newRawLoop(b)
	b.ReportAllocs()
	b.ResetTimer()
	procs := 0
	for i := 0; i < b.N; i++ {
		procs = raw.scan(b)
	}
	b.StopTimer()
	b.ReportMetric(float64(procs), "procs")
}

// BenchmarkExecdRatio interleaves the raw loop and an execd gather (scan,
// sessions, encoding) in every iteration and reports the gather's CPU over
// the loop's (x-raw): the steady state of a long-running mode, against the
// loop repeated in one process. CPU is the whole process's, GC included.
func BenchmarkExecdRatio(b *testing.B) {
	for _, c := range []struct {
		name   string
		cfg    Config
		target float64
	}{
		{"no-sessions", Config{Group: session.Config{Kinds: []string{session.KindGroup}}}, 1.1},
		{"tmux", Config{Group: session.Config{Kinds: []string{session.KindTmux}}}, 1.1},
		{"default", Config{}, 1.1},
	} {
		b.Run(c.name, func(b *testing.B) {
			col := benchCollector(b, c.cfg)
			col.pipeline.SetReturn(true)
			raw := newRawLoop(b)
			raw.scan(b)
			var rawCPU, gatherCPU float64
			measure := func(fn func(), total *float64) {
				c0 := processCPUSeconds()
				fn()
				*total += processCPUSeconds() - c0
			}
			scan := func() { raw.scan(b) }
			gather := func() {
				f, err := col.Gather()
				if err != nil {
					b.Fatal(err)
				}
				if err := col.writeFrame(f, io.Discard, nil); err != nil {
					b.Fatal(err)
				}
				col.pipeline.ReturnMemory(f) // as execd does between gathers
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternate which goes first, so neither always finds the
				// other's caches warm.
				if i%2 == 0 {
					measure(scan, &rawCPU)
					measure(gather, &gatherCPU)
				} else {
					measure(gather, &gatherCPU)
					measure(scan, &rawCPU)
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(rawCPU*1000/n, "raw-cpu-ms/op")
			b.ReportMetric(gatherCPU*1000/n, "gather-cpu-ms/op")
			b.ReportMetric(gatherCPU/rawCPU, "x-raw")
			b.ReportMetric(c.target, "x-target")
			b.ReportMetric(float64(col.lastProcesses), "procs")
		})
	}
}

// rawLoop reads stat and statm of every pid, keeping nothing.
type rawLoop struct {
	dents, buf []byte
	pids       []int
}

func newRawLoop(b *testing.B) *rawLoop {
	root, err := syscall.Open(procwalk.DefaultRoot, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Skipf("no procfs: %v", err)
	}
	syscall.Close(root)
	return &rawLoop{dents: make([]byte, 32<<10), buf: make([]byte, 4096)}
}

// scan reads every pid's stat and statm once and returns how many pids it
// listed.
func (r *rawLoop) scan(b *testing.B) int {
	r.pids = listPIDs(b, r.dents, r.pids[:0])
	for _, pid := range r.pids {
		for _, f := range [...]string{"/stat", "/statm"} {
			fd, err := syscall.Open(procwalk.DefaultRoot+"/"+strconv.Itoa(pid)+f, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				continue // exited
			}
			for {
				n, err := syscall.Read(fd, r.buf)
				if n <= 0 || err != nil {
					break
				}
			}
			syscall.Close(fd)
		}
	}
	return len(r.pids)
}

func listPIDs(b *testing.B, dents []byte, pids []int) []int {
	fd, err := syscall.Open(procwalk.DefaultRoot, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.ReadDirent(fd, dents)
		if err != nil {
			b.Fatal(err)
		}
		if n <= 0 {
			return pids
		}
		_, _, names := syscall.ParseDirent(dents[:n], -1, nil)
		for _, name := range names {
			if pid, err := strconv.Atoi(name); err == nil {
				pids = append(pids, pid)
			}
		}
	}
}
