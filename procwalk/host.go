//go:build linux

package procwalk

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"
)

// host.go reads host-wide facts from /proc/stat (btime, CPUs; procstat.go),
// /proc/meminfo (MemTotal; meminfo.go), /proc/self/auxv (AT_CLKTCK; auxv.go)
// and /proc/self/mountinfo (hidepid; mountinfo.go).

// Host holds the facts needed to turn /proc numbers into absolute units.
type Host struct {
	BootTime      time.Time // btime from /proc/stat, whole seconds
	ClockTicks    uint64    // USER_HZ: clock ticks per second of utime, stime, starttime
	PageSizeBytes uint64
	MemTotalBytes uint64
	// NoSwapInUse: meminfo's SwapTotal - SwapFree was 0 when Host was
	// read, so every process's VmSwap was 0 (FieldSwap reads nothing).
	NoSwapInUse bool
	CPUs        int // "cpuN" lines in /proc/stat: CPUs online
	// HidePID is the hidepid= option of the proc mount ("" when off or
	// unknown): other users' processes may be invisible or opaque.
	HidePID string
}

// RoundToTicks rounds seconds to whole clock ticks, the resolution of every
// CPU time /proc gives: a sum of tick counts each divided by USER_HZ gathers
// float noise (3.0 + 0.76 = 3.7600000000000002) that Telegraf and JSON
// would print. ClockTicks 0 (unknown) leaves seconds alone.
func (h *Host) RoundToTicks(seconds float64) float64 {
	if h.ClockTicks == 0 {
		return seconds
	}
	hz := float64(h.ClockTicks)
	return math.Round(seconds*hz) / hz
}

// DefaultClockTicks is USER_HZ on every Linux architecture we target; used
// only when /proc/self/auxv cannot be read (a fixture without it).
const DefaultClockTicks = 100

// Host reads the host facts.
func (fs FS) Host() (Host, error) {
	h := Host{ClockTicks: DefaultClockTicks, PageSizeBytes: uint64(os.Getpagesize())}
	b, err := readFile(fs.Path("stat"))
	if err != nil {
		// Not a process going away: the root itself is wrong or unreadable.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe
		}
		return h, fmt.Errorf("%w: %w; is procfs mounted at %s? (mount -t proc proc %s, or pass --proc with the right root)", ErrNoProc, err, fs.root, fs.root)
	}
	btime, cpus, err := parseProcStat(b)
	if err != nil {
		return h, err
	}
	h.BootTime, h.CPUs = time.Unix(btime, 0), cpus
	if b, err := readFile(fs.Path("meminfo")); err == nil {
		h.MemTotalBytes = parseMemTotal(b)
		h.NoSwapInUse = parseNoSwapInUse(b)
	}
	if b, err := readFile(fs.Path("self", "auxv")); err == nil {
		if hz := ParseAuxvClockTicks(b); hz > 0 {
			h.ClockTicks = hz
		}
	}
	if b, err := readFile(fs.Path("self", "mountinfo")); err == nil {
		root, err := filepath.Abs(fs.root)
		if err != nil {
			root = fs.root
		}
		h.HidePID = parseHidePID(b, root)
	}
	return h, nil
}
