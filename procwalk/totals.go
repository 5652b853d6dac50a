//go:build linux

package procwalk

// Totals sums a set of processes. RSSBytes over-counts pages shared between
// members (shared libraries, shared memory); PSSBytes does not, and is the
// honest sum when smaps was read (HavePSS).
type Totals struct {
	Procs      int
	Threads    int
	Zombies    int
	RSSBytes   uint64
	PSSBytes   uint64
	USSBytes   uint64
	SwapBytes  uint64
	CPUSeconds float64 // user + system of the members themselves
	ReadBytes  uint64
	WriteBytes uint64

	// Rates over the members that have one (see Rates.Measured).
	CPUPercent          float64
	ReadBytesPerSecond  float64
	WriteBytesPerSecond float64
	RatesMeasured       int // members with rates

	// Members whose PSS/USS (smaps) or IO was read; fewer than Procs means
	// those sums are partial.
	SmapsRead int
	IORead    int
}

// AddSmaps counts p's PSS and USS in t when they were read: Add does it,
// and a caller that read smaps_rollup after summing (Monitor.ReadMore, for
// the members it shows) calls it for those, which had none when added.
func (t *Totals) AddSmaps(p *Process) {
	if p.Read&FieldSmaps != 0 {
		t.PSSBytes += p.Smaps.PSSBytes
		t.USSBytes += p.Smaps.USSBytes
		t.SmapsRead++
	}
}

// Add counts p in t.
func (t *Totals) Add(p *Process) {
	t.Procs++
	t.Threads += p.Threads
	if p.Zombie() {
		t.Zombies++
	}
	t.RSSBytes += p.RSSBytes
	t.SwapBytes += p.SwapBytes
	t.CPUSeconds += p.CPUSeconds()
	t.AddSmaps(p)
	if p.Read&FieldIO != 0 {
		t.ReadBytes += p.IO.ReadBytes
		t.WriteBytes += p.IO.WriteBytes
		t.IORead++
	}
	if r := p.Rates; r.Measured {
		t.RatesMeasured++
		t.CPUPercent += r.CPUPercent
		t.ReadBytesPerSecond += r.ReadBytesPerSecond
		t.WriteBytesPerSecond += r.WriteBytesPerSecond
	}
}
