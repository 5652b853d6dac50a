//go:build linux

package session

import "github.com/procwalk/procwalk/procwalk"

// session_tty.go builds one session per controlling terminal.

// KindTTY is a controlling terminal.
const KindTTY = "tty"

type ttyKind struct{}

func (ttyKind) name() string                { return KindTTY }
func (ttyKind) plan(*Grouper) kindPlan      { return kindPlan{} }
func (ttyKind) tagAttrs() []string          { return nil }
func (ttyKind) numberAttrs() []string       { return nil }
func (ttyKind) info(*Session) []string      { return nil }
func (ttyKind) group(x *grouping) []Session { return groupTTY(x.s) }

// groupTTY builds one session per controlling terminal.
func groupTTY(s *procwalk.Snapshot) []Session {
	b := newBuilder(s, KindTTY)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.TTY == 0 {
			continue
		}
		si, ok := index[p.TTY]
		if !ok {
			si = b.add(TTYName(p.TTY), map[string]string{})
			index[p.TTY] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}
