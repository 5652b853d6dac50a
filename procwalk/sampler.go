//go:build linux

package procwalk

import (
	"cmp"
	"slices"
	"time"
)

// Rates are per-process rates between two snapshots, filled by a Sampler.
// Nothing is measured on the first sight of a process: Measured is false and
// every rate is zero, which callers must not print as a measured zero.
//
// The three flags sit together at the end, so that the struct has no
// padding: every Process holds one (64 bytes, not 80).
type Rates struct {
	IntervalSeconds float64
	CPUPercent      float64 // of one core: 200 means two cores busy

	// IO rates, when io was read in both snapshots (HaveIO).
	ReadBytesPerSecond  float64
	WriteBytesPerSecond float64

	// Memory growth; negative when memory shrinks. PSS/USS only when smaps
	// was read in both snapshots (HaveSmaps).
	RSSGrowthBytesPerMinute float64
	PSSGrowthBytesPerMinute float64
	USSGrowthBytesPerMinute float64

	Measured, HaveIO, HaveSmaps bool
}

// Sampler turns consecutive snapshots into rates. It remembers the last
// counters of each ProcID, so a reused pid (new start time) starts afresh
// instead of producing a bogus rate. The caller owns it; one per stream of
// snapshots. The zero value is ready to use.
type Sampler struct {
	// prev holds the last snapshot's samples in ProcID order; next is the
	// other buffer, reused. Two sorted arrays take about half the memory
	// of two maps (execd keeps them for every process between gathers),
	// and a snapshot's processes come in pid order already.
	prev, next []sample
	prevTime   time.Time
	// Until the next Observe, next still holds the samples of the
	// snapshot before prev's, taken at olderTime (zero: none): ObserveMore
	// measures against them.
	olderTime time.Time
}

// sample is what a Sampler keeps of one process between snapshots: CPU in
// seconds, everything else in bytes.
type sample struct {
	id                    ProcID
	cpuSeconds            float64
	readBytes, writeBytes uint64
	rss, pss, uss         uint64
	haveIO, haveSmaps     bool
}

func compareSamples(a, b sample) int { return compareIDs(a.id, b.id) }

func compareIDs(a, b ProcID) int {
	if c := cmp.Compare(a.PID, b.PID); c != 0 {
		return c
	}
	return cmp.Compare(a.StartTicks, b.StartTicks)
}

// Observe sets Rates on every process of s that was also in the previous
// snapshot given to Observe, then remembers s. Snapshots must be given in
// time order.
func (sm *Sampler) Observe(s *Snapshot) {
	dt := s.Time.Sub(sm.prevTime).Seconds()
	next := sm.next[:0]
	if cap(next) < len(s.Procs) {
		next = make([]sample, 0, len(s.Procs)+len(s.Procs)/16) // room for a few more next time
	}
	j := 0 // cursor in sm.prev, for find
	for i := range s.Procs {
		p := &s.Procs[i]
		cur := sample{
			id:         p.ID,
			cpuSeconds: p.CPUSeconds(),
			readBytes:  p.IO.ReadBytes, writeBytes: p.IO.WriteBytes,
			rss: p.RSSBytes, pss: p.Smaps.PSSBytes, uss: p.Smaps.USSBytes,
			haveIO: p.Read&FieldIO != 0, haveSmaps: p.Read&FieldSmaps != 0,
		}
		next = append(next, cur)
		old := sm.find(p.ID, &j)
		p.Rates = Rates{}
		if old == nil || dt <= 0 || cur.cpuSeconds < old.cpuSeconds {
			continue
		}
		r := Rates{Measured: true, IntervalSeconds: dt}
		r.CPUPercent = (cur.cpuSeconds - old.cpuSeconds) / dt * 100
		r.RSSGrowthBytesPerMinute = (float64(cur.rss) - float64(old.rss)) / dt * 60
		if cur.haveIO && old.haveIO && cur.readBytes >= old.readBytes && cur.writeBytes >= old.writeBytes {
			r.HaveIO = true
			r.ReadBytesPerSecond = float64(cur.readBytes-old.readBytes) / dt
			r.WriteBytesPerSecond = float64(cur.writeBytes-old.writeBytes) / dt
		}
		if cur.haveSmaps && old.haveSmaps {
			r.HaveSmaps = true
			r.PSSGrowthBytesPerMinute = (float64(cur.pss) - float64(old.pss)) / dt * 60
			r.USSGrowthBytesPerMinute = (float64(cur.uss) - float64(old.uss)) / dt * 60
		}
		p.Rates = r
	}
	if !slices.IsSortedFunc(next, compareSamples) {
		slices.SortFunc(next, compareSamples) // a snapshot built by hand, not in pid order
	}
	sm.prev, sm.next = next, sm.prev
	sm.olderTime, sm.prevTime = sm.prevTime, s.Time
}

// ObserveMore adds to the last snapshot given to Observe the fields f of
// procs read after it (a Monitor's ReadMore: the rows on screen, a
// session's members), and sets their rates of those fields against the
// snapshot before, where that read them too (by its scan or by a
// ObserveMore of its own). The rates are over the two snapshots' interval:
// a late read comes at about the same point after each scan. procs must
// belong to the last snapshot given to Observe.
func (sm *Sampler) ObserveMore(procs []*Process, f Fields) {
	f &= FieldIO | FieldSmaps
	if f == 0 {
		return
	}
	dt := sm.prevTime.Sub(sm.olderTime).Seconds()
	older := sm.next
	if sm.olderTime.IsZero() {
		older = nil
	}
	for _, p := range procs {
		cur := findSample(sm.prev, p.ID)
		if cur == nil {
			continue // not in the last snapshot observed
		}
		if f&FieldIO != 0 && p.Read&FieldIO != 0 && !cur.haveIO {
			cur.readBytes, cur.writeBytes, cur.haveIO = p.IO.ReadBytes, p.IO.WriteBytes, true
		}
		if f&FieldSmaps != 0 && p.Read&FieldSmaps != 0 && !cur.haveSmaps {
			cur.pss, cur.uss, cur.haveSmaps = p.Smaps.PSSBytes, p.Smaps.USSBytes, true
		}
		old := findSample(older, p.ID)
		if old == nil || dt <= 0 || !p.Rates.Measured {
			continue
		}
		r := &p.Rates
		if !r.HaveIO && cur.haveIO && old.haveIO && cur.readBytes >= old.readBytes && cur.writeBytes >= old.writeBytes {
			r.HaveIO = true
			r.ReadBytesPerSecond = float64(cur.readBytes-old.readBytes) / dt
			r.WriteBytesPerSecond = float64(cur.writeBytes-old.writeBytes) / dt
		}
		if !r.HaveSmaps && cur.haveSmaps && old.haveSmaps {
			r.HaveSmaps = true
			r.PSSGrowthBytesPerMinute = (float64(cur.pss) - float64(old.pss)) / dt * 60
			r.USSGrowthBytesPerMinute = (float64(cur.uss) - float64(old.uss)) / dt * 60
		}
	}
}

// findSample returns the sample of id in samples (in ProcID order), or nil.
func findSample(samples []sample, id ProcID) *sample {
	if i, ok := slices.BinarySearchFunc(samples, id, func(s sample, id ProcID) int { return compareIDs(s.id, id) }); ok {
		return &samples[i]
	}
	return nil
}

// find returns the previous sample of id, or nil. A snapshot's processes
// come in ProcID order, as sm.prev does, so the cursor *j only moves
// forward and finds each in turn; an id out of that order (a snapshot built
// by hand) is looked for by binary search.
func (sm *Sampler) find(id ProcID, j *int) *sample {
	prev := sm.prev
	if *j > 0 && compareIDs(prev[*j-1].id, id) >= 0 {
		return findSample(prev, id)
	}
	for *j < len(prev) && compareIDs(prev[*j].id, id) < 0 {
		*j++
	}
	if *j < len(prev) && prev[*j].id == id {
		*j++
		return &prev[*j-1]
	}
	return nil
}
