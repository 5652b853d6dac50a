//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// Without a terminal top says so in one line and exits 2; --once prints
// one frame instead, of the fixture here.
func TestTopWithoutTerminal(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("top")...)
	if r.code != exitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "top needs a terminal") {
		t.Errorf("top, no terminal: exit %d, stdout %q, stderr %q; want 2 and one line", r.code, r.stdout, r.stderr)
	}
	t.Setenv("LINES", "12")
	t.Setenv("LANG", "C.UTF-8")
	r = cliColumns(t, 100, fixtureBoot().Add(24*time.Hour), fixture("top", "--once", "--interval", "5ms")...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasSuffix(r.stdout, "\n") || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("top --once is not plain text ending in a newline:\n%q", r.stdout)
	}
	if r.code != exitOK || len(lines) != 12 {
		t.Fatalf("top --once: exit %d, %d lines, stderr %q:\n%s", r.code, len(lines), r.stderr, r.stdout)
	}
	for _, want := range []string{"procwalk top", "CPU%↓", "cc1", "/usr/lib/gcc…", "processes 1/16"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("top --once lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("line of %d runes at COLUMNS=100: %q", n, l)
		}
	}
	for _, bad := range [][]string{{"top", "--grace", "0s", "--once"}, {"top", "--protect", "[", "--once"}, {"top", "x"}, {"top", "--once", "--view", "tree"}} {
		if r := cli(t, fixture(bad...)...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %q", bad, r.code, r.stderr)
		}
	}
}

// top --once --view sessions prints the sessions view: agents with their
// status first in INFO.
func TestTopOnceSessions(t *testing.T) {
	clearEnv(t)
	t.Setenv("LINES", "30")
	r := cliColumns(t, 160, time.Now(), sessionsFixture("top", "--once", "--no-rates", "--interval", "5ms", "--view", "sessions", "--kind", "agent")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"KIND", "agent  claude/work/app ", "agent  codex/work/app "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "agent ") && !strings.Contains(l, "d idle, /home/dev/") {
			t.Errorf("an agent row without its status first in INFO: %q", l)
		}
	}
}

// A note of the source (why BPF is not used) goes to the live view's
// status line, where the full-screen view lets it be seen, and to stderr
// with --once.
func TestTopShowsTheSourceNote(t *testing.T) {
	clearEnv(t)
	const want = "bpf source not used"
	r := cli(t, fixture("top", "--once", "--interval", "5ms", "--source", "bpf")...)
	if r.code != exitOK || !strings.Contains(r.stderr, "note: "+want) || strings.Contains(r.stdout, want) {
		t.Errorf("top --once --source bpf: exit %d, stderr %q; want the note on stderr alone", r.code, r.stderr)
	}

	var stderr strings.Builder
	g := &globals{proc: fixtureProc, passwd: fixturePasswd, interval: time.Second, clock: procwalk.SystemClock{}, source: "bpf"}
	g.note = func(n string) { fmt.Fprintln(&stderr, n) }
	defer g.chooser.Close()
	c := &topCommand{g: g, e: &env{}, kinds: session.OverviewKinds(), grace: time.Second}
	c.f.DangerPercent = 80
	fsys, err := procwalk.NewFS(fixtureProc)
	if err != nil {
		t.Fatal(err)
	}
	model, closeSource, err := c.viewModel(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSource()
	model.Update(tea.WindowSizeMsg{Width: 200, Height: 24})
	model.Update(model.Init()())
	screen := model.Screen()
	status := screen[strings.LastIndex(screen, "\n")+1:]
	if !strings.Contains(status, "note: "+want) || stderr.Len() > 0 {
		t.Errorf("live view: status line %q, stderr %q; want the note in the status line alone", status, stderr.String())
	}
	model.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if screen := model.Screen(); strings.Contains(screen, want) {
		t.Errorf("the note outlived a key:\n%s", screen)
	}
}

// top --once --view agents: the agents alone, status, model, context and
// tmux pane as columns, the whole table in 80 columns.
func TestTopOnceAgents(t *testing.T) {
	clearEnv(t)
	t.Setenv("LINES", "14")
	t.Setenv("LANG", "C.UTF-8")
	r := cliColumns(t, 80, time.Now(), sessionsFixture("top", "--once", "--no-rates", "--interval", "5ms", "--view", "agents")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"AGENT ", "STATUS↓", "MODEL", "TMUX", "claude/work/app ", "codex/work/app ", "agents 1/4"} { // CTX% is "-" all down here: left out first
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "user:") || strings.Contains(r.stdout, "cgroup ") && strings.Contains(r.stdout, "KIND") {
		t.Errorf("not agents alone:\n%s", r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if w := textwidth.Width(l); w > 80 {
			t.Errorf("a line of %d cells: %q", w, l)
		}
	}
}

// --kind is the sessions view's: --kind user lists user sessions alone,
// though the gauges' cgroups are grouped too; the count says as many.
func TestTopKindInSessionsView(t *testing.T) {
	clearEnv(t)
	t.Setenv("LINES", "30")
	r := cliColumns(t, 120, time.Now(), sessionsFixture("top", "--once", "--no-rates", "--interval", "5ms", "--view", "sessions", "--kind", "user")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\ncgroup ") || !strings.Contains(r.stdout, "\nuser ") || !strings.Contains(r.stdout, " 6 sessions ") {
		t.Errorf("not the user sessions alone, or not their count:\n%s", r.stdout)
	}
}

// top takes --no-rates (a config file shared with sessions may set it) but
// measures rates anyway: its help says so rather than promising one scan.
func TestTopHelpNoRatesIgnored(t *testing.T) {
	clearEnv(t)
	r := cli(t, "top", "--help")
	if r.code != exitOK || !strings.Contains(r.stdout, "--no-rates") || !strings.Contains(r.stdout, "ignored: top measures rates between its") || strings.Contains(r.stdout, "scan once") {
		t.Errorf("top --help on --no-rates: exit %d\n%s", r.code, r.stdout)
	}
}
