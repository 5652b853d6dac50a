//go:build linux

package scripting

import "errors"

// Sentinel errors. Every error a Runtime returns wraps one of them, so
// callers tell a broken script from a hostile one with errors.Is.
var (
	// ErrCompile means the script does not parse: the message has file:line.
	ErrCompile = errors.New("lua syntax error")
	// ErrScript means the script raised an error while running (a bug in
	// it, or a misuse of the API): the message has file:line.
	ErrScript = errors.New("lua script error")
	// ErrTimeout means a run went past its deadline (Limits.Timeout).
	ErrTimeout = errors.New("lua script timed out")
	// ErrMemory means a run pushed the Go heap past Limits.HeapBudgetBytes.
	ErrMemory = errors.New("lua script exceeded its memory budget")
	// ErrRetained means that after a run the state of a watch or telegraf
	// script kept more than Limits.RetainedBytes: it was dropped. It comes
	// with ErrMemory.
	ErrRetained = errors.New("lua state kept too much from run to run")
	// ErrLimit means a run hit another sandbox limit: call depth, stack
	// size, string size, coroutine count or pattern input size.
	ErrLimit = errors.New("lua script hit a sandbox limit")
	// ErrNotFound means a script name matched no file and no bundled script.
	ErrNotFound = errors.New("lua script not found")
)
