//go:build linux

package procwalk

import (
	"math"
	"testing"
	"time"
)

// sampleProc is a process as a Sampler sees it: identity and counters.
type sampleProc struct {
	id              ProcID
	user, sys       float64 // CPU seconds
	read, written   uint64  // io bytes; io read only when haveIO
	rss, pss, uss   uint64
	haveIO, haveSma bool
}

func sampleSnapshot(at time.Time, procs ...sampleProc) *Snapshot {
	s := &Snapshot{Time: at}
	for _, sp := range procs {
		p := Process{ID: sp.id, UserCPUSeconds: sp.user, SystemCPUSeconds: sp.sys, RSSBytes: sp.rss,
			IO: IO{ReadBytes: sp.read, WriteBytes: sp.written}, Smaps: SmapsRollup{PSSBytes: sp.pss, USSBytes: sp.uss}}
		if sp.haveIO {
			p.Read |= FieldIO
		}
		if sp.haveSma {
			p.Read |= FieldSmaps
		}
		s.Procs = append(s.Procs, p)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func ratesEqual(a, b Rates) bool {
	return a.Measured == b.Measured && a.HaveIO == b.HaveIO && a.HaveSmaps == b.HaveSmaps &&
		near(a.IntervalSeconds, b.IntervalSeconds) && near(a.CPUPercent, b.CPUPercent) &&
		near(a.ReadBytesPerSecond, b.ReadBytesPerSecond) && near(a.WriteBytesPerSecond, b.WriteBytesPerSecond) &&
		near(a.RSSGrowthBytesPerMinute, b.RSSGrowthBytesPerMinute) &&
		near(a.PSSGrowthBytesPerMinute, b.PSSGrowthBytesPerMinute) && near(a.USSGrowthBytesPerMinute, b.USSGrowthBytesPerMinute)
}

func TestSampler(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	t1 := t0.Add(2 * time.Second)
	first := sampleSnapshot(t0,
		sampleProc{id: ProcID{10, 100}, user: 1, sys: 0.5, read: 1000, written: 0, rss: 1 << 20, pss: 500000, uss: 300000, haveIO: true, haveSma: true},
		sampleProc{id: ProcID{11, 200}, user: 9},                  // its pid will be reused
		sampleProc{id: ProcID{12, 300}, user: 5},                  // its CPU counter will go backwards
		sampleProc{id: ProcID{13, 400}, read: 9000, haveIO: true}, // its io counter will go backwards
		sampleProc{id: ProcID{14, 500}, user: 1, read: 10, haveIO: true},
		sampleProc{id: ProcID{15, 600}, user: 3}, // leaves before the second snapshot
	)
	var sm Sampler
	sm.Observe(first)
	for _, p := range first.Procs {
		if p.Rates != (Rates{}) {
			t.Errorf("first sight of %v: Rates = %+v; want none", p.ID, p.Rates)
		}
	}

	second := sampleSnapshot(t1,
		// +1.5 s CPU in 2 s = 75 % of a core; +4000 B read, +1000 B written;
		// RSS +204800 B, PSS -20000 B, USS +100000 B in 2 s.
		sampleProc{id: ProcID{10, 100}, user: 2, sys: 1, read: 5000, written: 1000, rss: 1<<20 + 204800, pss: 480000, uss: 400000, haveIO: true, haveSma: true},
		sampleProc{id: ProcID{11, 250}, user: 0.5},
		sampleProc{id: ProcID{12, 300}, user: 4},
		sampleProc{id: ProcID{13, 400}, user: 0.2, read: 10, haveIO: true},
		sampleProc{id: ProcID{14, 500}, user: 1}, // io not read this time
		sampleProc{id: ProcID{16, 700}, user: 1}, // new
	)
	// Rates left over from elsewhere are replaced.
	second.Procs[5].Rates = Rates{Measured: true, CPUPercent: 42}
	sm.Observe(second)
	want := map[int]Rates{
		10: {Measured: true, IntervalSeconds: 2, CPUPercent: 75, HaveIO: true, ReadBytesPerSecond: 2000, WriteBytesPerSecond: 500,
			RSSGrowthBytesPerMinute: 204800.0 / 2 * 60, HaveSmaps: true, PSSGrowthBytesPerMinute: -20000.0 / 2 * 60, USSGrowthBytesPerMinute: 100000.0 / 2 * 60},
		11: {},                                                   // same pid, different start: another process, no rate
		12: {},                                                   // CPU went backwards: no rate rather than a negative one
		13: {Measured: true, IntervalSeconds: 2, CPUPercent: 10}, // io went backwards: CPU only
		14: {Measured: true, IntervalSeconds: 2, CPUPercent: 0},  // io missing now: CPU only
		16: {},
	}
	for _, p := range second.Procs {
		if w := want[p.ID.PID]; !ratesEqual(p.Rates, w) {
			t.Errorf("pid %d: Rates =\n %+v\nwant\n %+v", p.ID.PID, p.Rates, w)
		}
	}

	// 15 left in the second snapshot: when the same ProcID shows up again
	// it is not compared with counters from two snapshots ago.
	third := sampleSnapshot(t1.Add(time.Second),
		sampleProc{id: ProcID{15, 600}, user: 4},
		sampleProc{id: ProcID{16, 700}, user: 1.25},
	)
	sm.Observe(third)
	if r := third.Procs[0].Rates; r.Measured {
		t.Errorf("forgotten process came back with rates %+v", r)
	}
	if r := third.Procs[1].Rates; !ratesEqual(r, Rates{Measured: true, IntervalSeconds: 1, CPUPercent: 25}) {
		t.Errorf("pid 16 in the third snapshot: %+v; want 25%% over 1 s", r)
	}
}

func TestSamplerNoTimeElapsed(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	var sm Sampler
	sm.Observe(sampleSnapshot(t0, sampleProc{id: ProcID{1, 1}, user: 1}))
	same := sampleSnapshot(t0, sampleProc{id: ProcID{1, 1}, user: 2})
	sm.Observe(same)
	if r := same.Procs[0].Rates; r != (Rates{}) {
		t.Errorf("zero interval gave rates %+v; want none (no division by zero)", r)
	}
	earlier := sampleSnapshot(t0.Add(-time.Second), sampleProc{id: ProcID{1, 1}, user: 3})
	sm.Observe(earlier)
	if r := earlier.Procs[0].Rates; r != (Rates{}) {
		t.Errorf("snapshot older than the last gave rates %+v; want none", r)
	}
}

func TestSamplerOnFixture(t *testing.T) {
	// Two scans of an unchanging tree: every process measured at 0 %.
	var sm Sampler
	a := fixtureSnapshot(t, FieldIO)
	b := fixtureSnapshot(t, FieldIO)
	b.Time = a.Time.Add(time.Second)
	sm.Observe(a)
	sm.Observe(b)
	for _, p := range b.Procs {
		r := p.Rates
		haveIO := p.Read&FieldIO != 0
		if !r.Measured || r.CPUPercent != 0 || r.HaveIO != haveIO || r.ReadBytesPerSecond != 0 || r.RSSGrowthBytesPerMinute != 0 {
			t.Errorf("pid %d: %+v; want measured zeros", p.ID.PID, r)
		}
	}
	if got := b.Subtree(100); got.RatesMeasured != 7 || got.CPUPercent != 0 {
		t.Errorf("Subtree(100) rates: %+v", got)
	}
}

// A snapshot built by hand may list its processes in any order; the
// Sampler still pairs each with its previous sample.
func TestSamplerUnsortedSnapshots(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	var sm Sampler
	// io for two of them: the Sampler keeps io counters apart from the
	// others, and its sort must move them with their processes.
	sm.Observe(sampleSnapshot(t0,
		sampleProc{id: ProcID{30, 1}, user: 1, read: 300, haveIO: true},
		sampleProc{id: ProcID{10, 1}, user: 2},
		sampleProc{id: ProcID{20, 1}, user: 3, read: 2000, written: 20, haveIO: true},
	))
	second := sampleSnapshot(t0.Add(time.Second),
		sampleProc{id: ProcID{20, 1}, user: 3.5, read: 2500, written: 20, haveIO: true},
		sampleProc{id: ProcID{30, 1}, user: 1.25, read: 310, haveIO: true},
		sampleProc{id: ProcID{10, 1}, user: 3, read: 7, haveIO: true}, // no io before: no io rate
	)
	sm.Observe(second)
	want := map[int]Rates{
		20: {Measured: true, IntervalSeconds: 1, CPUPercent: 50, HaveIO: true, ReadBytesPerSecond: 500},
		30: {Measured: true, IntervalSeconds: 1, CPUPercent: 25, HaveIO: true, ReadBytesPerSecond: 10},
		10: {Measured: true, IntervalSeconds: 1, CPUPercent: 100},
	}
	for _, p := range second.Procs {
		if !ratesEqual(p.Rates, want[p.ID.PID]) {
			t.Errorf("pid %d: %+v, want %+v", p.ID.PID, p.Rates, want[p.ID.PID])
		}
	}
}

// TestSamplerObserveMore checks the rates of fields read after the scan (a
// live view's rows on screen): measured against the snapshot before when
// that read them too, late or in its scan, never against a field read in
// one snapshot alone.
func TestSamplerObserveMore(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	late := func(s *Snapshot, i int, sp sampleProc) *Process {
		p := &s.Procs[i]
		if sp.haveIO {
			p.IO, p.Read = IO{ReadBytes: sp.read, WriteBytes: sp.written}, p.Read|FieldIO
		}
		if sp.haveSma {
			p.Smaps, p.Read = SmapsRollup{PSSBytes: sp.pss, USSBytes: sp.uss}, p.Read|FieldSmaps
		}
		return p
	}
	var sm Sampler
	first := sampleSnapshot(t0,
		sampleProc{id: ProcID{10, 100}, user: 1},
		sampleProc{id: ProcID{11, 110}, user: 1},
		sampleProc{id: ProcID{12, 120}, user: 1, read: 100, haveIO: true}, // io in the first scan
		sampleProc{id: ProcID{13, 130}, user: 1})
	sm.Observe(first)
	sm.ObserveMore([]*Process{
		late(first, 0, sampleProc{read: 1000, written: 10, haveIO: true, pss: 4000, uss: 3000, haveSma: true}),
		late(first, 3, sampleProc{read: 50, haveIO: true}),
	}, FieldIO|FieldSmaps)
	if r := first.Procs[0].Rates; r != (Rates{}) {
		t.Errorf("first sight read late: Rates = %+v; want none", r)
	}

	second := sampleSnapshot(t0.Add(2*time.Second),
		sampleProc{id: ProcID{10, 100}, user: 2},
		sampleProc{id: ProcID{11, 110}, user: 2},
		sampleProc{id: ProcID{12, 120}, user: 2},
		sampleProc{id: ProcID{13, 130}, user: 2},
		sampleProc{id: ProcID{14, 140}, user: 2}) // new
	sm.Observe(second)
	outsider := &Process{ID: ProcID{10, 100}, IO: IO{ReadBytes: 1 << 40}, Read: FieldIO} // not in the snapshot
	sm.ObserveMore([]*Process{
		late(second, 0, sampleProc{read: 5000, written: 1010, haveIO: true, pss: 3000, uss: 6000, haveSma: true}),
		late(second, 1, sampleProc{read: 7, haveIO: true}), // read late now only
		late(second, 2, sampleProc{read: 300, haveIO: true}),
		late(second, 3, sampleProc{read: 10, haveIO: true}), // went backwards
		late(second, 4, sampleProc{read: 9, haveIO: true}),
		outsider,
	}, FieldIO|FieldSmaps)
	cpu := Rates{Measured: true, IntervalSeconds: 2, CPUPercent: 50}
	want := []Rates{
		{Measured: true, IntervalSeconds: 2, CPUPercent: 50, HaveIO: true, ReadBytesPerSecond: 2000, WriteBytesPerSecond: 500,
			HaveSmaps: true, PSSGrowthBytesPerMinute: -1000.0 / 2 * 60, USSGrowthBytesPerMinute: 3000.0 / 2 * 60},
		cpu,
		{Measured: true, IntervalSeconds: 2, CPUPercent: 50, HaveIO: true, ReadBytesPerSecond: 100},
		cpu,
		{},
	}
	for i, w := range want {
		if got := second.Procs[i].Rates; !ratesEqual(got, w) {
			t.Errorf("pid %d: Rates = %+v; want %+v", second.Procs[i].ID.PID, got, w)
		}
	}
	if outsider.Rates != (Rates{}) {
		t.Errorf("a process of no snapshot observed got Rates %+v", outsider.Rates)
	}

	// The late reads of the second count as its samples for the third,
	// whose scan reads io itself.
	third := sampleSnapshot(t0.Add(4*time.Second),
		sampleProc{id: ProcID{10, 100}, user: 3, read: 9000, written: 1010, haveIO: true},
		sampleProc{id: ProcID{11, 110}, user: 3, read: 27, haveIO: true})
	sm.Observe(third)
	for i, w := range []float64{2000, 10} {
		if r := third.Procs[i].Rates; !r.HaveIO || !near(r.ReadBytesPerSecond, w) {
			t.Errorf("pid %d after a late read: Rates = %+v; want %v B/s read", third.Procs[i].ID.PID, r, w)
		}
	}
}
