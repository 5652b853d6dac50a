//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// statm.go parses /proc/<pid>/statm: seven numbers in pages (size resident
// shared text lib data dt). Cheap but approximate: the kernel keeps RSS in
// per-CPU counters (error up to threads×64 pages before Linux 6.2).

// Statm holds /proc/<pid>/statm in pages.
type Statm struct {
	SizePages     uint64
	ResidentPages uint64
	SharedPages   uint64
	TextPages     uint64
	DataPages     uint64
}

func parseStatm(b []byte) (Statm, error) {
	var f [7][]byte
	if n := fsio.SplitFields(b, f[:]); n < 6 {
		return Statm{}, fmt.Errorf("%w: statm: %d fields, want 7", ErrMalformed, n)
	}
	var v [6]uint64
	for i := range v {
		x, ok := fsio.Atou(f[i])
		if !ok {
			return Statm{}, fmt.Errorf("%w: statm: field %d is not a number", ErrMalformed, i+1)
		}
		v[i] = x
	}
	// v[4] is "lib", always 0 since Linux 2.6.
	return Statm{SizePages: v[0], ResidentPages: v[1], SharedPages: v[2], TextPages: v[3], DataPages: v[5]}, nil
}
