//go:build linux

package procwalk

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// schedstat.go parses /proc/<pid>/schedstat (CONFIG_SCHED_INFO): three
// numbers about the process's main thread, the nanoseconds it ran on a
// CPU, the nanoseconds it waited on a run queue, and how many times it was
// put on a CPU.

// Schedstat is /proc/<pid>/schedstat.
type Schedstat struct {
	RunNanoseconds  uint64
	WaitNanoseconds uint64
	// Runs counts the times the thread was put on a CPU: every time it
	// woke up to do anything. A thread whose Runs did not move did nothing.
	Runs uint64
}

func parseSchedstat(b []byte) (Schedstat, error) {
	var f [3][]byte
	if fsio.SplitFields(trimSpace(b), f[:]) != 3 {
		return Schedstat{}, fmt.Errorf("%w: schedstat: want 3 numbers, got %q", ErrMalformed, trimSpace(b))
	}
	var s Schedstat
	var ok [3]bool
	s.RunNanoseconds, ok[0] = fsio.Atou(f[0])
	s.WaitNanoseconds, ok[1] = fsio.Atou(f[1])
	s.Runs, ok[2] = fsio.Atou(f[2])
	if !ok[0] || !ok[1] || !ok[2] {
		return Schedstat{}, fmt.Errorf("%w: schedstat: %q is not 3 numbers", ErrMalformed, trimSpace(b))
	}
	return s, nil
}

// ReadSchedstat reads and parses <root>/<pid>/schedstat.
func (fs FS) ReadSchedstat(pid int) (Schedstat, error) {
	b, err := readFile(fs.PIDPath(pid, "schedstat"))
	if err != nil {
		return Schedstat{}, err
	}
	s, err := parseSchedstat(b)
	if err != nil {
		return Schedstat{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return s, nil
}
