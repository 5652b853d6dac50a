//go:build linux

package kill

import (
	"errors"
	"testing"
)

// tmuxSessionGone tells an ended session or server, in tmux 3.x's words,
// from a tmux failure that leaves the session alive.
func TestTmuxSessionGone(t *testing.T) {
	for msg, want := range map[string]bool{
		"exit status 1: can't find session: lone":                                      true,
		"exit status 1: no server running on /tmp/tmux-0/x":                            true,
		"exit status 1: server exited unexpectedly":                                    true,
		"exit status 1: lost server":                                                   true,
		"exit status 1: no current target":                                             true, // tmux 3.3, its last session ended
		"exit status 1: error connecting to /tmp/tmux-0/x (No such file or directory)": true,
		"exit status 1: error connecting to /tmp/tmux-0/x (Connection refused)":        true,
		"exit status 1: error connecting to /tmp/tmux-0/x (Permission denied)":         false,
		"signal: killed: ": false,
		"exit status 1: usage: kill-session [-aC] [-t target-session]": false,
	} {
		if got := tmuxSessionGone(errors.New(msg)); got != want {
			t.Errorf("tmuxSessionGone(%q) = %v, want %v", msg, got, want)
		}
	}
}
