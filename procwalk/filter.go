//go:build linux

package procwalk

import (
	"regexp"
	"strings"
)

// filter.go selects processes as pgrep does: by owner, by a word or a
// regular expression in the name or the command line, kernel threads
// left out unless asked for.

// Filter selects processes. Filter{UID: AnyOwner} selects every process
// but kernel threads; the zero value selects root's (UID 0).
type Filter struct {
	Kernel bool // kernel threads too
	// UID selects the processes whose effective uid it is (ps's USER);
	// -1 or less: any owner. A process whose owner was not read
	// (FieldOwner) never matches a UID.
	UID int
	// Contains selects the processes whose comm or command line (argv
	// joined by spaces) holds it; "": any.
	Contains string
	// Regexp selects the processes whose comm or command line it
	// matches; nil: any.
	Regexp *regexp.Regexp
}

// AnyOwner is Filter.UID for processes of any owner.
const AnyOwner = -1

// Match reports whether f selects p.
func (f Filter) Match(p *Process) bool {
	if p.Kernel && !f.Kernel {
		return false
	}
	if f.UID >= 0 && (p.Read&FieldOwner == 0 || p.EffectiveUID != f.UID) {
		return false // an owner we could not read never matches
	}
	if f.Contains == "" && f.Regexp == nil {
		return true
	}
	cmdline := strings.Join(p.Cmdline, " ")
	if f.Contains != "" && !strings.Contains(p.Comm, f.Contains) && !strings.Contains(cmdline, f.Contains) {
		return false
	}
	return f.Regexp == nil || f.Regexp.MatchString(p.Comm) || f.Regexp.MatchString(cmdline)
}
