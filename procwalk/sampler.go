//go:build linux

package procwalk

import (
	"cmp"
	"slices"
	"sort"
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
	prev, next samples
	prevTime   time.Time
	// Until the next Observe, next still holds the samples of the
	// snapshot before prev's, taken at olderTime (zero: none): ObserveMore
	// measures against them.
	olderTime time.Time
}

// samples are what a Sampler keeps of one snapshot's processes, in ProcID
// order, as parallel arrays: what every process has in procs, io and smaps
// counters in arrays of their own, allocated once a process of the
// snapshot has them. A daemon reads neither by default, and keeps two
// snapshots' samples between gathers: 32 bytes a process each, not 72 (at
// 10,000 processes, 0.8 MB of execd's 20 MiB).
type samples struct {
	procs []sample
	io    []ioSample    // len(procs) once a process has io, else empty
	smaps []smapsSample // len(procs) once a process has smaps, else empty
}

// sample is what every process has: CPU in seconds, RSS in bytes, and
// whether its io and smaps were read. pid is the ProcID's, in 32 bits as
// the kernel's pids are (pid_max is at most 2^22).
type sample struct {
	pid        int32
	have       Fields // FieldIO, FieldSmaps: read for this process
	startTicks uint64
	cpuSeconds float64
	rss        uint64
}

type ioSample struct{ readBytes, writeBytes uint64 }

type smapsSample struct{ pss, uss uint64 }

func (s *sample) id() ProcID { return ProcID{PID: int(s.pid), StartTicks: s.startTicks} }

// compareSample orders a sample against a ProcID.
func compareSample(s *sample, id ProcID) int {
	if c := cmp.Compare(int(s.pid), id.PID); c != 0 {
		return c
	}
	return cmp.Compare(s.startTicks, id.StartTicks)
}

// reset empties ss for n samples, keeping its storage where it holds them
// (with room for a few more next time where it does not).
func (ss *samples) reset(n int) {
	if cap(ss.procs) < n {
		ss.procs = make([]sample, 0, n+n/16)
	}
	ss.procs = ss.procs[:0]
	ss.io, ss.smaps = ss.io[:0], ss.smaps[:0]
}

// add appends p's sample, with its io and smaps counters where it has them.
func (ss *samples) add(p *Process) {
	i := len(ss.procs)
	have := p.Read & (FieldIO | FieldSmaps)
	ss.procs = append(ss.procs, sample{pid: int32(p.ID.PID), have: have, startTicks: p.ID.StartTicks, cpuSeconds: p.CPUSeconds(), rss: p.RSSBytes})
	if have&FieldIO != 0 || len(ss.io) > 0 {
		ss.io = extend(ss.io, i+1, cap(ss.procs))
		ss.io[i] = ioSample{p.IO.ReadBytes, p.IO.WriteBytes}
	}
	if have&FieldSmaps != 0 || len(ss.smaps) > 0 {
		ss.smaps = extend(ss.smaps, i+1, cap(ss.procs))
		ss.smaps[i] = smapsSample{p.Smaps.PSSBytes, p.Smaps.USSBytes}
	}
}

// extend returns s with length n, new elements zero, allocating capHint
// when it must grow.
func extend[T any](s []T, n, capHint int) []T {
	if n <= len(s) {
		return s
	}
	if n > cap(s) {
		s = append(make([]T, 0, max(n, capHint)), s...)
	}
	old := len(s)
	s = s[:n]
	clear(s[old:])
	return s
}

// io returns the io counters of the i-th sample (zero when none were read).
func (ss *samples) ioAt(i int) ioSample {
	if i < len(ss.io) {
		return ss.io[i]
	}
	return ioSample{}
}

func (ss *samples) smapsAt(i int) smapsSample {
	if i < len(ss.smaps) {
		return ss.smaps[i]
	}
	return smapsSample{}
}

// search returns the index of id in ss, or -1.
func (ss *samples) search(id ProcID) int {
	if i, ok := slices.BinarySearchFunc(ss.procs, id, func(s sample, id ProcID) int { return compareSample(&s, id) }); ok {
		return i
	}
	return -1
}

// sortSamples orders ss by ProcID, its arrays together (a snapshot built
// by hand, not in pid order).
type sortSamples struct{ *samples }

func (s sortSamples) Len() int { return len(s.procs) }
func (s sortSamples) Less(i, j int) bool {
	return compareSample(&s.procs[i], s.procs[j].id()) < 0
}
func (s sortSamples) Swap(i, j int) {
	s.procs[i], s.procs[j] = s.procs[j], s.procs[i]
	if len(s.io) > 0 {
		s.io[i], s.io[j] = s.io[j], s.io[i]
	}
	if len(s.smaps) > 0 {
		s.smaps[i], s.smaps[j] = s.smaps[j], s.smaps[i]
	}
}

// Observe sets Rates on every process of s that was also in the previous
// snapshot given to Observe, then remembers s. Snapshots must be given in
// time order.
func (sm *Sampler) Observe(s *Snapshot) {
	dt := s.Time.Sub(sm.prevTime).Seconds()
	next := &sm.next
	next.reset(len(s.Procs))
	prev := &sm.prev
	j := 0 // cursor in sm.prev, for find
	for i := range s.Procs {
		p := &s.Procs[i]
		p.Rates = Rates{}
		if int(int32(p.ID.PID)) != p.ID.PID {
			continue // no kernel gives such a pid: a snapshot built by hand gets no rate
		}
		next.add(p)
		o := sm.find(p.ID, &j)
		cur := &next.procs[len(next.procs)-1]
		if o < 0 || dt <= 0 || cur.cpuSeconds < prev.procs[o].cpuSeconds {
			continue
		}
		old := &prev.procs[o]
		r := Rates{Measured: true, IntervalSeconds: dt}
		r.CPUPercent = (cur.cpuSeconds - old.cpuSeconds) / dt * 100
		r.RSSGrowthBytesPerMinute = (float64(cur.rss) - float64(old.rss)) / dt * 60
		if cur.have&old.have&FieldIO != 0 {
			c, o := next.ioAt(len(next.procs)-1), prev.ioAt(o)
			if c.readBytes >= o.readBytes && c.writeBytes >= o.writeBytes {
				r.HaveIO = true
				r.ReadBytesPerSecond = float64(c.readBytes-o.readBytes) / dt
				r.WriteBytesPerSecond = float64(c.writeBytes-o.writeBytes) / dt
			}
		}
		if cur.have&old.have&FieldSmaps != 0 {
			c, o := next.smapsAt(len(next.procs)-1), prev.smapsAt(o)
			r.HaveSmaps = true
			r.PSSGrowthBytesPerMinute = (float64(c.pss) - float64(o.pss)) / dt * 60
			r.USSGrowthBytesPerMinute = (float64(c.uss) - float64(o.uss)) / dt * 60
		}
		p.Rates = r
	}
	if !slices.IsSortedFunc(next.procs, func(a, b sample) int { return compareSample(&a, b.id()) }) {
		sort.Sort(sortSamples{next})
	}
	sm.prev, sm.next = sm.next, sm.prev
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
	cur, older := &sm.prev, &sm.next
	if sm.olderTime.IsZero() {
		older = &samples{}
	}
	for _, p := range procs {
		i := cur.search(p.ID)
		if i < 0 {
			continue // not in the last snapshot observed
		}
		c := &cur.procs[i]
		if f&FieldIO != 0 && p.Read&FieldIO != 0 && c.have&FieldIO == 0 {
			cur.io = extend(cur.io, len(cur.procs), len(cur.procs))
			cur.io[i] = ioSample{p.IO.ReadBytes, p.IO.WriteBytes}
			c.have |= FieldIO
		}
		if f&FieldSmaps != 0 && p.Read&FieldSmaps != 0 && c.have&FieldSmaps == 0 {
			cur.smaps = extend(cur.smaps, len(cur.procs), len(cur.procs))
			cur.smaps[i] = smapsSample{p.Smaps.PSSBytes, p.Smaps.USSBytes}
			c.have |= FieldSmaps
		}
		o := older.search(p.ID)
		if o < 0 || dt <= 0 || !p.Rates.Measured {
			continue
		}
		old := &older.procs[o]
		r := &p.Rates
		if !r.HaveIO && c.have&old.have&FieldIO != 0 {
			c, o := cur.ioAt(i), older.ioAt(o)
			if c.readBytes >= o.readBytes && c.writeBytes >= o.writeBytes {
				r.HaveIO = true
				r.ReadBytesPerSecond = float64(c.readBytes-o.readBytes) / dt
				r.WriteBytesPerSecond = float64(c.writeBytes-o.writeBytes) / dt
			}
		}
		if !r.HaveSmaps && c.have&old.have&FieldSmaps != 0 {
			c, o := cur.smapsAt(i), older.smapsAt(o)
			r.HaveSmaps = true
			r.PSSGrowthBytesPerMinute = (float64(c.pss) - float64(o.pss)) / dt * 60
			r.USSGrowthBytesPerMinute = (float64(c.uss) - float64(o.uss)) / dt * 60
		}
	}
}

// find returns the index in sm.prev of id's previous sample, or -1. A
// snapshot's processes come in ProcID order, as sm.prev does, so the
// cursor *j only moves forward and finds each in turn; an id out of that
// order (a snapshot built by hand) is looked for by binary search.
func (sm *Sampler) find(id ProcID, j *int) int {
	prev := sm.prev.procs
	if *j > 0 && compareSample(&prev[*j-1], id) >= 0 {
		return sm.prev.search(id)
	}
	for *j < len(prev) && compareSample(&prev[*j], id) < 0 {
		*j++
	}
	if *j < len(prev) && compareSample(&prev[*j], id) == 0 {
		*j++
		return *j - 1
	}
	return -1
}
