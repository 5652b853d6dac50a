//go:build linux

package session

import (
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// session_bench_test.go measures what grouping adds to a snapshot, on the
// live /proc: the target is all kinds together ≤ 1.1× a bare
// snapshot. Grouping includes the one tmux list-panes per server, the
// environ backstop and the cgroupfs reads. Run with many processes in tmux:
//
//	/work/shared/load/tmux-load start -s 100 -p 18 -L r4load
//	go test ./procwalk/ -run '^$' -bench 'Sessions' -cpu 1 -count 3 -benchtime 20x
//	/work/shared/load/tmux-load stop -L r4load
//
// BenchmarkSessionsOverhead is the headline; the others say where the time
// goes.

// benchGrouper returns a Grouper of every kind on the live /proc, with the
// default tmux discovery (as the CLI and Telegraf use it), and a Scanner.
func benchGrouper(b *testing.B) (*Grouper, *procwalk.Scanner) {
	b.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		b.Skip(err)
	}
	g, err := NewGrouper(fs, Config{})
	if err != nil {
		b.Fatal(err)
	}
	return g, procwalk.NewScanner(fs)
}

// BenchmarkSessionsOverhead interleaves, in every iteration, three runs
// that see the same load on a busy machine (their order rotates, so none
// always finds the others' caches warm):
//   - bare:    a snapshot of the default fields;
//   - fields:  a snapshot of the fields grouping needs (Grouper.Scan: status,
//     cgroup, and the cmdline of possible agents);
//   - grouped: that scan and Group, as the CLI and Telegraf do.
//
// It reports wall time and CPU time of each, and the ratios grouped/fields
// (what grouping itself adds) and grouped/bare (what sessions cost over a
// plain process scan, extra fields included). CPU time is honest about
// work that wall time hides by overlapping it with the scan: it counts this
// process (all threads, GC included), its reaped children (the tmux
// clients) and the tmux servers' own CPU while answering (read from their
// stat after each grouped run; 10 ms ticks, so only the mean over many
// iterations means anything). The Grouper is kept across iterations, as a
// long-running gatherer (Telegraf, watch) keeps it: its caches are warm.
// BenchmarkSessionsGroupCold shows the one-shot CLI's first gather.
func BenchmarkSessionsOverhead(b *testing.B) {
	g, sc := benchGrouper(b)
	servers, hz := tmuxServerIDs(g, sc, b)
	type run struct {
		wall, cpu time.Duration
		fn        func()
	}
	bare := &run{fn: func() { benchSnapshot(b, sc, 0) }}
	fields := &run{fn: func() { groupedSnapshot(b, g, sc) }}
	grouped := &run{fn: func() { g.Group(groupedSnapshot(b, g, sc)) }}
	runs := []*run{bare, fields, grouped}
	var serverCPU time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for k := range runs {
			r := runs[(i+k)%len(runs)]
			s0 := serverCPUTime(g.fs, servers, hz)
			c0, t0 := ownCPUTime(b), time.Now()
			r.fn()
			r.wall += time.Since(t0)
			r.cpu += ownCPUTime(b) - c0
			if r == grouped {
				serverCPU += serverCPUTime(g.fs, servers, hz) - s0
			}
		}
		i++
	}
	n := float64(i)
	grouped.cpu += serverCPU
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n }
	b.ReportMetric(perOp(bare.wall), "bare-ns")
	b.ReportMetric(perOp(fields.wall), "fields-ns")
	b.ReportMetric(perOp(grouped.wall), "grouped-ns")
	b.ReportMetric(perOp(bare.cpu), "bare-cpu-ns")
	b.ReportMetric(perOp(fields.cpu), "fields-cpu-ns")
	b.ReportMetric(perOp(grouped.cpu), "grouped-cpu-ns")
	b.ReportMetric(perOp(serverCPU), "tmux-server-cpu-ns")
	b.ReportMetric(grouped.wall.Seconds()/fields.wall.Seconds(), "x-fields-wall")
	b.ReportMetric(grouped.cpu.Seconds()/fields.cpu.Seconds(), "x-fields-cpu")
	b.ReportMetric(grouped.wall.Seconds()/bare.wall.Seconds(), "x-bare-wall")
	b.ReportMetric(grouped.cpu.Seconds()/bare.cpu.Seconds(), "x-bare-cpu")
}

// BenchmarkSessionsGroupWarm is Group alone on one snapshot, tmux included,
// with the Grouper's caches warm: what each gather of Telegraf adds.
func BenchmarkSessionsGroupWarm(b *testing.B) {
	g, sc := benchGrouper(b)
	s := groupedSnapshot(b, g, sc)
	g.Group(s)
	b.ReportAllocs()
	for b.Loop() {
		g.Group(s)
	}
	b.ReportMetric(float64(len(s.Procs)), "procs")
}

// BenchmarkSessionsGroupCold is Group by a new Grouper on one snapshot:
// the one-shot CLI's case, every cache empty.
func BenchmarkSessionsGroupCold(b *testing.B) {
	g, sc := benchGrouper(b)
	s := groupedSnapshot(b, g, sc)
	b.ReportAllocs()
	for b.Loop() {
		fresh, err := NewGrouper(g.fs, g.cfg)
		if err != nil {
			b.Fatal(err)
		}
		fresh.Group(s)
	}
}

func benchSnapshot(b *testing.B, sc *procwalk.Scanner, f procwalk.Fields) *procwalk.Snapshot {
	s, err := sc.Snapshot(f)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// groupedSnapshot is a gather of a Monitor with g: tmux asked meanwhile,
// and a snapshot of what g needs.
func groupedSnapshot(b *testing.B, g *Grouper, sc *procwalk.Scanner) *procwalk.Snapshot {
	s, err := procwalk.NewMonitor(g.fs, procwalk.MonitorConfig{Source: sc, Keep: true, NoRates: true}, g).Gather()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// ownCPUTime is this process's CPU time plus that of its reaped children.
func ownCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return cpuTime(b) + time.Duration(ru.Utime.Nano()+ru.Stime.Nano())
}

// tmuxServerIDs finds the tmux servers the Grouper asks (the parents of
// their panes' processes) and the clock ticks of their CPU times.
func tmuxServerIDs(g *Grouper, sc *procwalk.Scanner, b *testing.B) ([]procwalk.ProcID, uint64) {
	s := groupedSnapshot(b, g, sc)
	sessions, _ := g.Group(s)
	var ids []procwalk.ProcID
	seen := map[int]bool{}
	for _, ss := range sessions {
		for _, pane := range ss.Panes {
			if p := s.Parent(pane.PID); p != nil && !seen[p.ID.PID] {
				seen[p.ID.PID] = true
				ids = append(ids, p.ID)
			}
		}
	}
	if len(ids) == 0 {
		b.Log("no tmux server with live panes: start some load (see the file comment)")
	}
	return ids, s.Host.ClockTicks
}

// serverCPUTime is the CPU time the servers have used, from their stat.
func serverCPUTime(fs procwalk.FS, servers []procwalk.ProcID, hz uint64) time.Duration {
	var ticks uint64
	for _, id := range servers {
		if st, err := fs.ReadStat(id.PID); err == nil && st.StartTicks == id.StartTicks {
			ticks += st.UTime + st.STime
		}
	}
	return time.Duration(ticks) * time.Second / time.Duration(hz)
}
