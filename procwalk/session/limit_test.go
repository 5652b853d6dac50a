//go:build linux

package session

import (
	"maps"
	"testing"
)

func TestLimitPerKind(t *testing.T) {
	var sessions []Session
	for _, k := range []string{"tmux", "tmux", "user", "tmux", "user", "cgroup"} {
		sessions = append(sessions, Session{Kind: k, Name: k + string(rune('a'+len(sessions)))})
	}
	shown, hidden := LimitPerKind(sessions, 1)
	var names []string
	for _, s := range shown {
		names = append(names, s.Name)
	}
	if got := len(names); got != 3 || names[0] != "tmuxa" || names[1] != "userc" || names[2] != "cgroupf" {
		t.Errorf("shown %v; want the first of each kind, in order", names)
	}
	if want := map[string]int{"tmux": 2, "user": 1}; !maps.Equal(hidden, want) {
		t.Errorf("hidden %v; want %v", hidden, want)
	}
	if shown, hidden := LimitPerKind(sessions, 0); len(shown) != len(sessions) || hidden != nil {
		t.Errorf("limit 0: %d shown, hidden %v; want all", len(shown), hidden)
	}
}
