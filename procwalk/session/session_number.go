//go:build linux

package session

import (
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
)

// session_number.go builds the sessions named by a number every process
// carries in its stat: Linux session ids and process groups.

// Kinds named by a number.
const (
	KindSID  = "sid"  // a Linux session id (setsid)
	KindPGRP = "pgrp" // a process group (a shell job)
)

// numberKind is one session per value of key, named by the number, with
// the leader's comm when the leader is alive.
type numberKind struct {
	kind string
	key  func(*procwalk.Process) int
}

func sidOf(p *procwalk.Process) int  { return p.SID }
func pgrpOf(p *procwalk.Process) int { return p.PGRP }

func (k numberKind) name() string                { return k.kind }
func (k numberKind) plan(*Grouper) kindPlan      { return kindPlan{} }
func (k numberKind) tagAttrs() []string          { return nil }
func (k numberKind) numberAttrs() []string       { return nil }
func (k numberKind) group(x *grouping) []Session { return groupByNumber(x.s, k.kind, k.key) }

// info: "leader bash, pts/3", "leader gone".
func (k numberKind) info(s *Session) []string {
	parts := []string{"leader gone"}
	if l := s.Attrs[AttrLeader]; l != "" {
		parts[0] = "leader " + l
	}
	if tty := s.Attrs[AttrTTY]; tty != "" {
		parts = append(parts, tty)
	}
	return parts
}

// groupByNumber builds one session per value of key (sid, pgrp), named by
// the number, with the leader's comm when the leader is alive.
func groupByNumber(s *procwalk.Snapshot, kind string, key func(*procwalk.Process) int) []Session {
	b := newBuilder(s, kind)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		k := key(p)
		if p.Kernel || k <= 0 {
			continue
		}
		si, ok := index[k]
		if !ok {
			attrs := map[string]string{}
			if leader := s.Process(k); leader != nil && !leader.Kernel {
				attrs[AttrLeader] = leader.Comm
			}
			if p.TTY != 0 {
				attrs[AttrTTY] = TTYName(p.TTY)
			}
			si = b.add(strconv.Itoa(k), attrs)
			index[k] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}
