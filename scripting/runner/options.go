//go:build linux

package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// options.go checks a script's settings as a command line gives them: its
// limits and its protected names. An error names the flag that set the bad
// value (OptionError), as session.OptionError names a session option's.

// OptionError is a bad script setting. Flag is the procwalk flag that sets
// it, without its dashes ("script-timeout"); Value, when set, is the bad
// value as the flag shows it.
type OptionError struct {
	Flag  string
	Value string
	Err   error
}

// Error is "--FLAG VALUE: why", or "--FLAG: why" without a value: a
// message that starts with the flag, which the CLI rewrites to name the
// variable or config file line the value came from.
func (e *OptionError) Error() string {
	if e.Value != "" {
		return "--" + e.Flag + " " + e.Value + ": " + e.Err.Error()
	}
	return "--" + e.Flag + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// Limits are a script's limits as procwalk's flags set them, each field
// the flag named in its comment. Check turns them into the runtime's
// scripting.Limits.
type Limits struct {
	Timeout      time.Duration // --script-timeout
	GraceBudget  time.Duration // --script-grace-budget
	KillsPerRun  int           // --script-kills-per-run
	KillsPerHour int           // --script-kills-per-hour
	// MemoryBytes and RetainedBytes (--script-memory, --script-retained)
	// are passed on unchecked: zero is the runtime's default.
	MemoryBytes   uint64
	RetainedBytes uint64
	PrintBytes    uint64 // --script-print-bytes; zero: the default
	EmitLines     int    // --script-emit-lines
	EmitBytes     uint64 // --script-emit-bytes; zero: the default
}

// MaxEmitLines is the most --script-emit-lines may be.
const MaxEmitLines = 10_000_000

// Check checks l and returns the runtime's limits. A bad value is an
// *OptionError naming its flag; the first bad one in the order of the
// fields is reported.
func (l Limits) Check() (scripting.Limits, error) {
	bad := func(flag string, value any, format string, args ...any) (scripting.Limits, error) {
		return scripting.Limits{}, &OptionError{Flag: flag, Value: fmt.Sprint(value), Err: fmt.Errorf(format, args...)}
	}
	switch {
	case l.Timeout <= 0:
		return bad("script-timeout", l.Timeout, "want a positive duration such as 2s")
	case l.GraceBudget <= 0:
		return bad("script-grace-budget", l.GraceBudget, "want a positive duration such as 30s")
	case l.KillsPerRun <= 0:
		return bad("script-kills-per-run", l.KillsPerRun, "want 1 or more (--dry-run turns every kill into a report)")
	case l.KillsPerHour < l.KillsPerRun:
		return bad("script-kills-per-hour", l.KillsPerHour, "want at least --script-kills-per-run (%d)", l.KillsPerRun)
	case l.EmitLines < 1 || l.EmitLines > MaxEmitLines:
		return bad("script-emit-lines", l.EmitLines, "want 1 to %d", MaxEmitLines)
	}
	return scripting.Limits{Timeout: l.Timeout, GraceBudget: l.GraceBudget, KillsPerRun: l.KillsPerRun, KillsPerHour: l.KillsPerHour,
		HeapBudgetBytes: l.MemoryBytes, RetainedBytes: l.RetainedBytes,
		MaxPrintBytes: int(l.PrintBytes), MaxEmitLines: l.EmitLines, MaxEmitBytes: int(l.EmitBytes)}, nil
}

// Protected is the list of names a script's kills never touch: kill's
// default list plus protect (--protect, globs), nil when protect is empty
// (the default list). A bad glob is an *OptionError of --protect.
func Protected(protect []string) ([]string, error) {
	p, err := kill.ProtectedPlus(protect)
	if err != nil {
		return nil, &OptionError{Flag: "protect", Err: err}
	}
	return p, nil
}

// Hint adds to a run's error the flag that raises the limit it hit.
func Hint(err error) error {
	switch {
	case errors.Is(err, scripting.ErrTimeout):
		return fmt.Errorf("%w (raise --script-timeout, or do less per run)", err)
	case errors.Is(err, scripting.ErrRetained):
		return fmt.Errorf("%w (raise --script-retained, or keep less in procwalk.state and globals)", err)
	case errors.Is(err, scripting.ErrMemory):
		return fmt.Errorf("%w (raise --script-memory, or keep less per run)", err)
	}
	return err
}
