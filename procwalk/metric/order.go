//go:build linux

package metric

import (
	"cmp"
	"slices"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// order.go is the catalogue's sort keys: ps and sessions --sort, by any
// name of a metric, or by pid (and a session's name), ordered by the one
// rule of Sort and SortSessions.

// ShortNames are the first short name of each of metrics that has one,
// ids (tty, euid) aside: the sort keys a help lists.
func ShortNames(metrics []Desc) []string {
	var names []string
	for _, d := range metrics {
		if len(d.Aliases) > 0 && !d.ID {
			names = append(names, d.Aliases[0])
		}
	}
	return names
}

// ProcessOrder is one sort key of processes: a process metric, or pid.
type ProcessOrder struct {
	Name string // as given, lower case
	By   *Desc  // nil: by pid, ascending
}

// ProcessSortNames are the process sort keys a help lists: the short
// names of the process metrics, and pid. Any name of a process metric
// (rss_bytes) is a key too.
func ProcessSortNames() []string {
	return append(ShortNames(Processes()), "pid")
}

// ParseProcessOrder is the process sort key called name (any case, spaces
// around ignored); ok is false when no process metric and not pid, the
// order then holding the name as read.
func ParseProcessOrder(name string) (o ProcessOrder, ok bool) {
	o.Name = normal(name)
	if o.Name == "pid" {
		return o, true
	}
	if d, ok := Lookup(o.Name); ok && d.OfProcess() && d.Name != "pid" {
		o.By = &d
		return o, true
	}
	return o, false
}

// Needs are the fields the order's metric needs read (none for pid).
func (o ProcessOrder) Needs() procwalk.Fields {
	if o.By == nil {
		return 0
	}
	return o.By.Needs
}

// NeedsRates reports whether the order's metric is a rate: two samples.
func (o ProcessOrder) NeedsRates() bool { return o.By != nil && o.By.Kind == Rate }

// Sort orders procs by the metric (Sort: largest first, those without a
// value last, ties by pid), or by pid.
func (o ProcessOrder) Sort(s *procwalk.Snapshot, procs []*procwalk.Process) {
	if o.By == nil {
		slices.SortFunc(procs, func(a, b *procwalk.Process) int { return cmp.Compare(a.ID.PID, b.ID.PID) })
		return
	}
	Sort(s, procs, o.By)
}

// SessionOrder is one sort key of sessions: a session metric, name or
// pid.
type SessionOrder struct {
	Name string
	By   *Desc                           // nil: by cmp
	cmp  func(a, b *session.Session) int // negative when a goes first
}

// SessionSortNames are the session sort keys a help lists: the short
// names of the session metrics, name and pid. Any name of a session
// metric is a key too.
func SessionSortNames() []string {
	return append(ShortNames(Sessions()), "name", "pid")
}

// ParseSessionOrder is the session sort key called name: name keeps the
// grouping's kind and name order, pid orders by each session's lowest
// member's pid (an ended agent's row, without members, first); ok is
// false when it is neither and no session metric.
func ParseSessionOrder(name string) (o SessionOrder, ok bool) {
	o.Name = name
	switch name {
	case "name":
		o.cmp = func(a, b *session.Session) int { return 0 } // the kind, name order Group returns
		return o, true
	case "pid":
		o.cmp = func(a, b *session.Session) int { return cmp.Compare(firstPID(a), firstPID(b)) }
		return o, true
	}
	if d, ok := Lookup(name); ok && d.OfSession() {
		o.By = &d
		return o, true
	}
	return o, false
}

// DefaultSessionOrder is the order of a list of sessions of kinds when
// none is asked for: a list of agents alone keeps the agents' stable order
// (name: each keeps its place, new ones come last); else the largest
// memory first, by PSS when it is read (pss), by RSS otherwise.
func DefaultSessionOrder(kinds []string, pss bool) SessionOrder {
	name := "rss"
	switch {
	case slices.Equal(kinds, []string{session.KindAgent}):
		name = "name"
	case pss:
		name = "pss"
	}
	o, _ := ParseSessionOrder(name)
	return o
}

// Sort orders sessions stably, ties keeping Group's kind and name order:
// by a metric, SortSessions' rule (largest first, a session without a
// value after every one with a value); read and now are those of the
// snapshot the sessions were grouped from.
func (o SessionOrder) Sort(sessions []session.Session, read procwalk.Fields, now time.Time) {
	if o.By != nil {
		SortSessions(sessions, o.By, read, now)
		return
	}
	slices.SortStableFunc(sessions, func(a, b session.Session) int { return o.cmp(&a, &b) })
}

// firstPID is the lowest member's pid, 0 for an ended agent's row.
func firstPID(s *session.Session) int {
	if len(s.Members) == 0 {
		return 0
	}
	return s.Members[0].PID
}
