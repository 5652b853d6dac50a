//go:build linux

package scripting

import "time"

// Limits bound what one run of a script may use. A zero (or negative) field
// means its default, listed by DefaultLimits.
type Limits struct {
	// Timeout is the wall-clock budget of one run. The time kills wait for
	// their targets to exit, from a kill's first signal, is not counted,
	// up to GraceBudget; the rest of a kill call counts. Default 2 s.
	Timeout time.Duration
	// GraceBudget is how long the kills of one run may wait, in all, for
	// their targets to exit: a kill's grace is cut to what is left, and a
	// kill asked for when nothing is left is refused. Default 30 s.
	GraceBudget time.Duration
	// KillsPerRun and KillsPerHour bound the processes a script's kills
	// may signal: a kill whose plan has more targets than are left is
	// refused whole (each target refused_budget). Dry runs do not count.
	// Defaults 5 and 30.
	KillsPerRun  int
	KillsPerHour int
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
	// MaxPrintBytes bounds the text one run writes with print, pw.log and
	// pw.alert; MaxEmitLines and MaxEmitBytes the metrics it emits
	// (pw.emit, pw.alert; MetricBytes). A run past one is stopped.
	// Defaults 16 MiB, 20,000 and 16 MiB.
	MaxPrintBytes int
	MaxEmitLines  int
	MaxEmitBytes  int
	// RetainedBytes is how much more the Go heap may hold after a run than
	// when the Lua state was built, for runtimes whose state lasts from run
	// to run (Config.Mode watch and telegraf): what procwalk.state, globals
	// and kept coroutines hold. Past it the state is dropped. Checked after
	// each run with a cheap reading, and a GC only when that reading is
	// over. Default 64 MiB.
	RetainedBytes uint64
}

// DefaultLimits returns the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		Timeout:              2 * time.Second,
		GraceBudget:          30 * time.Second,
		KillsPerRun:          5,
		KillsPerHour:         30,
		CallStackSize:        200,
		RegistrySize:         5120,
		RegistryMaxSize:      65536,
		MaxStringBytes:       4 << 20,
		MaxPatternInputBytes: 64 << 10,
		MaxPatternBytes:      512,
		MaxCoroutines:        64,
		HeapBudgetBytes:      256 << 20,
		RetainedBytes:        64 << 20,
		MaxPrintBytes:        16 << 20,
		MaxEmitLines:         20000,
		MaxEmitBytes:         16 << 20,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.Timeout, d.Timeout)
	orDefault(&l.GraceBudget, d.GraceBudget)
	orDefault(&l.KillsPerRun, d.KillsPerRun)
	orDefault(&l.KillsPerHour, d.KillsPerHour)
	orDefault(&l.CallStackSize, d.CallStackSize)
	orDefault(&l.RegistrySize, d.RegistrySize)
	orDefault(&l.RegistryMaxSize, d.RegistryMaxSize)
	l.RegistryMaxSize = max(l.RegistryMaxSize, l.RegistrySize)
	orDefault(&l.MaxStringBytes, d.MaxStringBytes)
	orDefault(&l.MaxPatternInputBytes, d.MaxPatternInputBytes)
	orDefault(&l.MaxPatternBytes, d.MaxPatternBytes)
	orDefault(&l.MaxCoroutines, d.MaxCoroutines)
	orDefault(&l.HeapBudgetBytes, d.HeapBudgetBytes)
	orDefault(&l.RetainedBytes, d.RetainedBytes)
	orDefault(&l.MaxPrintBytes, d.MaxPrintBytes)
	orDefault(&l.MaxEmitLines, d.MaxEmitLines)
	orDefault(&l.MaxEmitBytes, d.MaxEmitBytes)
	return l
}

// orDefault sets *v to def when it is zero or negative.
func orDefault[T int | uint64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
