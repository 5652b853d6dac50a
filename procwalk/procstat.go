//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// procstat.go parses /proc/stat, the host-wide one (the per-process
// /proc/<pid>/stat is stat.go): "cpuN ..." lines, one per online CPU, and
// "btime N", the boot time in seconds since the Unix epoch.

// CPUTimes is one CPU's time since boot, in clock ticks (USER_HZ): busy
// (user, nice, system, irq, softirq, steal) and all of it (busy, idle and
// iowait). Two of them a while apart give the CPU's busy share.
type CPUTimes struct {
	BusyTicks, TotalTicks uint64
}

// BusyPercent is the share of the time between prev and c the CPU was busy;
// ok is false when no time passed (or the counters went back: a CPU
// brought online again).
func (c CPUTimes) BusyPercent(prev CPUTimes) (float64, bool) {
	if c.TotalTicks <= prev.TotalTicks || c.BusyTicks < prev.BusyTicks {
		return 0, false
	}
	return float64(c.BusyTicks-prev.BusyTicks) / float64(c.TotalTicks-prev.TotalTicks) * 100, true
}

// parseCPUTimes returns the times of each "cpuN" line of /proc/stat, in
// the order of the lines (cpu0, cpu1 ...): user nice system idle iowait irq
// softirq steal, ticks; a line with fewer than four numbers is left out.
func parseCPUTimes(b []byte) []CPUTimes {
	var out []CPUTimes
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		if len(line) < 4 || string(line[:3]) != "cpu" || line[3] < '0' || line[3] > '9' {
			continue
		}
		var f [9][]byte // the cpuN name, then 8 counters
		nf := fsio.SplitFields(line, f[:])
		var v [8]uint64
		n := 0
		for _, field := range f[1:nf] {
			x, ok := fsio.Atou(field)
			if !ok {
				break
			}
			v[n] = x
			n++
		}
		if n < 4 {
			continue
		}
		busy := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		out = append(out, CPUTimes{BusyTicks: busy, TotalTicks: busy + v[3] + v[4]})
	}
	return out
}

// parseProcStat returns btime (unix seconds) and the number of cpuN lines.
func parseProcStat(b []byte) (btime int64, cpus int, err error) {
	found := false
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		switch {
		case len(line) > 3 && string(line[:3]) == "cpu" && line[3] >= '0' && line[3] <= '9':
			cpus++
		case len(line) > 6 && string(line[:6]) == "btime ":
			v, ok := fsio.Atoi(trimSpace(line[6:]))
			if !ok {
				return 0, 0, fmt.Errorf("%w: stat: bad btime", ErrMalformed)
			}
			btime, found = v, true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("%w: stat: no btime line", ErrMalformed)
	}
	if cpus == 0 {
		cpus = 1
	}
	return btime, cpus, nil
}
