//go:build linux

package session_test

import (
	"testing"

	"github.com/procwalk/procwalk/procwalk/session"
)

// TestIntegrationTmuxWithoutLocale: a service manager or a container often
// starts procwalk (under Telegraf) with no LANG; tmux then prints the pane
// format's tabs and record separator as '_' unless told that UTF-8 works.
// The tmux session must be found all the same.
func TestIntegrationTmuxWithoutLocale(t *testing.T) {
	srv := startTmux(t)
	srv.run("new-session", "-d", "-s", "nolocale", "sleep", "34000")
	for _, v := range []string{"LANG", "LC_ALL", "LC_CTYPE"} {
		t.Setenv(v, "") // tmux reads an empty one as unset
	}
	_, sessions, notes, _ := liveGroup(t, session.Config{
		Kinds: []string{session.KindTmux},
		Tmux:  session.TmuxConfig{Sockets: []string{srv.socket}},
	})
	for _, s := range sessions {
		if s.Name == "nolocale" {
			return
		}
	}
	t.Errorf("no tmux session nolocale without a locale; sessions %d, notes %q", len(sessions), notes)
}
