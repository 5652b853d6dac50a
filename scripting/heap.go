//go:build linux

package scripting

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// heap.go guards the Go heap. gopher-lua has no memory limit (its SetMx
// calls os.Exit), so a script that builds huge tables or strings could take
// the whole host process down with a fatal out-of-memory. A watchdog reads
// the heap's size while a run is in progress and cancels the run's context
// when the heap has grown past the budget; the Lua VM checks the context
// before every instruction and stops.

// heapCheckInterval is how often the watchdog looks: a script allocating at
// memory bandwidth gains a few hundred MB at most between two looks.
const heapCheckInterval = 10 * time.Millisecond

// errHeapBudget is the cancel cause the watchdog sets.
type errHeapBudget struct{ grewBytes, budgetBytes uint64 }

func (e errHeapBudget) Error() string {
	return fmt.Sprintf("the Go heap grew by %s during the run, over the budget of %s", formatBytes(float64(e.grewBytes)), formatBytes(float64(e.budgetBytes)))
}

func (e errHeapBudget) Unwrap() error { return ErrMemory }

// heapBytes reads the heap's objects, live ones plus garbage not yet
// swept (an over-estimate, so crossing the budget is confirmed after a
// GC), and goroutine stacks, which the Lua VM's Go recursion grows (a
// coroutine resumed inside another, kept from run to run): memory a script
// makes the process hold too.
//
// runtime.ReadMemStats stops the world: a few microseconds when idle (6-17
// on our 2-core VM), longer while the Lua VM runs, as the stop waits for
// its goroutine to be preempted (0.2-0.6 ms of waiting on a loaded host);
// it happens a few times a run and every heapCheckInterval while one
// lasts. runtime/metrics reads the same two figures without stopping it,
// but its package initialisation (0.04 ms, a table of every metric) ran at
// the start of every procwalk process, --version and the one-shot commands
// too. The MemStats (5.7 kB) stays on the stack.
func heapBytes() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// heapWatch is the watchdog of one run.
type heapWatch struct {
	budget uint64
	cancel context.CancelCauseFunc
	// mu orders the timer's callback after its creation and before stop,
	// and guards base, which grown reads too.
	mu      sync.Mutex
	base    uint64
	t       *time.Timer
	stopped bool
}

// watchHeap starts a watchdog that calls cancel with errHeapBudget when the
// heap grows more than budget bytes over its size now. It runs on a timer,
// not a goroutine of its own, so a run of a few microseconds pays only for
// the first reading; stop ends it.
func watchHeap(cancel context.CancelCauseFunc, budget uint64) *heapWatch {
	w := &heapWatch{budget: budget, cancel: cancel}
	w.base = heapBytes()
	// Garbage left by what ran before counts in the base, and then as room
	// the run has once it is swept: the checks made before big allocations
	// (over) would let the run grow by the budget plus that garbage. A
	// heap big beside the budget is collected first (the last GC's live
	// size cannot tell: what was live then may be garbage now); a small
	// one costs at most an eighth of the budget, and a run of a few
	// microseconds no GC.
	if w.base > budget/8 {
		runtime.GC()
		w.base = heapBytes()
	}
	w.mu.Lock()
	w.t = time.AfterFunc(heapCheckInterval, w.check)
	w.mu.Unlock()
	return w
}

func (w *heapWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	now := heapBytes()
	switch {
	case now < w.base:
		w.base = now // garbage at the start was swept: tighten
	case now-w.base > w.budget:
		// Maybe it is garbage: collect and look again.
		runtime.GC()
		if now = heapBytes(); now > w.base && now-w.base > w.budget {
			w.cancel(errHeapBudget{grewBytes: now - w.base, budgetBytes: w.budget})
			return
		}
	}
	w.t.Reset(heapCheckInterval)
}

// grown returns how far the heap has grown since the run began.
func (w *heapWatch) grown() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := heapBytes()
	return now - min(now, w.base)
}

// over reports whether size more bytes would take the heap past the
// budget, and how far it has grown. The reading counts garbage not yet
// swept, so an answer of yes is confirmed after a GC.
func (w *heapWatch) over(size uint64) (grown uint64, over bool) {
	if grown = w.grown(); grown+size <= w.budget {
		return grown, false
	}
	runtime.GC()
	w.mu.Lock()
	defer w.mu.Unlock()
	now := heapBytes()
	grown = now - min(now, w.base)
	return grown, grown+size > w.budget
}

func (w *heapWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}

// errRetained is the error of a run after which the Lua state holds more
// than Limits.RetainedBytes.
type errRetained struct{ keptBytes, budgetBytes uint64 }

func (e errRetained) Error() string {
	return fmt.Sprintf("the Lua state keeps %s more than when it was built, over the %s a state may keep from run to run: it was dropped, and the next run starts afresh (procwalk.state and globals empty)",
		formatBytes(float64(e.keptBytes)), formatBytes(float64(e.budgetBytes)))
}

func (e errRetained) Unwrap() []error { return []error{ErrMemory, ErrRetained} }

// liveHeap returns the heap's size after a GC.
func liveHeap() uint64 {
	runtime.GC()
	return heapBytes()
}

// retained returns how far the live heap is over base, when it is over by
// more than budget; 0 otherwise. The first reading counts garbage too, so
// a GC runs only when it is over.
func retained(base, budget uint64) uint64 {
	if now := heapBytes(); now <= base || now-base <= budget {
		return 0
	}
	if now := liveHeap(); now > base && now-base > budget {
		return now - base
	}
	return 0
}
