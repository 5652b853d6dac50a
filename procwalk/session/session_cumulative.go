//go:build linux

package session

import (
	"cmp"
	"slices"

	"github.com/procwalk/procwalk/procwalk"
)

// session_cumulative.go keeps the cumulative counters of sessions across
// gathers, in the manner of process-exporter: each session accumulates the
// per-member increase of each counter, so a member exiting takes nothing away.

// cumulative is the Grouper's memory of each session's counters.
type cumulative struct {
	sessions map[sessionKey]*sessionCounters
	// next is where a session's members are listed before they replace
	// the old ones: one list for all sessions, rather than a spare one
	// kept by each (at 10,000 processes each is in two or three sessions:
	// megabytes of a live view's memory).
	next memberList
}

type sessionKey struct{ kind, name string }

type sessionCounters struct {
	cpuSeconds            float64
	readBytes, writeBytes uint64
	members               memberList // ascending pid, as Session.Members
	// credits is IO the kernel will add to a member when it reaps a child
	// member whose IO was counted already: discounted from its next
	// increase. Few members ever have one: a map, not a field of each.
	credits map[procwalk.ProcID]ioCredit
	live    bool // present in the current gather
}

// memberList is the counters of a session's members, ascending pid: what
// every member has in counters, their io in io, which stays empty while
// no member's io was read (a daemon reads none by default: 24 bytes a
// member, not 48, kept for every member of every session).
type memberList struct {
	counters []memberCounters
	io       []memberIO // empty, or one per member
}

// memberCounters is a member's counters when last seen, and its parent's
// pid, to recognise the parent that reaps it. Kept for every member of
// every session: small (pids fit in 32 bits, pid_max is at most 2^22).
type memberCounters struct {
	pid, parentPID int32
	startTicks     uint64
	cpuSeconds     float64
}

// memberIO is a member's io counters when last seen (have: they were read).
type memberIO struct {
	readBytes, writeBytes uint64
	have                  bool
}

// id is the member's process id.
func (m *memberCounters) id() procwalk.ProcID {
	return procwalk.ProcID{PID: int(m.pid), StartTicks: m.startTicks}
}

func (l *memberList) len() int { return len(l.counters) }

// ioAt is the i-th member's io (have false when not read).
func (l *memberList) ioAt(i int) memberIO {
	if i < len(l.io) {
		return l.io[i]
	}
	return memberIO{}
}

// reset empties l for n members, in one allocation where it must grow
// (not append's doublings).
func (l *memberList) reset(n int) {
	l.counters = slices.Grow(l.counters[:0], n)
	l.io = l.io[:0]
}

// add appends a member.
func (l *memberList) add(c memberCounters, io memberIO) {
	l.counters = append(l.counters, c)
	if !io.have && len(l.io) == 0 {
		return // no member's io so far
	}
	if n := len(l.counters) - 1; len(l.io) < n {
		// The first member with io: the ones before it have none.
		l.io = slices.Grow(l.io, cap(l.counters))[:n]
		clear(l.io)
	}
	l.io = append(l.io, io)
}

// ioCredit is IO to discount from a member's next increases.
type ioCredit struct{ read, write uint64 }

// update adds each session's counter increases since the previous gather and
// writes the cumulative values into the sessions' totals.
func (c *cumulative) update(s *procwalk.Snapshot, sessions []Session) {
	if c.sessions == nil {
		c.sessions = make(map[sessionKey]*sessionCounters)
	}
	for _, sc := range c.sessions {
		sc.live = false
	}
	for i := range sessions {
		ss := &sessions[i]
		key := sessionKey{ss.Kind, ss.Name}
		sc := c.sessions[key]
		if sc == nil {
			sc = &sessionCounters{}
			c.sessions[key] = sc
		}
		sc.live = true
		sc.update(s, ss, &c.next)
		// A sum of many float seconds gathers noise (953.2900000000001)
		// that would only grow from gather to gather. Every term is whole
		// clock ticks, so the exact sum is too: round to the tick.
		sc.cpuSeconds = s.Host.RoundToTicks(sc.cpuSeconds)
		ss.Totals.CumulativeCPUSeconds = sc.cpuSeconds
		ss.Totals.CumulativeReadBytes = sc.readBytes
		ss.Totals.CumulativeWriteBytes = sc.writeBytes
	}
	for key, sc := range c.sessions {
		if !sc.live {
			delete(c.sessions, key) // gone: it starts afresh if it returns
		}
	}
}

// sumCounters writes into the sessions' totals the cumulative counters of
// a first gather, which has no memory: the sums of the members' current
// counters, as update makes them, without keeping each member's for a next.
func sumCounters(s *procwalk.Snapshot, sessions []Session) {
	for i := range sessions {
		ss := &sessions[i]
		var cpu float64
		var read, write uint64
		for m := range ss.Members {
			p := ss.member(s, m)
			if p == nil {
				continue
			}
			cpu += p.CPUSeconds()
			if p.Read&procwalk.FieldIO != 0 {
				read += p.IO.ReadBytes
				write += p.IO.WriteBytes
			}
		}
		ss.Totals.CumulativeCPUSeconds = s.Host.RoundToTicks(cpu)
		ss.Totals.CumulativeReadBytes = read
		ss.Totals.CumulativeWriteBytes = write
	}
}

// update adds the session's increases since the last gather, listing its
// members in next (emptied; left for the next session's use).
func (sc *sessionCounters) update(s *procwalk.Snapshot, ss *Session, next *memberList) {
	// Members that exited since the last gather: the kernel adds their IO to
	// the parent that reaps them, so when the parent is a member still
	// alive, credit it with what was counted already, to be discounted from
	// its increase.
	for i := range sc.members.io {
		old, oldIO := &sc.members.counters[i], sc.members.io[i]
		if !oldIO.have || s.Lookup(old.id()) != nil {
			continue // no IO counted, or alive (maybe moved to another session)
		}
		if j := sc.members.index(int(old.parentPID)); j >= 0 && sc.members.ioAt(j).have && s.Lookup(sc.members.counters[j].id()) != nil {
			if sc.credits == nil {
				sc.credits = map[procwalk.ProcID]ioCredit{}
			}
			parent := sc.members.counters[j].id()
			c := sc.credits[parent]
			c.read += oldIO.readBytes
			c.write += oldIO.writeBytes
			sc.credits[parent] = c
		}
	}
	next.reset(len(ss.Members))
	j := 0 // cursor in sc.members: both lists ascend by pid
	olds := sc.members.counters
	for m, id := range ss.Members {
		p := ss.member(s, m)
		if p == nil {
			continue
		}
		cur := memberCounters{pid: int32(id.PID), parentPID: int32(p.PPID), startTicks: id.StartTicks, cpuSeconds: p.CPUSeconds()}
		var curIO memberIO
		if p.Read&procwalk.FieldIO != 0 {
			curIO = memberIO{p.IO.ReadBytes, p.IO.WriteBytes, true}
		}
		for j < len(olds) && int(olds[j].pid) < id.PID {
			j++
		}
		if j >= len(olds) || olds[j].id() != id {
			// First gather, or a newcomer since the last one: what it used so
			// far was used here (a new process starts at zero; one that
			// moved in brings its history, which is counted here too).
			sc.cpuSeconds += cur.cpuSeconds
			sc.readBytes += curIO.readBytes
			sc.writeBytes += curIO.writeBytes
			next.add(cur, curIO)
			continue
		}
		sc.cpuSeconds += increase(cur.cpuSeconds, olds[j].cpuSeconds)
		if oldIO := sc.members.ioAt(j); curIO.have && oldIO.have {
			c, ok := sc.credits[id]
			sc.readBytes += discount(curIO.readBytes-min(curIO.readBytes, oldIO.readBytes), &c.read)
			sc.writeBytes += discount(curIO.writeBytes-min(curIO.writeBytes, oldIO.writeBytes), &c.write)
			if ok {
				sc.credits[id] = c
			}
		}
		// IO readable now but not before (or the reverse): nothing to
		// compare with; the next gather counts from here.
		next.add(cur, curIO)
	}
	sc.members.keep(next)
	for id, c := range sc.credits {
		if i := sc.members.index(id.PID); c == (ioCredit{}) || i < 0 || sc.members.counters[i].id() != id || !sc.members.ioAt(i).have {
			delete(sc.credits, id) // used up, or its member left or lost its IO
		}
	}
}

// keep makes l a copy of next, which stays the shared list for the next
// session.
func (l *memberList) keep(next *memberList) {
	switch {
	case l.counters == nil && cap(next.counters) <= 2*len(next.counters)+64:
		// A session new to this gather (each of a one-shot command's, in
		// its only gather) takes next's storage rather than a copy of it;
		// the next session's reset allocates what the copy would have.
		*l, *next = *next, memberList{}
	default:
		// The old list's storage takes the new one when it holds it: each
		// session keeps one list, next serves them all.
		l.counters = append(l.counters[:0], next.counters...)
		l.io = append(l.io[:0], next.io...)
		if cap(l.counters) > 2*len(l.counters)+64 {
			l.counters = slices.Clip(slices.Clone(l.counters)) // shrunk a lot: let the old storage go
		}
		if cap(l.io) > 2*len(l.io)+64 {
			l.io = slices.Clip(slices.Clone(l.io))
		}
	}
}

// index finds pid in l (ascending pid), or -1.
func (l *memberList) index(pid int) int {
	i, ok := slices.BinarySearchFunc(l.counters, pid, func(m memberCounters, pid int) int { return cmp.Compare(int(m.pid), pid) })
	if !ok {
		return -1
	}
	return i
}

// increase is cur-old, never negative.
func increase(cur, old float64) float64 {
	if cur > old {
		return cur - old
	}
	return 0
}

// discount takes what it can of d from *credit and returns the rest.
func discount(d uint64, credit *uint64) uint64 {
	take := min(d, *credit)
	*credit -= take
	return d - take
}

// member returns the m-th member of ss in s, which ss was grouped from (nil
// if it is not there: a Session built by hand).
func (ss *Session) member(s *procwalk.Snapshot, m int) *procwalk.Process {
	if m < len(ss.index) {
		if i := int(ss.index[m]); i < len(s.Procs) && s.Procs[i].ID == ss.Members[m] {
			return &s.Procs[i]
		}
	}
	return s.Lookup(ss.Members[m])
}
