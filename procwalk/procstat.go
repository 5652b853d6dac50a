//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// procstat.go parses /proc/stat, the host-wide one (the per-process
// /proc/<pid>/stat is stat.go): "cpuN ..." lines, one per online CPU, and
// "btime N", the boot time in seconds since the Unix epoch.

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
