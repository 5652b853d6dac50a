//go:build linux

package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// TestIntegrationTmuxAnswerKept runs a real tmux server on a socket of
// its own and changes what the kept answer rests on: a rename and a new
// window are asked again (the server ran to do them), and in between
// nothing runs a tmux client.
func TestIntegrationTmuxAnswerKept(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("integration test: set PROCWALK_INTEGRATION=1 to run it")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed by this integration test: install it or unset PROCWALK_INTEGRATION")
	}
	dir, err := os.MkdirTemp("", "pwkeep") // short: socket paths end at 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "s")
	tmux := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tmux", append([]string{"-S", socket, "-f", "/dev/null"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", socket, "kill-server").Run() // our own server
		os.RemoveAll(dir)
	})
	tmux("new-session", "-d", "-s", "keep", "sleep 1000")

	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	g, err := NewGrouper(fs, Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{socket},
		ListPanes: func(socket string) ([]byte, error) {
			calls++
			return runTmuxListPanes(socket)
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !g.tmux.cacheable {
		t.Fatalf("%s is not this process's /proc", fs.Root())
	}
	// However loaded the machine, the server gets to sleep again after
	// answering: wait for that as long as it takes.
	g.tmux.settleWait = time.Minute
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g)
	gather := func(step string, wantCalls int, wantName, wantPanes string) {
		t.Helper()
		snap, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		sessions, notes := g.Group(snap)
		var names []string
		for _, s := range sessions {
			names = append(names, s.Name)
			if s.Name == wantName && s.Attrs[AttrPanes] != wantPanes {
				t.Errorf("%s: %s has %s panes, want %s", step, s.Name, s.Attrs[AttrPanes], wantPanes)
			}
		}
		if !slices.Equal(names, []string{wantName}) {
			t.Errorf("%s: sessions %v (notes %q), want [%s]", step, names, notes, wantName)
		}
		if calls != wantCalls {
			t.Errorf("%s: list-panes ran %d times in all, want %d", step, calls, wantCalls)
		}
	}
	gather("first gather: asked, not kept (a one-shot command asks once)", 1, "keep", "1")
	gather("second gather: asked and kept", 2, "keep", "1")
	gather("idle server", 2, "keep", "1")
	tmux("rename-session", "-t", "keep", "kept")
	gather("renamed", 3, "kept", "1")
	gather("idle again", 3, "kept", "1")
	tmux("new-window", "-t", "kept", "sleep 1000")
	gather("new window", 4, "kept", "2")
	gather("idle once more", 4, "kept", "2")
}
