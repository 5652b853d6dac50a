//go:build linux

package scripting

import (
	"fmt"
	"math"
	"math/rand/v2"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// guards.go holds the checks the patched VM (internal/_luavm) calls back, and the
// library functions replaced because gopher-lua's let a Go panic through.

// concatCheckBytes is the size below which a .. is not checked: smaller
// strings cannot outrun the heap watchdog.
const concatCheckBytes = 1 << 20

// errAllocBudget is the cancel cause of one step (a .., a table growing)
// that would take the heap past its budget.
type errAllocBudget struct {
	what                string // ".. would make a string of", ...
	size, grown, budget uint64
}

func (e errAllocBudget) Error() string {
	return fmt.Sprintf("%s %s with the Go heap already %s up, over the budget of %s",
		e.what, formatBytes(float64(e.size)), formatBytes(float64(e.grown)), formatBytes(float64(e.budget)))
}

func (e errAllocBudget) Unwrap() error { return ErrMemory }

// checkConcat is the VM's ConcatCheck: one .. of 200 operands of 4 MiB
// allocates 800 MiB in one step, which the heap watchdog (every 10 ms, and
// only between instructions) saw too late. The run is cancelled, so a
// pcall cannot swallow it. Inside an error object's __tostring the result
// is bounded by the error text's limit instead.
func (r *Runtime) checkConcat(L *lua.LState, size int) {
	if r.errorText && size > r.limits.MaxStringBytes {
		r.limitError(L, "an error object's __tostring would make a string of %s, over the %s limit of an error message",
			formatBytes(float64(size)), formatBytes(float64(r.limits.MaxStringBytes)))
	}
	if size >= concatCheckBytes {
		r.checkAlloc(L, ".. would make a string of", size)
	}
}

// checkGrow is the VM's GrowCheck: a table's array part (or its list of
// keys) grows by a quarter in one step of Go's append, the new slice made
// beside the old one.
func (r *Runtime) checkGrow(L *lua.LState, size int) {
	r.checkAlloc(L, "a table would grow by a slice of", size)
}

// checkAlloc cancels the run before a step allocates size bytes at once
// that would take the heap past its budget.
func (r *Runtime) checkAlloc(L *lua.LState, what string, size int) {
	if r.heap == nil {
		return
	}
	if grown, over := r.heap.over(uint64(size)); over {
		err := errAllocBudget{what: what, size: uint64(size), grown: grown, budget: r.limits.HeapBudgetBytes}
		r.cancel(err)
		L.RaiseError("%v", err)
	}
}

// maxRandomInterval is the widest interval math.random(m, n) draws from:
// integers stay exact in a float64 below 2^53.
const maxRandomInterval = 1 << 53

// mathRandom is math.random([m [, n]]) as in Lua 5.1. gopher-lua's called
// rand.Intn with the width of the interval, which panics when it is empty
// or overflows (math.random(0)).
func mathRandom(L *lua.LState) int {
	if L.GetTop() == 0 {
		L.Push(lua.LNumber(rand.Float64()))
		return 1
	}
	lo, hi := 1.0, math.Floor(float64(L.CheckNumber(1)))
	if L.GetTop() >= 2 {
		lo, hi = math.Floor(float64(L.CheckNumber(1))), math.Floor(float64(L.CheckNumber(2)))
	}
	switch {
	case !(lo <= hi): // NaN too
		L.ArgError(L.GetTop(), "interval is empty")
	case hi-lo >= maxRandomInterval || math.IsInf(hi-lo, 0):
		L.ArgError(L.GetTop(), "interval is too large")
	}
	L.Push(lua.LNumber(lo + float64(rand.Int64N(int64(hi-lo)+1))))
	return 1
}
