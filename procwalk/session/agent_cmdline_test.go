//go:build linux

package session

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// cmdlineRoot is a copy of the session fixture on a host that randomises
// stacks, where node 203 (Claude Code's CLI) has its stack at 1000.
func cmdlineRoot(t *testing.T) string {
	t.Helper()
	root := copyTree(t, sessionFixture)
	writeFile(t, filepath.Join(root, "sys/kernel/randomize_va_space"), "2\n")
	setStat(t, root, "node", 1000)
	return root
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setStat rewrites 203's stat with comm and startstack (field 28).
func setStat(t *testing.T, root, comm string, stack int) {
	t.Helper()
	f := strings.Fields("S 202 203 202 34816 -1 4194560 100 0 0 0 100 50 0 0 20 0 1 0 8100 737280000 60000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
	f[28-3] = strconv.Itoa(stack)
	writeFile(t, filepath.Join(root, "203/stat"), "203 ("+comm+") "+strings.Join(f, " ")+"\n")
}

// TestAgentCmdlineKept changes each fact a kept command line rests on
// and sees it read again. The command line file changes on disk without
// those facts first: the kept one stays, which shows it was not read.
func TestAgentCmdlineKept(t *testing.T) {
	root := cmdlineRoot(t)
	fs, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindAgent},
		Tmux: TmuxConfig{ListPanes: func(string) ([]byte, error) { return nil, ErrNoTmuxServer }, Sockets: []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g)
	claude := "node\x00--no-warnings\x00/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js\x00--resume\x00"
	other := "node\x00/srv/app/server.js\x00"
	gather := func(step, wantArg string) {
		t.Helper()
		snap, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(snap)
		p := snap.Process(203)
		if p == nil || p.Read&procwalk.FieldCmdline == 0 || !slices.Contains(p.Cmdline, wantArg) {
			t.Errorf("%s: 203's command line %q, want one with %q", step, p.Cmdline, wantArg)
		}
	}
	const cli = "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"
	gather("first gather reads it", cli)
	writeFile(t, filepath.Join(root, "203/cmdline"), other)
	gather("same comm and stack: kept", cli)

	setStat(t, root, "node", 2000) // an exec: a new stack
	gather("new stack: read again", "/srv/app/server.js")

	writeFile(t, filepath.Join(root, "203/cmdline"), claude)
	setStat(t, root, "nodejs", 2000) // another comm (a title the process set)
	gather("new comm: read again", cli)

	// The kernel hides the stack (a process procwalk may not trace):
	// read every gather.
	setStat(t, root, "node", 0)
	gather("hidden stack", cli)
	writeFile(t, filepath.Join(root, "203/cmdline"), other)
	gather("hidden stack: read again", "/srv/app/server.js")
}

// TestAgentCmdlineNotKeptWithoutRandomisation: where stacks do not move
// (randomize_va_space 0), an exec of the same program may keep the same
// stack: every gather reads.
func TestAgentCmdlineNotKeptWithoutRandomisation(t *testing.T) {
	root := cmdlineRoot(t)
	writeFile(t, filepath.Join(root, "sys/kernel/randomize_va_space"), "0\n")
	fs, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindAgent},
		Tmux: TmuxConfig{ListPanes: func(string) ([]byte, error) { return nil, ErrNoTmuxServer }, Sockets: []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g)
	for i, want := range []string{"--resume", "/srv/app/server.js"} {
		snap, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(snap)
		if p := snap.Process(203); p == nil || !slices.Contains(p.Cmdline, want) {
			t.Errorf("gather %d: %q, want %q in it", i+1, p.Cmdline, want)
		}
		writeFile(t, filepath.Join(root, "203/cmdline"), "node\x00/srv/app/server.js\x00")
	}
}
