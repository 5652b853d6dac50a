//go:build linux

package session

import (
	"errors"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

func TestFindWithID(t *testing.T) {
	// A third agent in one folder took "#2" after the second exited.
	sessions := []Session{
		{Kind: KindAgent, Name: "claude/myproj", Roots: []procwalk.ProcID{{PID: 300, StartTicks: 1000}}},
		{Kind: KindAgent, Name: "claude/myproj#2", Roots: []procwalk.ProcID{{PID: 320, StartTicks: 3000}}},
		{Kind: KindTmux, Name: "a@1.2", Roots: []procwalk.ProcID{{PID: 400, StartTicks: 50}, {PID: 401, StartTicks: 40}}},
	}
	if got := sessions[2].ID(); got != "401.40" {
		t.Errorf("ID = %q, want the oldest root 401.40", got)
	}
	if got := sessions[1].RefID(); got != "agent:claude/myproj#2@320.3000" {
		t.Errorf("RefID = %q", got)
	}
	ok := []struct{ ref, want string }{
		{"agent:claude/myproj#2", "claude/myproj#2"},
		{"agent:claude/myproj#2@320.3000", "claude/myproj#2"},
		{"tmux:a@1.2", "a@1.2"}, // a name that looks like NAME@ID is taken whole
		{"tmux:a@1.2@401.40", "a@1.2"},
	}
	for _, tt := range ok {
		s, err := Find(sessions, tt.ref)
		if err != nil || s.Name != tt.want {
			t.Errorf("Find(%q) = %v, %v; want %s", tt.ref, s, err, tt.want)
		}
	}
	bad := []struct {
		ref  string
		want error
		msg  string
	}{
		{"agent:claude/myproj#2@310.2000", ErrChanged,
			"session changed: agent:claude/myproj#2 now names agent:claude/myproj#2@320.3000, not agent:claude/myproj#2@310.2000 (its leader changed); look again and use the new name"},
		{"agent:claude/myproj#3@320.3000", ErrChanged,
			"session changed: agent:claude/myproj#3 is gone and session 320.3000 is now named agent:claude/myproj#2@320.3000; look again and use the new name"},
		{"agent:claude/other@1.1", ErrNoSession,
			"no such session agent:claude/other@1.1: no agent session is named claude/other any more"},
	}
	for _, tt := range bad {
		s, err := Find(sessions, tt.ref)
		if !errors.Is(err, tt.want) || err.Error() != tt.msg {
			t.Errorf("Find(%q) = %v, %v;\nwant %q", tt.ref, s, err, tt.msg)
		}
	}
}
