//go:build linux

package procwalk

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// status.go parses /proc/<pid>/status: "Key:\tvalue" lines. Memory lines
// are in kB (KiB); we return bytes.

// Status holds the lines of /proc/<pid>/status that procwalk uses.
type Status struct {
	RealUID, EffectiveUID  int
	SwapBytes              uint64 // VmSwap
	PeakRSSBytes           uint64 // VmHWM: the peak resident memory of this process's own address space
	VoluntaryCtxSwitches   uint64
	InvoluntaryCtxSwitches uint64
	// PendingSignals is SigPnd | ShdPnd: the signals pending for the
	// thread or its whole process, signal N as bit N-1.
	PendingSignals uint64
}

// pendingMask reads a status signal mask in hex: its low 64 signals (mips
// has 128, 32 digits). A mask it cannot read has every signal pending, as
// far as anyone can tell, and fails no other line of the file.
func pendingMask(v []byte) uint64 {
	if len(v) > 16 {
		v = v[len(v)-16:]
	}
	m, err := strconv.ParseUint(string(v), 16, 64)
	if err != nil {
		return ^uint64(0)
	}
	return m
}

// ReadStatus reads and parses <root>/<pid>/status.
func (fs FS) ReadStatus(pid int) (Status, error) {
	b, err := readFile(fs.PIDPath(pid, "status"))
	if err != nil {
		return Status{}, err
	}
	st, err := parseStatus(b)
	if err != nil {
		return Status{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return st, nil
}

func parseStatus(b []byte) (Status, error) {
	var s Status
	haveUID := false
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		// The key first: most lines are not used, and some values are
		// long (Mems_allowed is hundreds of bytes on a large machine).
		c := bytes.IndexByte(line, ':')
		if c <= 0 {
			continue
		}
		val := func() []byte { _, v, _ := keyValue(line); return v }
		switch string(line[:c]) {
		case "Uid":
			var f [2][]byte
			if fsio.SplitFields(line[4:], f[:]) != 2 {
				return Status{}, fmt.Errorf("%w: status: bad Uid line", ErrMalformed)
			}
			r, ok1 := fsio.Atoi(f[0])
			e, ok2 := fsio.Atoi(f[1])
			if !ok1 || !ok2 {
				return Status{}, fmt.Errorf("%w: status: bad Uid line", ErrMalformed)
			}
			s.RealUID, s.EffectiveUID, haveUID = int(r), int(e), true
		case "VmSwap":
			v, ok := kBToBytes(val())
			if !ok {
				return Status{}, fmt.Errorf("%w: status: bad VmSwap", ErrMalformed)
			}
			s.SwapBytes = v
		case "VmHWM":
			s.PeakRSSBytes, _ = kBToBytes(val())
		case "voluntary_ctxt_switches":
			s.VoluntaryCtxSwitches, _ = fsio.Atou(val())
		case "nonvoluntary_ctxt_switches":
			s.InvoluntaryCtxSwitches, _ = fsio.Atou(val())
		case "SigPnd", "ShdPnd":
			s.PendingSignals |= pendingMask(val())
		}
	}
	if !haveUID {
		return Status{}, fmt.Errorf("%w: status: no Uid line", ErrMalformed)
	}
	return s, nil
}
