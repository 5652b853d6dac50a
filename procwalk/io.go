//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// io.go parses /proc/<pid>/io: byte counters, including those of reaped
// children. Reading it needs ptrace-level access (root, or same user and a
// dumpable process).

// IO holds the counters of /proc/<pid>/io. ReadBytes and WriteBytes count
// storage traffic; RChar and WChar count every read/write syscall's bytes.
type IO struct {
	RChar, WChar          uint64
	SyscR, SyscW          uint64
	ReadBytes, WriteBytes uint64
	CancelledWriteBytes   uint64
}

func parseIO(b []byte) (IO, error) {
	var v IO
	seen := 0
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		key, val, ok := keyValue(line)
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "rchar":
			dst = &v.RChar
		case "wchar":
			dst = &v.WChar
		case "syscr":
			dst = &v.SyscR
		case "syscw":
			dst = &v.SyscW
		case "read_bytes":
			dst = &v.ReadBytes
		case "write_bytes":
			dst = &v.WriteBytes
		case "cancelled_write_bytes":
			dst = &v.CancelledWriteBytes
		default:
			continue
		}
		n, ok := fsio.Atou(val)
		if !ok {
			return IO{}, fmt.Errorf("%w: io: bad %s", ErrMalformed, key)
		}
		*dst = n
		seen++
	}
	if seen == 0 {
		return IO{}, fmt.Errorf("%w: io: no counters", ErrMalformed)
	}
	return v, nil
}
