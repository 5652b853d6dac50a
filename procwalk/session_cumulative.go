package procwalk

// session_cumulative.go keeps the cumulative counters of sessions across
// gathers, in the manner of process-exporter: each session accumulates the
// per-member increase of each counter, so a member exiting takes nothing away.

// cumulative is the Grouper's memory of each session's counters.
type cumulative struct {
	sessions map[sessionKey]*sessionCounters
}

type sessionKey struct{ kind, name string }

type sessionCounters struct {
	cpuSeconds            float64
	readBytes, writeBytes uint64
	members               map[ProcID]memberCounters
	live                  bool // present in the current gather
}

// memberCounters is a member's counters when last seen, and its parent, to
// recognise the parent that reaps it.
type memberCounters struct {
	cpuSeconds            float64
	readBytes, writeBytes uint64
	haveIO                bool
	parent                ProcID
	// credit is IO the kernel will add to this member when it reaps a child
	// member whose IO was counted already: discounted from its next increase.
	creditRead, creditWrite uint64
}

// update adds each session's counter increases since the previous gather and
// writes the cumulative values into the sessions' totals.
func (c *cumulative) update(s *Snapshot, sessions []Session) {
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
			sc = &sessionCounters{members: make(map[ProcID]memberCounters, len(ss.Members))}
			c.sessions[key] = sc
		}
		sc.live = true
		c.updateSession(s, ss, sc)
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

func (c *cumulative) updateSession(s *Snapshot, ss *Session, sc *sessionCounters) {
	// Members that exited since the last gather: the kernel adds their IO to
	// the parent that reaps them, so when the parent is a member too, credit
	// it with what was counted already, to be discounted from its increase.
	for id, old := range sc.members {
		if !old.haveIO || s.Lookup(id) != nil {
			continue // no IO counted, or alive (maybe moved to another session)
		}
		if par, ok := sc.members[old.parent]; ok && par.haveIO && s.Lookup(old.parent) != nil {
			par.creditRead += old.readBytes
			par.creditWrite += old.writeBytes
			sc.members[old.parent] = par
		}
	}
	next := make(map[ProcID]memberCounters, len(ss.Members))
	for _, id := range ss.Members {
		p := s.Lookup(id)
		if p == nil {
			continue
		}
		cur := memberCounters{cpuSeconds: p.CPUSeconds(), haveIO: p.Read&FieldIO != 0}
		if cur.haveIO {
			cur.readBytes, cur.writeBytes = p.IO.ReadBytes, p.IO.WriteBytes
		}
		if par := s.Parent(id.PID); par != nil {
			cur.parent = par.ID
		}
		old, known := sc.members[id]
		if !known {
			// First gather, or a newcomer since the last one: what it used so
			// far was used here (a new process starts at zero; one that
			// moved in brings its history, which is counted here too).
			sc.cpuSeconds += cur.cpuSeconds
			sc.readBytes += cur.readBytes
			sc.writeBytes += cur.writeBytes
			next[id] = cur
			continue
		}
		sc.cpuSeconds += increase(cur.cpuSeconds, old.cpuSeconds)
		if cur.haveIO && old.haveIO {
			cur.creditRead, cur.creditWrite = old.creditRead, old.creditWrite
			sc.readBytes += discount(cur.readBytes-min(cur.readBytes, old.readBytes), &cur.creditRead)
			sc.writeBytes += discount(cur.writeBytes-min(cur.writeBytes, old.writeBytes), &cur.creditWrite)
		}
		// IO readable now but not before (or the reverse): nothing to
		// compare with; the next gather counts from here.
		next[id] = cur
	}
	sc.members = next
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
