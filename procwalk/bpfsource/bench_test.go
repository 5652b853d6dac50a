//go:build linux

package bpfsource

import (
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// bench_test.go measures the BPF source's full gather against the floor of
// the /proc source: a raw loop that lists /proc and opens, reads to EOF and
// closes every pid's stat and statm, parsing nothing (as procwalk's own
// BenchmarkRatio). Run as root on the live host, e.g. with about 2,500
// processes (tmux-load start -s 100 -p 18 -m 1 -c 0 -L bpfbench):
//
//	go test ./procwalk/bpfsource -run '^$' -bench Ratio -benchtime 20x
//
// The target: the BPF gather ≤ 0.25× the raw loop, in CPU time.

// rawLoop reads stat and statm of every pid under /proc and keeps nothing.
type rawLoop struct {
	dents, buf, path []byte
	names            []string
}

func (r *rawLoop) scan(b *testing.B) int {
	root, err := unix.Open(procwalk.DefaultRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Skip(err)
	}
	defer unix.Close(root)
	r.names = r.names[:0]
	for {
		n, err := unix.Getdents(root, r.dents)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
		_, _, r.names = unix.ParseDirent(r.dents[:n], -1, r.names)
	}
	read := 0
	for _, name := range r.names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if r.read(root, name, "/stat") && r.read(root, name, "/statm") {
			read++
		}
	}
	return read
}

func (r *rawLoop) read(root int, pid, file string) bool {
	r.path = append(append(r.path[:0], pid...), file...)
	fd, err := unix.Openat(root, string(r.path), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, r.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return err == nil
		}
	}
}

func benchSource(b *testing.B) *Source {
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		b.Skip(err)
	}
	if err := Allowed(fs); err != nil {
		b.Skip(err)
	}
	s, err := Open(fs)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// gatherFunc is one full gather of the default fields, its storage handed
// back as a long-running Monitor does.
func gatherFunc(b *testing.B, s *Source) func() int {
	return func() int {
		snap, err := s.SnapshotSelect(0, procwalk.Selector{})
		if err != nil {
			b.Fatal(err)
		}
		if snap.Source != Name {
			b.Fatalf("fell back to /proc: %s", snap.SourceNote)
		}
		n := len(snap.Procs)
		s.Recycle(snap)
		return n
	}
}

func BenchmarkGather(b *testing.B) {
	gather := gatherFunc(b, benchSource(b))
	gather()
	b.ReportAllocs()
	b.ResetTimer()
	procs := 0
	for range b.N {
		procs += gather()
	}
	b.ReportMetric(float64(procs)/float64(b.N), "procs/op")
}

// BenchmarkRatio interleaves the raw loop and the BPF gather and reports
// the gather's CPU time (user + system: the BPF program runs in our read(2))
// over the raw loop's, alternating which goes first.
func BenchmarkRatio(b *testing.B) {
	gather := gatherFunc(b, benchSource(b))
	r := &rawLoop{dents: make([]byte, 32<<10), buf: make([]byte, 4096), path: make([]byte, 0, 64)}
	r.scan(b)
	gather()
	b.ResetTimer()
	var rawCPU, bpfCPU, rawWall, bpfWall time.Duration
	measure := func(fn func(), cpu, wall *time.Duration) {
		c0, t0 := cpuTime(b), time.Now()
		fn()
		*cpu += cpuTime(b) - c0
		*wall += time.Since(t0)
	}
	procs, rawProcs := 0, 0
	raw := func() { rawProcs += r.scan(b) }
	bpf := func() { procs += gather() }
	for i := range b.N {
		if i%2 == 0 {
			measure(raw, &rawCPU, &rawWall)
			measure(bpf, &bpfCPU, &bpfWall)
		} else {
			measure(bpf, &bpfCPU, &bpfWall)
			measure(raw, &rawCPU, &rawWall)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(rawCPU.Nanoseconds())/n, "raw-cpu-ns/op")
	b.ReportMetric(float64(bpfCPU.Nanoseconds())/n, "bpf-cpu-ns/op")
	b.ReportMetric(bpfCPU.Seconds()/rawCPU.Seconds(), "x-raw")
	b.ReportMetric(bpfWall.Seconds()/rawWall.Seconds(), "x-raw-wall")
	b.ReportMetric(0.25, "x-target")
	b.ReportMetric(float64(procs)/n, "procs/op")
	b.ReportMetric(float64(rawProcs)/n, "raw-procs/op")
}

// cpuTime is the CPU time this process has used, user plus system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOpen is the one-time cost of loading: parsing the kernel's BTF,
// relocating, verifying and attaching the program.
func BenchmarkOpen(b *testing.B) {
	s := benchSource(b) // skips where the source cannot load
	s.Close()
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	b.ReportAllocs()
	c0 := cpuTime(b)
	for range b.N {
		s, err := Open(fs)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64((cpuTime(b)-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
