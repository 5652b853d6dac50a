//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// smaps_rollup.go parses /proc/<pid>/smaps_rollup (Linux 4.14+): the sums of
// smaps over all mappings, in kB; we return bytes. Reading it walks the
// target's page tables under its mmap lock, so it is opt-in (FieldSmaps).
// Kernel threads and zombies give an empty file.

// SmapsRollup holds proportional and private memory.
type SmapsRollup struct {
	RSSBytes     uint64
	PSSBytes     uint64 // proportional set size: shared pages divided among sharers
	USSBytes     uint64 // unique set size: Private_Clean + Private_Dirty + Private_Hugetlb
	SwapBytes    uint64
	SwapPSSBytes uint64
}

func parseSmapsRollup(b []byte) (SmapsRollup, error) {
	var s SmapsRollup
	seen := false
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		key, val, ok := keyValue(line)
		if !ok {
			continue // the first line is the address range header
		}
		var dst *uint64
		add := false
		switch string(key) {
		case "Rss":
			dst = &s.RSSBytes
		case "Pss":
			dst = &s.PSSBytes
		case "Private_Clean", "Private_Dirty", "Private_Hugetlb":
			dst, add = &s.USSBytes, true
		case "Swap":
			dst = &s.SwapBytes
		case "SwapPss":
			dst = &s.SwapPSSBytes
		default:
			continue
		}
		v, ok := kBToBytes(val)
		if add {
			v, ok = *dst+v, ok && *dst+v >= *dst
		}
		if !ok {
			return SmapsRollup{}, fmt.Errorf("%w: smaps_rollup: bad %s", ErrMalformed, key)
		}
		*dst = v
		seen = true
	}
	if !seen {
		return SmapsRollup{}, fmt.Errorf("%w: smaps_rollup: no memory lines", ErrMalformed)
	}
	return s, nil
}
