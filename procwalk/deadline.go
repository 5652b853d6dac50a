//go:build linux

package procwalk

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// deadline.go bounds every read of a scan. A read of /proc can block in the
// kernel beyond any context's reach: cmdline, environ and smaps_rollup wait
// for the target's memory-map lock, which a stuck process can hold for
// minutes, and a file in a fake root can be anything (FACTS "Learned from
// the first landing's reviews"). O_NONBLOCK covers FIFOs, not those.
//
// The fast path stays as it was, reads inline in one loop, with two atomic
// operations per read: the scan runs on a goroutine of its own and the
// caller watches it, one ticker per scan. When one read has made no
// progress for a whole tick (between ReadTimeout and twice it), the caller
// abandons that goroutine, blocked in the kernel, with the buffers it
// writes into, and a new goroutine goes on from the stuck process on fresh
// buffers. The stuck process is remembered until its read returns: until
// then scans read only its stat and statm (never the file that stuck) and
// mark it ReadTimedOut, so a process stuck for good costs one blocked
// thread, not one per scan.

// DefaultReadTimeout is how long one read may block before the scan goes
// on without it. A legitimately slow read is smaps_rollup of a huge process
// (4.4 s for 200 GB, FACTS): that one is then marked as timed out too.
const DefaultReadTimeout = 2 * time.Second

// errAbandoned is returned by a read of a scan that has been given up on.
var errAbandoned = errors.New("scan abandoned after a read timed out")

// abandonedState marks a readWatch given up on.
const abandonedState = ^uint64(0)

// readWatch is what the watching caller sees of one scanning goroutine:
// state is even between reads, odd during one, abandonedState once
// abandoned; each read adds 2. Only a read in progress can be abandoned,
// and the read's end and the abandonment race on one compare-and-swap, so
// a goroutine that sees its read end normally was not abandoned and owns
// everything it touches until its next read.
type readWatch struct {
	state atomic.Uint64
	seen  uint64 // the state at the previous tick (the watcher's own)
	// Progress, written by the scanning goroutine before each read and read
	// by the watcher only after abandoning it.
	pid  int
	file string
}

// enter marks the start of a read of pid's file; false means abandoned.
func (w *readWatch) enter(pid int, file string) bool {
	if w == nil {
		return true
	}
	w.pid, w.file = pid, file
	s := w.state.Load()
	return s != abandonedState && w.state.CompareAndSwap(s, s+1)
}

// leave marks the end of a read; false means the read was abandoned while
// it blocked, and its result and buffer belong to nobody.
func (w *readWatch) leave() bool {
	if w == nil {
		return true
	}
	s := w.state.Load()
	return s != abandonedState && w.state.CompareAndSwap(s, s+1)
}

// stuck is the watcher's tick: it abandons the goroutine when the same read
// has been in progress since the previous tick.
func (w *readWatch) stuck() bool {
	s := w.state.Load()
	defer func() { w.seen = s }()
	return s&1 == 1 && s == w.seen && w.state.CompareAndSwap(s, abandonedState)
}

// stuckReads are the processes whose read was abandoned, by pid, with the
// file that blocked, until that read returns. Shared by a Scanner and the
// goroutines it abandoned.
type stuckReads struct {
	n    atomic.Int32 // len(file): the scan's fast path reads only this
	mu   sync.Mutex
	file map[int]string
}

func (s *stuckReads) add(pid int, file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		s.file = make(map[int]string)
	}
	s.file[pid] = file
	s.n.Store(int32(len(s.file)))
}

func (s *stuckReads) remove(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.file, pid)
	s.n.Store(int32(len(s.file)))
}

// lookup returns the file that blocked for pid, "" when none did.
func (s *stuckReads) lookup(pid int) string {
	if s.n.Load() == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.file[pid]
}
