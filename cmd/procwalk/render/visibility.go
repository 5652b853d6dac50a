//go:build linux

package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// visibility.go says what a snapshot could not see.

// VisibilityNote says in one line what a snapshot could not see, as seen
// by a procwalk of effective uid euid, or ""
// when it saw everything. Commands print it to stderr after their output,
// so that a partial picture is never mistaken for the whole.
func VisibilityNote(s *procwalk.Snapshot, euid int) string {
	v := s.Visibility
	var parts []string
	if v.Gone > 0 {
		parts = append(parts, CountOf(v.Gone, "process", "processes")+" exited mid-scan")
	}
	if v.Malformed > 0 {
		// Listed processes neither gone, nor refused, nor in Procs had a
		// stat or statm that did not parse.
		dropped := v.Listed - v.Gone - len(s.Procs) - v.Denied["stat"] - v.Denied["statm"]
		parts = append(parts, fmt.Sprintf("%s with malformed /proc files (%d left out: bad stat or statm)",
			CountOf(v.Malformed, "process", "processes"), max(dropped, 0)))
	}
	fields := make([]string, 0, len(v.Denied))
	for f := range v.Denied {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	// The files refused for the same number of processes go in one clause,
	// and the reason, the same for every file, is said once: "cwd, exe and
	// io denied for 1 process (...)".
	var counts []int
	byCount := map[int][]string{}
	for _, f := range fields {
		n := v.Denied[f]
		if f == "stat" || f == "statm" {
			// Without stat or statm a process is left out entirely.
			parts = append(parts, fmt.Sprintf("%s denied for %s, left out (hidepid: run as root)", f, CountOf(n, "process", "processes")))
			continue
		}
		if byCount[n] == nil {
			counts = append(counts, n)
		}
		byCount[n] = append(byCount[n], f)
	}
	if len(counts) > 0 {
		clauses := make([]string, len(counts))
		for i, n := range counts {
			clauses[i] = andList(byCount[n]) + " denied for " + CountOf(n, "process", "processes")
		}
		parts = append(parts, strings.Join(clauses, ", ")+" ("+deniedHint(euid)+")")
	}
	if v.TimedOut > 0 {
		parts = append(parts, CountOf(v.TimedOut, "process", "processes")+" with a read blocked past "+procwalk.DefaultReadTimeout.String()+" (a stuck memory map?): stat and statm only, or left out")
	}
	if v.OthersHidden {
		parts = append(parts, fmt.Sprintf("proc is mounted hidepid=%s: other users' processes may be missing (run as root)", v.HidePID))
	}
	if len(parts) == 0 {
		return ""
	}
	return "partial data: " + strings.Join(parts, "; ")
}

// andList is "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// deniedHint says why the kernel refused a file: ptrace access, which root
// has, except over processes of another user namespace or outside
// procwalk's reach (a sandbox's pid 1, a non-dumpable process under
// Yama ptrace_scope, a container runtime's init).
func deniedHint(euid int) string {
	if euid == 0 {
		return "refused even to root: a process of another user namespace or a protected one"
	}
	return "needs ptrace access: root or the process's user"
}
