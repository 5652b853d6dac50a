//go:build linux

package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// copyTree copies the fixture /proc at src to a fresh directory, symlinks
// (cwd, exe) as symlinks, so a test may add and remove processes.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil { // symlinks (cwd, exe) stay links
		t.Fatal(err)
	}
	return dst
}

// addClone adds pid as a copy of process from started at tick start.
func addClone(t testing.TB, root string, from, pid, start string) {
	t.Helper()
	src, dst := filepath.Join(root, from), filepath.Join(root, pid)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			link, _ := os.Readlink(filepath.Join(src, e.Name()))
			if err := os.Symlink(link, filepath.Join(dst, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "stat" {
			f := strings.Fields(string(b))
			f[0], f[4], f[21] = pid, pid, start // pid, pgrp, starttime
			b = []byte(strings.Join(f, " ") + "\n")
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func agentNamesOf(t *testing.T, g *Grouper, root string) []string {
	t.Helper()
	fsys, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := procwalk.NewMonitor(fsys, procwalk.MonitorConfig{NoRates: true}, g).Gather()
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := g.Group(s)
	var out []string
	for i := range sessions {
		out = append(out, sessions[i].Name+"@"+sessions[i].ID())
	}
	return out
}

// Three claude agents in one folder; the second exits between gathers. In
// one Grouper the third keeps "#3" and the ended "#2" keeps its row, in its
// place, without members (so without an ID) for AgentStatusConfig.EndedKeep;
// a fresh one (a new CLI run) numbers from
// the processes alone and calls it "#2", but with another ID than the old #2.
func TestAgentNamesStick(t *testing.T) {
	root := copyTree(t, sessionFixture)
	addClone(t, root, "207", "209", "9000")
	newGrouper := func() *Grouper {
		fsys, err := procwalk.NewFS(root)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGrouper(fsys, Config{Kinds: []string{KindAgent}, Tmux: TmuxConfig{Sockets: []string{}}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := newGrouper()
	want := []string{"claude/work/app@105.3000", "claude/other/app@203.8100", "codex/work/app@206.8400", "claude/other/app#2@207.8500", "claude/other/app#3@209.9000"}
	if got := agentNamesOf(t, g, root); !slices.Equal(got, want) {
		t.Fatalf("first gather: %q\nwant %q", got, want)
	}
	if err := os.RemoveAll(filepath.Join(root, "207")); err != nil {
		t.Fatal(err)
	}
	want = []string{"claude/work/app@105.3000", "claude/other/app@203.8100", "codex/work/app@206.8400", "claude/other/app#2@", "claude/other/app#3@209.9000"}
	if got := agentNamesOf(t, g, root); !slices.Equal(got, want) {
		t.Errorf("after #2 exited, same Grouper: %q\nwant %q", got, want)
	}
	want = []string{"claude/work/app@105.3000", "claude/other/app@203.8100", "codex/work/app@206.8400", "claude/other/app#2@209.9000"}
	if got := agentNamesOf(t, newGrouper(), root); !slices.Equal(got, want) {
		t.Errorf("fresh Grouper: %q\nwant %q", got, want)
	}
}

// A second tmux server creates "build" while the default server's "build"
// lives: within one Grouper the first keeps its bare name. A fresh Grouper
// cannot tell which came first and qualifies both.
func TestTmuxNamesStick(t *testing.T) {
	other := ""
	cfg := Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default", "/tmp/tmux-1000/other"},
		ListPanes: func(socket string) ([]byte, error) {
			if strings.HasSuffix(socket, "other") {
				if other == "" {
					return nil, ErrNoTmuxServer
				}
				return []byte(other), nil
			}
			return os.ReadFile("testdata/sessions/tmux/default.txt")
		},
	}}
	g, s := fixtureGrouper(t, sessionFixture, cfg)
	sessions, _ := g.Group(s)
	if got, want := namesOf(sessions, KindTmux), []string{"build", "web"}; !slices.Equal(got, want) {
		t.Fatalf("one server: %v, want %v", got, want)
	}
	other = "200\t$0\tbuild\t0\t0\t0\t%0\t201\t/dev/pts/9\t0\tw\x1f\n" // 201 is 200's child
	sessions, _ = g.Group(s)
	if got, want := namesOf(sessions, KindTmux), []string{"build", "other/build", "web"}; !slices.Equal(got, want) {
		t.Errorf("second server, same Grouper: %v, want %v", got, want)
	}
	if b := find(t, sessions, "tmux:build"); b.Attrs[AttrSocket] != "/tmp/tmux-1000/default" {
		t.Errorf("tmux:build is on %s", b.Attrs[AttrSocket])
	}
	g2, s2 := fixtureGrouper(t, sessionFixture, cfg)
	sessions, _ = g2.Group(s2)
	if got, want := namesOf(sessions, KindTmux), []string{"default/build", "other/build", "web"}; !slices.Equal(got, want) {
		t.Errorf("fresh Grouper: %v, want %v", got, want)
	}
}
