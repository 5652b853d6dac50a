package scripting

import "time"

// Limits bound what one run of a script may use. A zero (or negative) field
// means its default, listed by DefaultLimits.
type Limits struct {
	// Timeout is the wall-clock budget of one run, not counting the time
	// spent inside kills waiting for a grace period. Default 2 s.
	Timeout time.Duration
	// CallStackSize bounds Lua call depth (recursion). Default 200.
	CallStackSize int
	// RegistrySize is the initial value-stack size, RegistryMaxSize the
	// most it may grow to. Defaults 5120 and 65536 slots.
	RegistrySize    int
	RegistryMaxSize int
	// MaxStringBytes bounds a string made in one Go call, which neither the
	// deadline nor the heap watchdog can interrupt: string.rep, gsub and
	// format, table.concat, and the text of one print, procwalk.log, emit
	// or alert. Default 4 MiB.
	MaxStringBytes int
	// MaxPatternInputBytes bounds the subject string given to
	// string.find, match, gmatch and gsub: a Go-side pattern match cannot be
	// interrupted by the deadline. Default 64 KiB.
	MaxPatternInputBytes int
	// MaxPatternBytes bounds the pattern itself. Default 512 bytes.
	MaxPatternBytes int
	// MaxCoroutines bounds coroutines created in one run. Default 64.
	MaxCoroutines int
	// HeapBudgetBytes is how far the Go heap may grow during one run before
	// the run is cancelled. It is process-wide and coarse (checked every
	// 10 ms). Default 256 MiB.
	HeapBudgetBytes uint64
}

// DefaultLimits returns the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		Timeout:              2 * time.Second,
		CallStackSize:        200,
		RegistrySize:         5120,
		RegistryMaxSize:      65536,
		MaxStringBytes:       4 << 20,
		MaxPatternInputBytes: 64 << 10,
		MaxPatternBytes:      512,
		MaxCoroutines:        64,
		HeapBudgetBytes:      256 << 20,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.CallStackSize > 0 {
		d.CallStackSize = l.CallStackSize
	}
	if l.RegistrySize > 0 {
		d.RegistrySize = l.RegistrySize
	}
	if l.RegistryMaxSize > 0 {
		d.RegistryMaxSize = l.RegistryMaxSize
	}
	if d.RegistryMaxSize < d.RegistrySize {
		d.RegistryMaxSize = d.RegistrySize
	}
	if l.MaxStringBytes > 0 {
		d.MaxStringBytes = l.MaxStringBytes
	}
	if l.MaxPatternInputBytes > 0 {
		d.MaxPatternInputBytes = l.MaxPatternInputBytes
	}
	if l.MaxPatternBytes > 0 {
		d.MaxPatternBytes = l.MaxPatternBytes
	}
	if l.MaxCoroutines > 0 {
		d.MaxCoroutines = l.MaxCoroutines
	}
	if l.HeapBudgetBytes > 0 {
		d.HeapBudgetBytes = l.HeapBudgetBytes
	}
	return d
}
