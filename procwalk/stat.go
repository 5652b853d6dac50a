package procwalk

import (
	"bytes"
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// stat.go parses /proc/<pid>/stat (proc_pid_stat(5)). Times are in clock
// ticks (USER_HZ), vsize in bytes, rss in pages; Snapshot converts them to
// seconds and bytes.

// pfKthread is PF_KTHREAD from include/linux/sched.h: set in stat's flags
// field for kernel threads.
const pfKthread = 0x00200000

// Stat holds the fields of /proc/<pid>/stat that procwalk uses.
type Stat struct {
	PID        int
	Comm       string
	State      byte
	PPID       int
	PGRP       int
	SID        int
	TTY        int // tty_nr: major in bits 8-15 and 20-31, minor in 0-7 and 20-31
	Flags      uint64
	UTime      uint64 // clock ticks
	STime      uint64 // clock ticks
	CUTime     uint64 // clock ticks, waited-for children
	CSTime     uint64 // clock ticks, waited-for children
	Threads    int
	StartTicks uint64 // clock ticks after boot
	VSizeBytes uint64
	RSSPages   uint64
}

// parseStat parses the contents of a stat file. comm lies between the FIRST
// '(' and the LAST ')': it may itself hold spaces, parentheses and newlines.
func parseStat(b []byte) (Stat, error) {
	s, comm, err := parseStatNoComm(b)
	if err != nil {
		return Stat{}, err
	}
	s.Comm = string(comm)
	return s, nil
}

// parseStatNoComm is parseStat leaving Comm empty and returning its bytes
// (aliasing b), so the scan loop can intern it without an allocation.
func parseStatNoComm(b []byte) (s Stat, comm []byte, err error) {
	open := bytes.IndexByte(b, '(')
	close := bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return s, nil, fmt.Errorf("%w: stat: no (comm)", ErrMalformed)
	}
	pid, ok := fsio.Atoi(trimSpace(b[:open]))
	if !ok {
		return s, nil, fmt.Errorf("%w: stat: bad pid", ErrMalformed)
	}
	s.PID = int(pid)
	comm = b[open+1 : close]
	// Fields after comm, numbered as in proc_pid_stat(5): 3 is state.
	rest := b[close+1:]
	// We need fields up to 24 (rss): index = field number - 3. Splitting
	// stops there; the ~28 fields after rss are never looked at.
	var f [22][]byte
	n := fsio.SplitFields(rest, f[:])
	if n < 22 {
		return s, nil, fmt.Errorf("%w: stat: %d fields after comm, want at least 22", ErrMalformed, n)
	}
	// State is one letter (R S D Z T t X I ...); anything else is garbage.
	if c := f[0][0]; len(f[0]) != 1 || !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
		return s, nil, fmt.Errorf("%w: stat: bad state %q", ErrMalformed, f[0])
	}
	s.State = f[0][0]
	var bad bool
	num := func(i int) uint64 {
		v, ok := fsio.Atou(f[i])
		if !ok {
			bad = true
		}
		return v
	}
	inum := func(i int) int {
		v, ok := fsio.Atoi(f[i])
		if !ok {
			bad = true
		}
		return int(v)
	}
	s.PPID = inum(1)       // 4
	s.PGRP = inum(2)       // 5
	s.SID = inum(3)        // 6
	s.TTY = inum(4)        // 7
	s.Flags = num(6)       // 9
	s.UTime = num(11)      // 14
	s.STime = num(12)      // 15
	s.CUTime = num(13)     // 16 (signed in the kernel, never negative in practice)
	s.CSTime = num(14)     // 17
	s.Threads = inum(17)   // 20
	s.StartTicks = num(19) // 22
	s.VSizeBytes = num(20) // 23
	s.RSSPages = num(21)   // 24
	if bad {
		return Stat{}, nil, fmt.Errorf("%w: stat: non-numeric field", ErrMalformed)
	}
	return s, comm, nil
}

// Kernel reports whether the stat flags mark a kernel thread.
func (s Stat) Kernel() bool { return s.Flags&pfKthread != 0 }

// ReadStat reads and parses <root>/<pid>/stat, the one file that says
// which process a pid names now (its start time) and what state it is in.
func (fs FS) ReadStat(pid int) (Stat, error) {
	b, err := readFile(fs.PIDPath(pid, "stat"))
	if err != nil {
		return Stat{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return st, nil
}
