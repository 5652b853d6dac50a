//go:build linux

package procwalk

import (
	"bytes"
	"strconv"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// system.go reads the host-wide figures a live view shows above its tables:
// load average, memory and swap (meminfo), and pressure stall information
// (PSI, /proc/pressure, Linux 4.20+ with CONFIG_PSI).

// System is the host's load, memory and pressure at one moment. A figure
// the kernel does not provide is marked absent (Have*), never 0.
type System struct {
	Load1, Load5, Load15 float64
	HaveLoad             bool

	MemTotalBytes     uint64
	MemAvailableBytes uint64
	SwapTotalBytes    uint64
	SwapFreeBytes     uint64
	HaveMemory        bool

	// CPUs are each CPU's times from /proc/stat (cpu0, cpu1 ...): two
	// System reads apart give each one's busy share (CPUTimes.BusyPercent).
	CPUs []CPUTimes

	// Pressure is each resource's "some" avg10 (percent of the last 10 s
	// in which some task stalled on it): cpu, memory, io. Absent keys: no
	// PSI on this kernel, or the file is unreadable.
	Pressure map[string]float64
}

// System reads loadavg, meminfo and pressure under the FS's root. Files
// that are missing leave their figures absent; it does not fail.
func (fs FS) System() System {
	var s System
	if b, err := readFile(fs.Path("loadavg")); err == nil {
		s.Load1, s.Load5, s.Load15, s.HaveLoad = parseLoadavg(b)
	}
	if b, err := readFile(fs.Path("meminfo")); err == nil {
		parseMeminfo(b, &s)
	}
	if b, err := readFile(fs.Path("stat")); err == nil {
		s.CPUs = parseCPUTimes(b)
	}
	for _, r := range [...]string{"cpu", "memory", "io"} {
		if b, err := readFile(fs.Path("pressure", r)); err == nil {
			if v, ok := parsePressureSome(b); ok {
				if s.Pressure == nil {
					s.Pressure = make(map[string]float64, 3)
				}
				s.Pressure[r] = v
			}
		}
	}
	return s
}

// parseLoadavg reads "1.63 11.38 12.71 1/87 17554".
func parseLoadavg(b []byte) (l1, l5, l15 float64, ok bool) {
	var f [3][]byte
	if fsio.SplitFields(b, f[:]) < 3 {
		return 0, 0, 0, false
	}
	var err1, err5, err15 error
	l1, err1 = strconv.ParseFloat(string(f[0]), 64)
	l5, err5 = strconv.ParseFloat(string(f[1]), 64)
	l15, err15 = strconv.ParseFloat(string(f[2]), 64)
	if err1 != nil || err5 != nil || err15 != nil {
		return 0, 0, 0, false
	}
	return l1, l5, l15, true
}

// parseMeminfo fills the memory figures; all four lines are needed.
func parseMeminfo(b []byte, s *System) {
	found := 0
	eachKeyValue(b, func(key, val []byte) {
		var dst *uint64
		switch string(key) {
		case "MemTotal":
			dst = &s.MemTotalBytes
		case "MemAvailable":
			dst = &s.MemAvailableBytes
		case "SwapTotal":
			dst = &s.SwapTotalBytes
		case "SwapFree":
			dst = &s.SwapFreeBytes
		default:
			return
		}
		if v, ok := kBToBytes(val); ok {
			*dst = v
			found++
		}
	})
	s.HaveMemory = found == 4
}

// parsePressureSome reads avg10 of the "some" line:
// "some avg10=0.12 avg60=0.05 avg300=0.00 total=1234".
func parsePressureSome(b []byte) (float64, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		rest, ok := bytes.CutPrefix(line, []byte("some "))
		if !ok {
			continue
		}
		var f [4][]byte
		n := fsio.SplitFields(rest, f[:])
		for _, field := range f[:n] {
			if v, ok := bytes.CutPrefix(field, []byte("avg10=")); ok {
				x, err := strconv.ParseFloat(string(v), 64)
				return x, err == nil
			}
		}
	}
	return 0, false
}
