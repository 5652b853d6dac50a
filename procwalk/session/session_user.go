//go:build linux

package session

import (
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
)

// session_user.go builds one session per effective uid, the user ps's
// USER column shows, from the owner of every process's /proc/<pid>
// (FieldOwner): one stat a process. The real uid would cost a status read
// a process, the kernel formatting some 55 lines, for the few processes
// whose uids differ (a setuid program run by another user).

// KindUser is an effective uid.
const KindUser = "user"

type userKind struct{}

func (userKind) name() string { return KindUser }

func (userKind) plan(*Grouper) kindPlan { return kindPlan{every: procwalk.FieldOwner} }

// tagAttrs: the user's name, for dashboards to group by.
func (userKind) tagAttrs() []string { return []string{AttrUser} }

func (userKind) numberAttrs() []string { return []string{AttrUID} }

// info: "uid 1000".
func (userKind) info(s *Session) []string { return []string{"uid " + s.Attrs[AttrUID]} }

// group builds one session per effective uid; none when the snapshot
// lacks the owners (Group notes it).
func (userKind) group(x *grouping) []Session {
	s := x.s
	if s.Fields&(procwalk.FieldOwner|procwalk.FieldStatus) == 0 {
		return nil
	}
	b := newBuilder(s, KindUser)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.Read&procwalk.FieldOwner == 0 {
			continue
		}
		si, ok := index[p.EffectiveUID]
		if !ok {
			uid := strconv.Itoa(p.EffectiveUID)
			name := x.g.cfg.Users.Name(p.EffectiveUID)
			si = b.add(name, map[string]string{AttrUser: name, AttrUID: uid})
			index[p.EffectiveUID] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}
