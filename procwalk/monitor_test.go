//go:build linux

package procwalk

import (
	"context"
	"errors"
	"testing"
	"time"
)

// stepClock reads t, then t+step, t+2*step ... one step per call.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

// recordingStage records what a Monitor asked of it.
type recordingStage struct {
	fields   Fields
	sel      Selector
	prepared []Fields
	done     int
}

func (s *recordingStage) Plan() (Fields, Selector) { return s.fields, s.sel }
func (s *recordingStage) Prepare(f Fields) func() {
	s.prepared = append(s.prepared, f)
	return func() { s.done++ }
}

func fixtureFS(t *testing.T) FS {
	t.Helper()
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestMonitorDatesScansByItsClock(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := &stepClock{t: start, step: 10 * time.Second}
	m := NewMonitor(fixtureFS(t), MonitorConfig{Clock: clock})
	first, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if !first.Time.Equal(start) {
		t.Errorf("first gather at %v, want %v", first.Time, start)
	}
	if p := first.Process(1); p == nil || p.Rates.Measured {
		t.Fatalf("pid 1 in the first gather: %+v, want it without rates", p)
	}
	second, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(10 * time.Second); !second.Time.Equal(want) {
		t.Errorf("second gather at %v, want %v", second.Time, want)
	}
	// Rates over the clock's 10 s: the fixture does not change, so every
	// rate is a measured zero.
	p := second.Process(1)
	if p == nil || !p.Rates.Measured || p.Rates.IntervalSeconds != 10 || p.Rates.CPUPercent != 0 {
		t.Errorf("pid 1 rates %+v, want measured over 10 s, 0 %% CPU", p.Rates)
	}
	// Age is measured on the clock: pid 1 started 0.05 s after boot.
	if got, want := p.Age(second.Time), second.Time.Sub(time.Unix(1700000000, 50e6)); got != want {
		t.Errorf("pid 1 age %v, want %v", got, want)
	}
}

func TestMonitorNoRates(t *testing.T) {
	m := NewMonitor(fixtureFS(t), MonitorConfig{NoRates: true, Clock: &stepClock{t: time.Unix(1800000000, 0), step: time.Second}})
	for range 2 {
		snap, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if p := snap.Process(1); p.Rates.Measured {
			t.Errorf("rates measured with NoRates: %+v", p.Rates)
		}
	}
}

func TestMonitorPlansWithStages(t *testing.T) {
	a := &recordingStage{fields: FieldStatus}
	b := &recordingStage{sel: Selector{Fields: FieldCwd, Select: func(p *Process) Fields {
		if p.ID.PID == 101 {
			return FieldCwd
		}
		return 0
	}}}
	c := &recordingStage{sel: Selector{Fields: FieldExe, Select: func(p *Process) Fields {
		if p.ID.PID == 1 {
			return FieldExe
		}
		return 0
	}}}
	m := NewMonitor(fixtureFS(t), MonitorConfig{Fields: FieldIO, Clock: SystemClock{}}, a, b, c)
	fields, sel := m.Plan()
	if fields != FieldIO|FieldStatus || sel.Fields != FieldCwd|FieldExe {
		t.Fatalf("plan %s, selected %s; want io,status and cwd,exe", fields, sel.Fields)
	}
	snap, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*recordingStage{a, b, c} {
		if len(st.prepared) != 1 || st.prepared[0] != FieldIO|FieldStatus || st.done != 1 {
			t.Errorf("stage prepared %v, done %d times; want once for io,status, done once", st.prepared, st.done)
		}
	}
	if snap.Fields != FieldIO|FieldStatus || snap.Selected != FieldCwd|FieldExe {
		t.Errorf("snapshot fields %s, selected %s", snap.Fields, snap.Selected)
	}
	for pid, want := range map[int]Fields{1: FieldExe, 101: FieldCwd, 110: 0} {
		if got := snap.Process(pid).Read & (FieldCwd | FieldExe); got != want {
			t.Errorf("pid %d read %q of cwd,exe, want %q", pid, got, want)
		}
	}
}

func TestMonitorPrimeReadsOnlyWhatRatesNeed(t *testing.T) {
	st := &recordingStage{fields: FieldStatus}
	src := &countingSource{Scanner: NewScanner(fixtureFS(t))}
	m := NewMonitor(FS{}, MonitorConfig{Fields: FieldIO | FieldCmdline | FieldSmaps, Source: src}, st)
	if err := m.Prime(); err != nil {
		t.Fatal(err)
	}
	if len(st.prepared) != 0 {
		t.Errorf("Prime prepared the stage for %v", st.prepared)
	}
	if want := FieldIO | FieldSmaps; len(src.scans) != 1 || src.scans[0] != want {
		t.Errorf("Prime scanned %v, want [%s]", src.scans, want)
	}
	snap, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if want := FieldIO | FieldCmdline | FieldSmaps | FieldStatus; src.scans[1] != want {
		t.Errorf("Gather scanned %s, want %s", src.scans[1], want)
	}
	if !snap.Process(1).Rates.Measured {
		t.Error("the gather after Prime has no rates")
	}
}

func TestMonitorRecyclesUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		src := &countingSource{Scanner: NewScanner(fixtureFS(t))}
		m := NewMonitor(FS{}, MonitorConfig{Source: src, Keep: keep})
		first, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Gather(); err != nil {
			t.Fatal(err)
		}
		m.Release()
		if want := map[bool]int{false: 2, true: 0}[keep]; src.recycled != want {
			t.Errorf("keep %v: %d snapshots recycled, want %d", keep, src.recycled, want)
		}
		if keep && first.Process(1) == nil {
			t.Error("a kept snapshot lost its processes")
		}
	}
}

// TestMonitorKeepLast checks that a live view's Monitor keeps the last
// snapshot whole while it gathers the next, and reuses the storage of the
// one before.
func TestMonitorKeepLast(t *testing.T) {
	src := &countingSource{Scanner: NewScanner(fixtureFS(t))}
	m := NewMonitor(FS{}, MonitorConfig{Source: src, KeepLast: true})
	var snaps []*Snapshot
	var firstStorage *Process
	for range 3 {
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
		if len(snaps) == 1 {
			firstStorage = &s.Procs[0]
		}
		if src.recycled != max(len(snaps)-2, 0) {
			t.Fatalf("after gather %d: %d snapshots recycled, want %d", len(snaps), src.recycled, max(len(snaps)-2, 0))
		}
	}
	if snaps[0].Procs != nil || &snaps[2].Procs[0] != firstStorage {
		t.Error("the third gather did not reuse the first's storage")
	}
	if snaps[1].Process(1) == nil || snaps[2].Process(1) == nil {
		t.Error("the last snapshot, or the one before, lost its processes")
	}
	// A view left releases both: neither is shown any more.
	m.Release()
	if src.recycled != 3 {
		t.Errorf("after Release: %d snapshots recycled, want all 3", src.recycled)
	}
}

// TestMonitorRecycledSnapshotPanics checks that a snapshot kept past the
// Monitor's retention fails loudly: its lookups panic with ErrRecycled
// rather than find another scan's processes in the reused storage.
func TestMonitorRecycledSnapshotPanics(t *testing.T) {
	panics := func(s *Snapshot) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err, _ = r.(error)
			}
		}()
		s.Process(1)
		s.Roots()
		return nil
	}
	for _, tc := range []struct {
		name string
		cfg  MonitorConfig
		live []bool // of the first two snapshots once three are gathered
	}{
		{"recycle", MonitorConfig{}, []bool{false, false}},
		{"keep-last", MonitorConfig{KeepLast: true}, []bool{false, true}},
		{"keep", MonitorConfig{Keep: true}, []bool{true, true}},
	} {
		m := NewMonitor(fixtureFS(t), tc.cfg)
		var snaps []*Snapshot
		for range 3 {
			s, err := m.Gather()
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, s)
		}
		for i, live := range tc.live {
			err := panics(snaps[i])
			if live != (err == nil) || err != nil && !errors.Is(err, ErrRecycled) {
				t.Errorf("%s: snapshot %d: %v; want live %v", tc.name, i+1, err, live)
			}
		}
		if err := panics(snaps[2]); err != nil {
			t.Errorf("%s: the last snapshot: %v", tc.name, err)
		}
		m.Release()
		if err := panics(snaps[2]); (err == nil) != tc.cfg.Keep {
			t.Errorf("%s: the last snapshot after Release: %v", tc.name, err)
		}
	}
}

func TestMonitorSampleIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := NewMonitor(fixtureFS(t), MonitorConfig{})
	if _, err := m.Sample(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sample with a cancelled context: %v, want context.Canceled", err)
	}
}

// countingSource is a Scanner that records the fields of each scan and
// counts the snapshots handed back.
type countingSource struct {
	*Scanner
	scans    []Fields
	recycled int
}

func (s *countingSource) SnapshotSelect(f Fields, sel Selector) (*Snapshot, error) {
	s.scans = append(s.scans, f)
	return s.Scanner.SnapshotSelect(f, sel)
}

func (s *countingSource) Recycle(snap *Snapshot) {
	s.recycled++
	s.Scanner.Recycle(snap)
}

// SetFields changes what the next gather reads of every process.
func TestMonitorSetFields(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(fs, MonitorConfig{NoRates: true})
	snap, err := m.Gather()
	if err != nil || snap.Fields != 0 || snap.Process(111).Read&FieldCmdline != 0 {
		t.Fatalf("before: fields %v, err %v", snap.Fields, err)
	}
	m.SetFields(FieldCmdline)
	snap, err = m.Gather()
	if err != nil || snap.Fields != FieldCmdline || snap.Process(111).Read&FieldCmdline == 0 {
		t.Errorf("after SetFields(cmdline): fields %v, 111 read %v, err %v", snap.Fields, snap.Process(111).Read, err)
	}
}

// TestMonitorReadMoreRates checks that io and smaps_rollup read after the
// scan get rates from the Monitor's one Sampler, from the second gather
// that reads them on; that processes of an older snapshot are read but
// leave the last one's samples alone; and that NoRates measures nothing.
func TestMonitorReadMoreRates(t *testing.T) {
	clock := &stepClock{t: time.Unix(1800000000, 0), step: 2 * time.Second}
	m := NewMonitor(fixtureFS(t), MonitorConfig{Clock: clock, KeepLast: true})
	first, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ReadMore([]*Process{first.Process(1)}, FieldIO|FieldSmaps); err != nil {
		t.Fatal(err)
	}
	second, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	p := second.Process(1)
	if !p.Rates.Measured || p.Rates.HaveIO || p.Rates.HaveSmaps {
		t.Fatalf("pid 1 before its late read: %+v; want CPU measured alone", p.Rates)
	}
	// The older snapshot's process is not the last one's: its counters
	// (made to differ here) must not become the last one's samples.
	first.Process(1).IO.ReadBytes += 4000
	if err := m.ReadMore([]*Process{first.Process(1)}, FieldIO); err != nil {
		t.Fatal(err)
	}
	if p.Rates.HaveIO {
		t.Fatal("a read of the older snapshot's pid 1 set the last one's rates")
	}
	if err := m.ReadMore([]*Process{p, second.Process(100)}, FieldIO|FieldSmaps); err != nil {
		t.Fatal(err)
	}
	// The fixture's counters do not move: measured, at 0.
	if r := p.Rates; !r.HaveIO || !r.HaveSmaps || r.IntervalSeconds != 2 || r.ReadBytesPerSecond != 0 || r.USSGrowthBytesPerMinute != 0 {
		t.Errorf("pid 1 read late twice: %+v; want io and smaps rates measured over 2s", r)
	}
	if r := second.Process(100).Rates; r.HaveIO || r.HaveSmaps {
		t.Errorf("pid 100, read late once: %+v; want no io or smaps rates", r)
	}

	quiet := NewMonitor(fixtureFS(t), MonitorConfig{Clock: clock, NoRates: true})
	for range 2 {
		s, err := quiet.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if err := quiet.ReadMore([]*Process{s.Process(1)}, FieldIO); err != nil {
			t.Fatal(err)
		}
		if r := s.Process(1).Rates; r != (Rates{}) {
			t.Errorf("NoRates: pid 1 has %+v", r)
		}
	}
}
