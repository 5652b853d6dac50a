//go:build linux

package procwalk

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestMetricNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, d := range Metrics() {
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			if other, dup := seen[n]; dup {
				t.Errorf("%q names both %s and %s", n, other, d.Name)
			}
			seen[n] = d.Name
		}
		if d.Label == "" || d.Type == 0 || d.Help == "" || d.value == nil {
			t.Errorf("%s lacks a label, type, help or value", d.Name)
		}
		if d.Type == Rate && d.Unit != "percent" && d.Unit != "bytes/s" && d.Unit != "bytes/min" {
			t.Errorf("rate %s in %q: a rate is per time", d.Name, d.Unit)
		}
	}
}

func TestLookupMetric(t *testing.T) {
	for name, want := range map[string]string{
		"rss": "rss_bytes", "RSS_BYTES": "rss_bytes", " cpu ": "cpu_percent", "time": "cpu_time_seconds",
		"growth": "rss_growth_bytes_per_minute", "read_rate": "read_bytes_per_second", "euid": "uid",
	} {
		if d, ok := LookupMetric(name); !ok || d.Name != want {
			t.Errorf("LookupMetric(%q) = %s, %v; want %s", name, d.Name, ok, want)
		}
	}
	if _, ok := LookupMetric("size"); ok {
		t.Error(`LookupMetric("size") found a metric`)
	}
}

// TestMetricAbsentIsNotZero: a value not read, denied or not measured is
// absent, whatever zero the Process holds in its place.
func TestMetricAbsentIsNotZero(t *testing.T) {
	s := &Snapshot{Time: time.Unix(1000, 0)}
	p := &Process{ID: ProcID{PID: 7}, Start: time.Unix(400, 0), RSSBytes: 4096}
	for _, name := range []string{"uid", "ruid", "pss_bytes", "uss_bytes", "swap_bytes", "fds", "oom_score",
		"cpu_percent", "read_bytes", "read_bytes_per_second", "rss_growth_bytes_per_minute", "pss_growth_bytes_per_minute"} {
		d, _ := LookupMetric(name)
		if v, ok := d.Value(s, p); ok {
			t.Errorf("%s of a process that read nothing = %v, want absent", name, v)
		}
	}
	p.Read = FieldSmaps | FieldIO
	p.Smaps.PSSBytes = 1024
	p.Rates = Rates{Measured: true, CPUPercent: 12.5}
	for name, want := range map[string]float64{"pss_bytes": 1024, "read_bytes": 0, "cpu_percent": 12.5, "rss_bytes": 4096, "age_seconds": 600} {
		d, _ := LookupMetric(name)
		if v, ok := d.Value(s, p); !ok || v != want {
			t.Errorf("%s = %v, %v; want %v", name, v, ok, want)
		}
	}
	d, _ := LookupMetric("read_bytes_per_second")
	if _, ok := d.Value(s, p); ok {
		t.Error("an IO rate without HaveIO is present")
	}
}

// TestTopNFollowsTheOneRule: larger first, absent last, ties by lower pid;
// TopN's top equals the head of the full sort.
func TestTopNFollowsTheOneRule(t *testing.T) {
	s := &Snapshot{}
	mk := func(pid int, pss uint64, read bool) *Process {
		p := &Process{ID: ProcID{PID: pid}, RSSBytes: 1 << 30}
		if read {
			p.Read = FieldSmaps
			p.Smaps.PSSBytes = pss
		}
		return p
	}
	procs := []*Process{mk(9, 100, true), mk(3, 0, false), mk(5, 300, true), mk(4, 100, true), mk(2, 0, true), mk(1, 0, false)}
	pss, _ := LookupMetric("pss")
	pids := func(ps []*Process) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.ID.PID)
		}
		return out
	}
	sorted := slices.Clone(procs)
	SortByMetric(s, sorted, pss)
	if got, want := pids(sorted), []int{5, 4, 9, 2, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("sorted by pss: %v, want %v (unread PSS last, never ranked as RSS or 0)", got, want)
	}
	for n := 0; n <= len(procs)+1; n++ {
		top := TopN(s, slices.Clone(procs), n, pss)
		if want := pids(sorted)[:min(n, len(procs))]; !slices.Equal(pids(top), want) {
			t.Errorf("TopN %d = %v, want %v", n, pids(top), want)
		}
	}
}

// TestSortByMetricOrder checks SortByMetric against compareByMetric, the
// comparison TopN uses, on values full of ties, signed zeros, NaN,
// infinities, negative numbers and processes without a value, given in a
// shuffled order: sorted by compareByMetric, ties by pid (NaNs, which
// compare equal to each other, too).
func TestSortByMetricOrder(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, 1, 2.5, -3, math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e-300, 4096, 4096}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		n := rng.IntN(300)
		procs := make([]Process, n)
		value := map[int]float64{}
		missing := map[int]bool{}
		for i := range procs {
			pid := i*3 + 1
			procs[i].ID.PID = pid
			if rng.IntN(7) == 0 {
				missing[pid] = true
			} else {
				value[pid] = values[rng.IntN(len(values))]
			}
		}
		d := MetricDesc{Name: "test", value: func(_ *Snapshot, p *Process) (float64, bool) {
			return value[p.ID.PID], !missing[p.ID.PID]
		}}
		ptrs := make([]*Process, n)
		for i := range procs {
			ptrs[i] = &procs[i]
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(i, j int) { ptrs[i], ptrs[j] = ptrs[j], ptrs[i] })
		}
		SortByMetric(nil, ptrs, d)
		seen := map[int]bool{}
		for i, p := range ptrs {
			seen[p.ID.PID] = true
			if i == 0 {
				continue
			}
			c := compareByMetric(nil, &d, ptrs[i-1], p)
			if c > 0 || c == 0 && ptrs[i-1].ID.PID > p.ID.PID {
				t.Fatalf("round %d: pid %d (%v, %v) before pid %d (%v, %v)", round, ptrs[i-1].ID.PID, value[ptrs[i-1].ID.PID], !missing[ptrs[i-1].ID.PID], p.ID.PID, value[p.ID.PID], !missing[p.ID.PID])
			}
		}
		if len(seen) != n {
			t.Fatalf("round %d: %d distinct processes after sorting, want %d", round, len(seen), n)
		}
	}
}

// cpu_time_seconds is whole clock ticks: user plus system time summed as
// floats prints noise Telegraf and JSON would show.
func TestCPUTimeSecondsIsTicks(t *testing.T) {
	p := Process{UserCPUSeconds: 2.0 / 100, SystemCPUSeconds: 374.0 / 100} // 2 and 374 ticks
	if noisy := strconv.FormatFloat(p.CPUSeconds(), 'f', -1, 64); noisy != "3.7600000000000002" {
		t.Fatalf("the sum is %s: this test no longer shows the noise", noisy)
	}
	s := NewSnapshot(Host{ClockTicks: 100}, 0, 0, []Process{p}, Visibility{})
	d, _ := LookupMetric("cpu_time_seconds")
	v, ok := d.Value(s, &s.Procs[0])
	if got := strconv.FormatFloat(v, 'f', -1, 64); !ok || got != "3.76" {
		t.Errorf("cpu_time_seconds = %s, %v; want 3.76", got, ok)
	}
	h := Host{}
	if got := h.RoundToTicks(p.CPUSeconds()); got != p.CPUSeconds() {
		t.Errorf("unknown ClockTicks: got %v, want the value unchanged", got)
	}
}
