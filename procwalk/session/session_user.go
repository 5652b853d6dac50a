//go:build linux

package session

import (
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
)

// session_user.go builds one session per real uid, from every process's
// status.

// KindUser is a real uid.
const KindUser = "user"

type userKind struct{}

func (userKind) name() string { return KindUser }

func (userKind) plan(*Grouper) kindPlan { return kindPlan{every: procwalk.FieldStatus} }

// tagAttrs: the user's name, for dashboards to group by.
func (userKind) tagAttrs() []string { return []string{AttrUser} }

func (userKind) numberAttrs() []string { return []string{AttrUID} }

// info: "uid 1000".
func (userKind) info(s *Session) []string { return []string{"uid " + s.Attrs[AttrUID]} }

// group builds one session per real uid; none when the snapshot lacks
// status (Group notes it).
func (userKind) group(x *grouping) []Session {
	s := x.s
	if s.Fields&procwalk.FieldStatus == 0 {
		return nil
	}
	b := newBuilder(s, KindUser)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.Read&procwalk.FieldStatus == 0 {
			continue
		}
		si, ok := index[p.RealUID]
		if !ok {
			uid := strconv.Itoa(p.RealUID)
			name := x.g.cfg.Users.Name(p.RealUID)
			si = b.add(name, map[string]string{AttrUser: name, AttrUID: uid})
			index[p.RealUID] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}
