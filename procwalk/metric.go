//go:build linux

package procwalk

import (
	"cmp"
	"slices"
	"strings"
)

// metric.go is the metric catalogue: every numeric value procwalk measures
// of a process, once, with its name, unit, type, the /proc files it needs
// and how to get it. ps columns and sort keys, JSON, Telegraf fields,
// Lua fields and top-N rankings are views of this table, so a name, a unit
// or the rule for a value that was not measured cannot drift between them.

// MetricType says how a metric's values behave over time.
type MetricType uint8

const (
	Gauge   MetricType = iota + 1 // a level now: memory, threads, age
	Counter                       // grows over the process's life: CPU time, bytes read
	Rate                          // a counter's change over time between two gathers
)

func (t MetricType) String() string {
	switch t {
	case Gauge:
		return "gauge"
	case Counter:
		return "counter"
	case Rate:
		return "rate"
	}
	return "unknown"
}

// MetricDesc describes one metric of a process.
type MetricDesc struct {
	// Name is the metric's one name in every output (JSON, Telegraf, Lua):
	// snake_case, ending in its unit.
	Name string
	// Aliases are short names accepted wherever a name is (ps --columns
	// and --sort, Lua fields, Telegraf's process_by), e.g. "rss".
	Aliases []string
	Label   string // a column heading, e.g. "RSS"
	Unit    string // bytes, seconds, percent, bytes/s, bytes/min, or "" for a count or id
	Type    MetricType
	// Integer values are whole numbers (bytes, ids, counts): Telegraf
	// writes them as integers, and their field type never changes.
	Integer bool
	// Needs are the optional fields read for it; stat and statm are always
	// read. Rates need two gathers besides (Type Rate).
	Needs Fields
	Help  string

	value func(s *Snapshot, p *Process) (float64, bool)
}

// Value is the metric of p as seen in s, and false when it is absent: not
// read, denied, or (for a rate) not measured yet. Absent is never 0.
func (d *MetricDesc) Value(s *Snapshot, p *Process) (float64, bool) { return d.value(s, p) }

// Is reports whether name is the metric's name or one of its aliases.
func (d *MetricDesc) Is(name string) bool {
	return d.Name == name || slices.Contains(d.Aliases, name)
}

// Metrics returns the catalogue of process metrics, in the order outputs
// list them.
func Metrics() []MetricDesc {
	read := func(p *Process, f Fields) bool { return p.Read&f != 0 }
	always := func(v func(*Process) float64) func(*Snapshot, *Process) (float64, bool) {
		return func(_ *Snapshot, p *Process) (float64, bool) { return v(p), true }
	}
	rate := func(ok func(r *Rates) bool, v func(r *Rates) float64) func(*Snapshot, *Process) (float64, bool) {
		return func(_ *Snapshot, p *Process) (float64, bool) {
			r := &p.Rates
			return v(r), r.Measured && ok(r)
		}
	}
	measured := func(*Rates) bool { return true }
	haveIO := func(r *Rates) bool { return r.HaveIO }
	haveSmaps := func(r *Rates) bool { return r.HaveSmaps }
	return []MetricDesc{
		{Name: "pid", Label: "PID", Type: Gauge, Integer: true, Help: "process id",
			value: always(func(p *Process) float64 { return float64(p.ID.PID) })},
		{Name: "ppid", Label: "PPID", Type: Gauge, Integer: true, Help: "parent process id",
			value: always(func(p *Process) float64 { return float64(p.PPID) })},
		{Name: "pgrp", Label: "PGRP", Type: Gauge, Integer: true, Help: "process group id",
			value: always(func(p *Process) float64 { return float64(p.PGRP) })},
		{Name: "sid", Label: "SID", Type: Gauge, Integer: true, Help: "session id (setsid)",
			value: always(func(p *Process) float64 { return float64(p.SID) })},
		{Name: "tty_nr", Aliases: []string{"tty"}, Label: "TTY", Type: Gauge, Integer: true, Help: "controlling terminal's device number, 0 for none",
			value: always(func(p *Process) float64 { return float64(p.TTY) })},
		{Name: "uid", Aliases: []string{"euid"}, Label: "UID", Type: Gauge, Integer: true, Needs: FieldStatus, Help: "effective user id, as ps(1) shows",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.EffectiveUID), read(p, FieldStatus) }},
		{Name: "ruid", Label: "RUID", Type: Gauge, Integer: true, Needs: FieldStatus, Help: "real user id (user sessions group by it)",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.RealUID), read(p, FieldStatus) }},
		{Name: "threads", Label: "THR", Type: Gauge, Integer: true, Help: "thread count",
			value: always(func(p *Process) float64 { return float64(p.Threads) })},
		{Name: "rss_bytes", Aliases: []string{"rss"}, Label: "RSS", Unit: "bytes", Type: Gauge, Integer: true,
			Help:  "resident memory (statm); counts shared pages in every process mapping them",
			value: always(func(p *Process) float64 { return float64(p.RSSBytes) })},
		{Name: "pss_bytes", Aliases: []string{"pss"}, Label: "PSS", Unit: "bytes", Type: Gauge, Integer: true, Needs: FieldSmaps,
			Help:  "proportional set size (smaps_rollup): shared pages split between their users; sums without double-counting",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.Smaps.PSSBytes), read(p, FieldSmaps) }},
		{Name: "uss_bytes", Aliases: []string{"uss"}, Label: "USS", Unit: "bytes", Type: Gauge, Integer: true, Needs: FieldSmaps,
			Help:  "unique set size (smaps_rollup): memory freed if the process exits",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.Smaps.USSBytes), read(p, FieldSmaps) }},
		{Name: "swap_bytes", Aliases: []string{"swap"}, Label: "SWAP", Unit: "bytes", Type: Gauge, Integer: true, Needs: FieldStatus,
			Help: "swapped-out memory (status VmSwap, or smaps_rollup Swap when read)",
			value: func(_ *Snapshot, p *Process) (float64, bool) {
				return float64(p.SwapBytes), read(p, FieldStatus|FieldSmaps)
			}},
		{Name: "vsize_bytes", Aliases: []string{"vsize"}, Label: "VSZ", Unit: "bytes", Type: Gauge, Integer: true, Help: "virtual memory size",
			value: always(func(p *Process) float64 { return float64(p.VSizeBytes) })},
		{Name: "shared_bytes", Aliases: []string{"shared"}, Label: "SHR", Unit: "bytes", Type: Gauge, Integer: true, Help: "resident shared (file-backed) memory (statm)",
			value: always(func(p *Process) float64 { return float64(p.SharedBytes) })},
		{Name: "fds", Label: "FDS", Type: Gauge, Integer: true, Needs: FieldFDs, Help: "open file descriptors",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.FDs), read(p, FieldFDs) }},
		{Name: "oom_score", Label: "OOM", Type: Gauge, Integer: true, Needs: FieldOOMScore, Help: "the OOM killer's badness score",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.OOMScore), read(p, FieldOOMScore) }},
		{Name: "cpu_percent", Aliases: []string{"cpu"}, Label: "CPU%", Unit: "percent", Type: Rate,
			Help:  "CPU use between two gathers, percent of one core (200 is two cores busy)",
			value: rate(measured, func(r *Rates) float64 { return r.CPUPercent })},
		{Name: "cpu_time_seconds", Aliases: []string{"time", "cpu_time"}, Label: "TIME", Unit: "seconds", Type: Counter,
			Help:  "CPU time used, user and system",
			value: func(s *Snapshot, p *Process) (float64, bool) { return s.Host.RoundToTicks(p.CPUSeconds()), true }},
		{Name: "cpu_user_seconds", Aliases: []string{"user_time"}, Label: "UTIME", Unit: "seconds", Type: Counter, Help: "CPU time in user mode",
			value: always(func(p *Process) float64 { return p.UserCPUSeconds })},
		{Name: "cpu_system_seconds", Aliases: []string{"system_time"}, Label: "STIME", Unit: "seconds", Type: Counter, Help: "CPU time in the kernel",
			value: always(func(p *Process) float64 { return p.SystemCPUSeconds })},
		{Name: "read_bytes", Label: "READ", Unit: "bytes", Type: Counter, Integer: true, Needs: FieldIO,
			Help:  "bytes read from storage (io), reaped children included; needs ptrace access",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.IO.ReadBytes), read(p, FieldIO) }},
		{Name: "write_bytes", Label: "WRITE", Unit: "bytes", Type: Counter, Integer: true, Needs: FieldIO,
			Help:  "bytes written to storage (io), reaped children included; needs ptrace access",
			value: func(_ *Snapshot, p *Process) (float64, bool) { return float64(p.IO.WriteBytes), read(p, FieldIO) }},
		{Name: "read_bytes_per_second", Aliases: []string{"read", "read_rate"}, Label: "READ/s", Unit: "bytes/s", Type: Rate, Needs: FieldIO,
			Help:  "storage reads between two gathers",
			value: rate(haveIO, func(r *Rates) float64 { return r.ReadBytesPerSecond })},
		{Name: "write_bytes_per_second", Aliases: []string{"write", "write_rate"}, Label: "WRITE/s", Unit: "bytes/s", Type: Rate, Needs: FieldIO,
			Help:  "storage writes between two gathers",
			value: rate(haveIO, func(r *Rates) float64 { return r.WriteBytesPerSecond })},
		{Name: "io_bytes_per_second", Aliases: []string{"io"}, Label: "IO/s", Unit: "bytes/s", Type: Rate, Needs: FieldIO,
			Help:  "storage reads and writes between two gathers",
			value: rate(haveIO, func(r *Rates) float64 { return r.ReadBytesPerSecond + r.WriteBytesPerSecond })},
		{Name: "rss_growth_bytes_per_minute", Aliases: []string{"growth"}, Label: "GROWTH", Unit: "bytes/min", Type: Rate,
			Help:  "RSS change between two gathers; negative when it shrinks",
			value: rate(measured, func(r *Rates) float64 { return r.RSSGrowthBytesPerMinute })},
		{Name: "pss_growth_bytes_per_minute", Aliases: []string{"pss_growth"}, Label: "PSS+", Unit: "bytes/min", Type: Rate, Needs: FieldSmaps,
			Help:  "PSS change between two gathers",
			value: rate(haveSmaps, func(r *Rates) float64 { return r.PSSGrowthBytesPerMinute })},
		{Name: "uss_growth_bytes_per_minute", Aliases: []string{"uss_growth"}, Label: "USS+", Unit: "bytes/min", Type: Rate, Needs: FieldSmaps,
			Help:  "USS change between two gathers",
			value: rate(haveSmaps, func(r *Rates) float64 { return r.USSGrowthBytesPerMinute })},
		{Name: "age_seconds", Aliases: []string{"age"}, Label: "AGE", Unit: "seconds", Type: Gauge,
			Help: "time since the process started, at the gather's time",
			value: func(s *Snapshot, p *Process) (float64, bool) {
				return max(s.Time.Sub(p.Start).Seconds(), 0), true
			}},
		{Name: "start_unix_seconds", Aliases: []string{"start_time"}, Label: "START", Unit: "seconds", Type: Gauge, Integer: true,
			Help:  "when the process started, whole seconds since 1970 (btime + starttime)",
			value: always(func(p *Process) float64 { return float64(p.Start.Unix()) })},
	}
}

// LookupMetric finds a metric by its name or an alias, case-insensitively.
// It lists the catalogue anew: keep a Catalogue where lookups are many.
func LookupMetric(name string) (MetricDesc, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, d := range Metrics() {
		if d.Is(name) {
			return d, true
		}
	}
	return MetricDesc{}, false
}

// Catalogue indexes Metrics by name and alias. Build one and keep it where
// metrics are looked up often (Lua reads a field by name on every access).
type Catalogue struct {
	list  []MetricDesc
	index map[string]int
}

// NewCatalogue indexes Metrics.
func NewCatalogue() *Catalogue {
	c := &Catalogue{list: Metrics(), index: make(map[string]int)}
	for i, d := range c.list {
		c.index[d.Name] = i
		for _, a := range d.Aliases {
			c.index[a] = i
		}
	}
	return c
}

// Lookup finds a metric by its name or an alias, case-insensitively.
func (c *Catalogue) Lookup(name string) (*MetricDesc, bool) {
	i, ok := c.index[name]
	if !ok {
		i, ok = c.index[strings.ToLower(strings.TrimSpace(name))]
	}
	if !ok {
		return nil, false
	}
	return &c.list[i], true
}

// MetricNames lists the metrics' names, for help and error messages.
func MetricNames() []string {
	var names []string
	for _, d := range Metrics() {
		names = append(names, d.Name)
	}
	return names
}

// compareByMetric orders a before b by d, the one rule every ranking of
// processes follows: the larger value first, a process without a value
// (not read, denied, not measured) after every one with a value, and on a
// tie the lower pid first.
func compareByMetric(s *Snapshot, d *MetricDesc, a, b *Process) int {
	va, oka := d.value(s, a)
	vb, okb := d.value(s, b)
	switch {
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(vb, va); oka && c != 0 { // NaN after every number
		return c
	}
	return cmp.Compare(a.ID.PID, b.ID.PID)
}

// SortByMetric sorts procs of s by d: largest first, those without a value
// last, ties by pid. Each value is worked out once, not at every
// comparison (ps sorts every process).
func SortByMetric(s *Snapshot, procs []*Process, d MetricDesc) {
	type keyed struct {
		v  float64
		ok bool
		p  *Process
	}
	keys := make([]keyed, len(procs))
	for i, p := range procs {
		v, ok := d.value(s, p)
		keys[i] = keyed{v, ok, p}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		switch {
		case a.ok != b.ok:
			if a.ok {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.v, a.v); a.ok && c != 0 { // NaN after every number
			return c
		}
		return cmp.Compare(a.p.ID.PID, b.p.ID.PID)
	})
	for i := range keys {
		procs[i] = keys[i].p
	}
}

// TopN keeps the n first of procs in the order SortByMetric gives, in
// place, without sorting the rest: procs[:len] is the top, largest first.
// It returns the top, which shares procs' array.
func TopN(s *Snapshot, procs []*Process, n int, d MetricDesc) []*Process {
	if n <= 0 {
		return procs[:0]
	}
	top := procs[:0]
	for _, p := range procs {
		// Insert p into top (sorted, at most n long), shifting the rest.
		i := len(top)
		for i > 0 && compareByMetric(s, &d, p, top[i-1]) < 0 {
			i--
		}
		if i >= n {
			continue
		}
		if len(top) < n {
			top = append(top, nil)
		}
		copy(top[i+1:], top[i:len(top)-1])
		top[i] = p
	}
	return top
}
