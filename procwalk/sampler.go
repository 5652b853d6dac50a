package procwalk

import "time"

// Rates are per-process rates between two snapshots, filled by a Sampler.
// Nothing is measured on the first sight of a process: Measured is false and
// every rate is zero, which callers must not print as a measured zero.
type Rates struct {
	Measured        bool
	IntervalSeconds float64
	CPUPercent      float64 // of one core: 200 means two cores busy

	// IO rates, when io was read in both snapshots (HaveIO).
	HaveIO              bool
	ReadBytesPerSecond  float64
	WriteBytesPerSecond float64

	// Memory growth; negative when memory shrinks. PSS/USS only when smaps
	// was read in both snapshots (HaveSmaps).
	RSSGrowthBytesPerMinute float64
	HaveSmaps               bool
	PSSGrowthBytesPerMinute float64
	USSGrowthBytesPerMinute float64
}

// Sampler turns consecutive snapshots into rates. It remembers the last
// counters of each ProcID, so a reused pid (new start time) starts afresh
// instead of producing a bogus rate. The caller owns it; one per stream of
// snapshots. The zero value is ready to use.
type Sampler struct {
	prev, next map[ProcID]sample
	prevTime   time.Time
}

// sample is what a Sampler keeps of one process between snapshots: CPU in
// seconds, everything else in bytes.
type sample struct {
	cpuSeconds            float64
	readBytes, writeBytes uint64
	rss, pss, uss         uint64
	haveIO, haveSmaps     bool
}

// Observe sets Rates on every process of s that was also in the previous
// snapshot given to Observe, then remembers s. Snapshots must be given in
// time order.
func (sm *Sampler) Observe(s *Snapshot) {
	if sm.next == nil {
		// Sized at once: grown entry by entry, each map would leave its
		// smaller copies to the garbage collector in the first gathers.
		sm.prev, sm.next = make(map[ProcID]sample, len(s.Procs)), make(map[ProcID]sample, len(s.Procs))
	}
	dt := s.Time.Sub(sm.prevTime).Seconds()
	clear(sm.next)
	for i := range s.Procs {
		p := &s.Procs[i]
		cur := sample{
			cpuSeconds: p.CPUSeconds(),
			readBytes:  p.IO.ReadBytes, writeBytes: p.IO.WriteBytes,
			rss: p.RSSBytes, pss: p.Smaps.PSSBytes, uss: p.Smaps.USSBytes,
			haveIO: p.Read&FieldIO != 0, haveSmaps: p.Read&FieldSmaps != 0,
		}
		sm.next[p.ID] = cur
		old, ok := sm.prev[p.ID]
		p.Rates = Rates{}
		if !ok || dt <= 0 || cur.cpuSeconds < old.cpuSeconds {
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
	sm.prev, sm.next = sm.next, sm.prev
	sm.prevTime = s.Time
}
