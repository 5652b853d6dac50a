//go:build linux

package session

import (
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// stickyNames remembers the name each session leader was given, so that
// within one Grouper a name stays with its session for the session's life:
// the third agent in a folder stays "#3" when "#2" exits. A fresh Grouper
// (a new CLI run) knows nothing and numbers again from the processes alone,
// oldest leader first; Session.ID lets a reference notice the difference.
type stickyNames map[procwalk.ProcID]string

// assign names the sessions whose leaders and base names are given, in
// that order (oldest first). A leader keeps its previous name while that
// name still has the same base and no other session took it this gather;
// the others get the base, or base#N with the lowest N >= 2 not in use.
// It returns the names and the memory for the next gather.
func (prev stickyNames) assign(leaders []procwalk.ProcID, bases []string) ([]string, stickyNames) {
	names := make([]string, len(leaders))
	taken := make(map[string]bool, len(leaders))
	for k, l := range leaders {
		if old, ok := prev[l]; ok && !taken[old] && sameBase(old, bases[k]) {
			names[k], taken[old] = old, true
		}
	}
	for k := range leaders {
		if names[k] != "" {
			continue
		}
		name := bases[k]
		for n := 2; taken[name]; n++ {
			name = bases[k] + "#" + strconv.Itoa(n)
		}
		names[k], taken[name] = name, true
	}
	next := make(stickyNames, len(leaders))
	for k, l := range leaders {
		next[l] = names[k]
	}
	return names, next
}

// sameBase reports whether name is base or base#N.
func sameBase(name, base string) bool {
	if name == base {
		return true
	}
	rest, ok := strings.CutPrefix(name, base+"#")
	return ok && allDigits(rest)
}

// stripNumber is the base of a name "base" or "base#N".
func stripNumber(name string) string {
	if i := strings.LastIndexByte(name, '#'); i > 0 && allDigits(name[i+1:]) && i+1 < len(name) {
		return name[:i]
	}
	return name
}
