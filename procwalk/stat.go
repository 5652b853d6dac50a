//go:build linux

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
	// StartStack is the address of the bottom of the main thread's stack:
	// an exec puts a new stack, at a random place where address space
	// randomisation is on. 0 for a process without memory, or one the
	// reader may not trace (the kernel hides it).
	StartStack uint64
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
	close := lastIndexByte(b, ')')
	if open < 0 || close < open {
		return s, nil, fmt.Errorf("%w: stat: no (comm)", ErrMalformed)
	}
	pid, ok := fsio.Atoi(trimSpace(b[:open]))
	if !ok {
		return s, nil, fmt.Errorf("%w: stat: bad pid", ErrMalformed)
	}
	s.PID = int(pid)
	comm = b[open+1 : close]
	// Fields after comm, numbered as in proc_pid_stat(5): 3 is state. We
	// need fields up to 28 (startstack): index = field number - 3. One pass
	// splits them and parses the numbers used; the ~24 fields after
	// startstack are never looked at.
	var f statFields
	n := f.split(b[close+1:])
	if n < 22 {
		return s, nil, fmt.Errorf("%w: stat: %d fields after comm, want at least 22", ErrMalformed, n)
	}
	// State is one letter (R S D Z T t X I ...); anything else is garbage.
	if c := f.state[0]; len(f.state) != 1 || !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
		return s, nil, fmt.Errorf("%w: stat: bad state %q", ErrMalformed, f.state)
	}
	if f.bad {
		return Stat{}, nil, fmt.Errorf("%w: stat: non-numeric field", ErrMalformed)
	}
	s.State = f.state[0]
	s.PPID = int(f.signed(1))     // 4
	s.PGRP = int(f.signed(2))     // 5
	s.SID = int(f.signed(3))      // 6
	s.TTY = int(f.signed(4))      // 7
	s.Flags = f.num[6]            // 9
	s.UTime = f.num[11]           // 14
	s.STime = f.num[12]           // 15
	s.CUTime = f.num[13]          // 16 (signed in the kernel, never negative in practice)
	s.CSTime = f.num[14]          // 17
	s.Threads = int(f.signed(17)) // 20
	s.StartTicks = f.num[19]      // 22
	s.VSizeBytes = f.num[20]      // 23
	s.RSSPages = f.num[21]        // 24
	s.StartStack = f.num[25]      // 28; 0 when the line stops before it
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

// lastIndexByte is bytes.LastIndexByte by forward searches, which use
// vector instructions: stat's last ')' ends comm, some 20 bytes into a
// line of 300, and the byte-at-a-time backward scan took a fifth of
// parseStatNoComm's time.
func lastIndexByte(b []byte, c byte) int {
	last := -1
	for {
		i := bytes.IndexByte(b[last+1:], c)
		if i < 0 {
			return last
		}
		last += 1 + i
	}
}

// statFields are the fields after comm up to startstack, as
// statFields.split finds them: index = field number - 3.
type statFields struct {
	state []byte
	num   [26]uint64 // the magnitude of the fields used, 0 for the others
	neg   uint32     // bit i: field i had a '-' (signed fields only)
	bad   bool       // a field used is no number, or overflows
}

// statSigned are the fields read as signed numbers (ppid, pgrp, sid,
// tty_nr, num_threads); statUnsigned those read as unsigned.
const (
	statSigned   = 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<17
	statUnsigned = 1<<6 | 1<<11 | 1<<12 | 1<<13 | 1<<14 | 1<<19 | 1<<20 | 1<<21 | 1<<25
)

// split splits b at runs of spaces into at most 26 fields, parsing those
// used as it goes (atou for unsigned fields, atoi for signed ones), and
// returns how many it found.
func (f *statFields) split(b []byte) int {
	i := 0
	for n := range len(f.num) {
		for i < len(b) && fsio.IsSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return n
		}
		start := i
		bit := uint32(1) << n
		if (statSigned|statUnsigned)&bit == 0 {
			for i < len(b) && !fsio.IsSpace(b[i]) {
				i++
			}
			if n == 0 {
				f.state = b[start:i]
			}
			continue
		}
		if b[i] == '-' && statSigned&bit != 0 {
			f.neg |= bit
			i++
		}
		digits := i
		var v uint64
		for ; i < len(b) && !fsio.IsSpace(b[i]); i++ {
			d := b[i] - '0'
			if d > 9 {
				f.bad = true
			}
			v = v*10 + uint64(d)
		}
		if i-digits > 19 { // 19 digits cannot overflow; more may have
			var ok bool
			if v, ok = fsio.Atou(b[digits:i]); !ok {
				f.bad = true
			}
		}
		if i == digits || statSigned&bit != 0 && v > 1<<63-1 && !(f.neg&bit != 0 && v == 1<<63) {
			f.bad = true
		}
		f.num[n] = v
	}
	return len(f.num)
}

// signed is field i with its sign (a field in statSigned).
func (f *statFields) signed(i int) int64 {
	if f.neg&(1<<i) != 0 {
		return int64(-f.num[i]) // wraps to the two's complement; fine for 1<<63 too
	}
	return int64(f.num[i])
}
