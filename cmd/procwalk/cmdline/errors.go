//go:build linux

package cmdline

import (
	"errors"
	"fmt"
	"strings"
)

// errors.go is how a command's errors carry their exit code and the flag
// whose value they are about, so that the value's source can be named.

// ExitUsage is the exit code of an error in the command line: bad flags or
// arguments.
const ExitUsage = 2

// Error ends a program with Code after printing Err (when not nil: a nil
// Err is an error already said).
type Error struct {
	Code int
	Err  error
	Flag string // the flag whose value Err is about, if any (Sources.Rename)
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Usagef is an error in the command line (ExitUsage), formatted as by
// fmt.Errorf. A message that starts with "--NAME" is about flag NAME's
// value (Error.Flag): Sources.Rename names the env var or the config
// file's line that value came from.
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...), Flag: flagOf(format)}
}

// UsageError is err, an error in the command line, as Usagef's.
func UsageError(err error) error {
	return &Error{Code: ExitUsage, Err: err, Flag: flagOf(err.Error())}
}

// flagOf is NAME when s starts with "--NAME", else "".
func flagOf(s string) string {
	rest, ok := strings.CutPrefix(s, "--")
	if !ok {
		return ""
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return !(r == '-' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	if end < 0 {
		end = len(rest)
	}
	return rest[:end]
}

// Rename rewrites err, an *Error about a flag's value (Error.Flag), to
// name where that value came from when it was an env var or a line of the
// config file (Named); other errors, and values from the command line,
// pass unchanged.
func (s *Sources) Rename(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Flag == "" || e.Err == nil {
		return err
	}
	msg, ok := s.Named(e.Flag, e.Err.Error())
	if !ok {
		return err
	}
	return &Error{Code: e.Code, Err: errors.New(msg)}
}
