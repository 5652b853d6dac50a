//go:build linux

package session

import (
	"maps"
	"slices"

	"github.com/procwalk/procwalk/procwalk"
)

// build.go makes sessions by hand, for what has no kind of its own to
// group it: the frames a rule test describes (scripting/ruletest), where a
// session is whatever the test says it holds.

// Build returns the session kind:name of members, processes of s (those
// s lacks are left out), as a Grouper makes one: members in pid order,
// roots, totals. Its cumulative counters are Counters' to keep.
func Build(s *procwalk.Snapshot, kind, name string, attrs map[string]string, members []procwalk.ProcID) Session {
	ss := Session{Kind: kind, Name: name, Attrs: maps.Clone(attrs)}
	in := make(map[procwalk.ProcID]bool, len(members))
	for _, id := range members {
		if s.Lookup(id) != nil {
			in[id] = true
		}
	}
	for id := range in {
		ss.Members = append(ss.Members, id)
	}
	slices.SortFunc(ss.Members, func(a, b procwalk.ProcID) int { return a.PID - b.PID })
	for _, id := range ss.Members {
		p := s.Lookup(id)
		ss.Totals.add(p)
		if parent := s.Process(p.PPID); parent == nil || !in[parent.ID] {
			ss.Roots = append(ss.Roots, id)
		}
	}
	return ss
}

// Counters keeps the cumulative counters (CPU time, IO) of sessions made
// by Build from one snapshot to the next, as a Grouper keeps its own.
// The zero value is ready.
type Counters struct{ c cumulative }

// Update sets the cumulative counters of sessions, the sessions of s.
func (c *Counters) Update(s *procwalk.Snapshot, sessions []Session) { c.c.update(s, sessions) }
