//go:build linux

package session

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// ErrChanged is wrapped by Find when a "KIND:NAME@ID" reference names
// a session that exists but is no longer the one the ID was taken from: the
// name now belongs to another leader (an agent numbered #2 exited and #3
// took its number, say). Acting on it would hit a session nobody looked at.
var ErrChanged = errors.New("session changed")

// Leader is the session's oldest root (lowest start ticks, then lowest pid):
// the process whose identity the session's ID is derived from. ok is false
// for a session without roots.
func (s *Session) Leader() (id procwalk.ProcID, ok bool) {
	for _, r := range s.Roots {
		if !ok || r.StartTicks < id.StartTicks || (r.StartTicks == id.StartTicks && r.PID < id.PID) {
			id, ok = r, true
		}
	}
	return id, ok
}

// ID is "PID.STARTTICKS" of the Leader, "" when there is none. It is derived
// from the processes alone, so every run (CLI or Monitor) that sees the same
// leader gives the same ID, and a recycled pid gives another one. When the
// leader exits the ID changes although the name may not: a reference with
// the old ID then refuses rather than guesses.
func (s *Session) ID() string {
	l, ok := s.Leader()
	if !ok {
		return ""
	}
	return strconv.Itoa(l.PID) + "." + strconv.FormatUint(l.StartTicks, 10)
}

// RefID is "KIND:NAME@ID", the form to copy when the reference must keep
// naming this very session (kill --session); Ref when there is no ID.
func (s *Session) RefID() string {
	id := s.ID()
	if id == "" {
		return s.Ref()
	}
	return s.Ref() + "@" + id
}

// SplitRefID cuts "NAME@PID.TICKS" into NAME and ID; ok is false when name
// has no such suffix. Names may contain '@' themselves: Find takes a name
// whole when a session has it.
func SplitRefID(name string) (base, id string, ok bool) { return splitID(name) }

func splitID(name string) (base, id string, ok bool) {
	at := strings.LastIndexByte(name, '@')
	if at <= 0 {
		return name, "", false
	}
	pid, ticks, found := strings.Cut(name[at+1:], ".")
	if !found || !allDigits(pid) || !allDigits(ticks) {
		return name, "", false
	}
	return name[:at], name[at+1:], true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// findWithID resolves "NAME@ID" among sessions of kind: the session named
// NAME if its ID is id; ErrSessionChanged if NAME names another session;
// ErrNoSession (listing where the ID went, if anywhere) when NAME is gone.
func findWithID(sessions []Session, ref, kind, name, id string) (*Session, error) {
	var moved *Session
	for i := range sessions {
		s := &sessions[i]
		if s.Kind != kind {
			continue
		}
		if s.Name == name {
			if s.ID() == id {
				return s, nil
			}
			return nil, fmt.Errorf("%w: %s:%s now names %s, not %s (its leader changed); look again and use the new name", ErrChanged, kind, name, s.RefID(), ref)
		}
		if s.ID() == id {
			moved = s
		}
	}
	if moved != nil {
		return nil, fmt.Errorf("%w: %s:%s is gone and session %s is now named %s; look again and use the new name", ErrChanged, kind, name, id, moved.RefID())
	}
	return nil, fmt.Errorf("%w %s: no %s session is named %s any more", ErrNoSession, ref, kind, name)
}
