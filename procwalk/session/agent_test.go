//go:build linux

package session

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

func TestGroupAgents(t *testing.T) {
	calls := 0
	sessions, _, snap := groupFixture(t, sessionFixture, Config{Kinds: []string{KindAgent}, Tmux: fixtureTmux(t, &calls)})
	// Oldest first; two "app" folders become work/app and other/app; a
	// second agent in the same folder gets "#2".
	want := []struct {
		name    string
		members []int
		attrs   map[string]string
	}{
		{"claude/work/app", []int{105, 106}, map[string]string{AttrAgent: "claude", AttrCwd: "/home/dev/work/app", AttrProject: "work/app", AttrTmuxTarget: "build:1.0", AttrCommand: "claude"}},
		// Claude Code under node; the nested claude folds in.
		{"claude/other/app", []int{203, 204, 205}, map[string]string{AttrAgent: "claude", AttrProject: "other/app", AttrNested: "1", AttrCommand: "node"}},
		{"codex/work/app", []int{206}, map[string]string{AttrAgent: "codex", AttrProject: "work/app"}},
		{"claude/other/app#2", []int{207}, map[string]string{AttrAgent: "claude", AttrProject: "other/app"}},
	}
	if got := namesOf(sessions, KindAgent); len(got) != len(want) {
		t.Fatalf("agent sessions = %v", got)
	}
	for i, w := range want {
		s := &sessions[i]
		if s.Name != w.name {
			t.Errorf("session %d = %s, want %s", i, s.Name, w.name)
			continue
		}
		if got := memberPIDs(s); !slices.Equal(got, w.members) {
			t.Errorf("%s members = %v, want %v", w.name, got, w.members)
		}
		for k, v := range w.attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s attr %s = %q, want %q", w.name, k, s.Attrs[k], v)
			}
		}
		root := snap.Process(w.members[0])
		elapsed := snap.Time.Sub(root.Start)
		if got := s.Attrs[AttrElapsed]; got != HumanDuration(elapsed) {
			t.Errorf("%s elapsed = %q", w.name, got)
		}
		if _, ok := s.Attrs[AttrTmuxTarget]; ok != (w.attrs[AttrTmuxTarget] != "") {
			t.Errorf("%s tmux_target = %q", w.name, s.Attrs[AttrTmuxTarget])
		}
	}
	if calls != 1 {
		t.Errorf("tmux asked %d times for agent panes, want 1", calls)
	}
}

func TestGroupAgentsCustomRules(t *testing.T) {
	rule, err := ParseAgentRule("mcp=^server\\.js$")
	if err != nil {
		t.Fatal(err)
	}
	sessions, _, _ := groupFixture(t, sessionFixture, Config{Kinds: []string{KindAgent}, Agents: []AgentRule{rule},
		Tmux: TmuxConfig{ListPanes: func(string) ([]byte, error) { return nil, ErrNoTmuxServer }, Sockets: []string{"x"}}})
	// node's script argument matches by base name; claude is not an agent now.
	if got := namesOf(sessions, KindAgent); !slices.Equal(got, []string{"mcp/app"}) {
		t.Errorf("sessions = %v", got)
	}
	for _, bad := range []string{"codex", "=x", "a b=x", "x=(", "a/b=x"} {
		if _, err := ParseAgentRule(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseAgentRule(%q) = %v, want ErrBadConfig", bad, err)
		}
	}
}

func TestMatchAgent(t *testing.T) {
	rules := DefaultAgents()
	tests := []struct {
		comm    string
		cmdline []string
		want    string
	}{
		{"claude", nil, "claude"},
		{"node", []string{"claude"}, "claude"}, // process.title rewrote argv
		{"node", []string{"node", "/usr/local/bin/claude", "--continue"}, "claude"},
		{"node", []string{"/usr/bin/node", "--max-old-space-size=4096", "/opt/lib/node_modules/@anthropic-ai/claude-code/cli.js"}, "claude"},
		{"MainThread", []string{"/home/u/.local/bin/claude"}, "claude"},
		{"node", []string{"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"}, "codex"},
		{"codex", []string{"codex", "exec"}, "codex"},
		{"node", []string{"node", "/usr/lib/node_modules/@google/gemini-cli/dist/index.js"}, "gemini"},
		{"aider", []string{"/usr/bin/python3", "/home/u/.local/bin/aider"}, "aider"},
		{"python3.12", []string{"python3.12", "/home/u/.local/bin/aider", "--model", "x"}, "aider"},
		{"grep", []string{"grep", "claude"}, ""},
		{"tmux: client", []string{"tmux", "new", "-s", "claude"}, ""},
		{"vim", []string{"vim", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"}, ""},
		{"node", []string{"node", "server.js", "claude"}, ""},
		{"claude-helper", nil, ""},
	}
	for _, tt := range tests {
		p := &procwalk.Process{Comm: tt.comm, Cmdline: tt.cmdline}
		got := ""
		if i := matchAgent(p, rules); i >= 0 {
			got = rules[i].Name
		}
		if got != tt.want {
			t.Errorf("%q %q matched %q, want %q", tt.comm, tt.cmdline, got, tt.want)
		}
	}
	if matchAgent(&procwalk.Process{Comm: "claude", Kernel: true}, rules) >= 0 {
		t.Error("a kernel thread matched")
	}
	if matchAgent(&procwalk.Process{Comm: "claude", State: 'Z'}, rules) >= 0 {
		t.Error("a zombie matched")
	}
}

func TestProjectNames(t *testing.T) {
	tests := []struct {
		cwds, want []string
	}{
		{[]string{"/home/u/app"}, []string{"app"}},
		{[]string{"/home/u/work/app", "/home/u/other/app", "/home/u/site"}, []string{"work/app", "other/app", "site"}},
		{[]string{"/a/x/app", "/b/x/app"}, []string{"/a/x/app", "/b/x/app"}},
		{[]string{"/srv/app", "/srv/app"}, []string{"app", "app"}},
		{[]string{"", "/", "/app"}, []string{"", "/", "app"}},
	}
	for _, tt := range tests {
		if got := projectNames(tt.cwds); !slices.Equal(got, tt.want) {
			t.Errorf("projectNames(%q) = %q, want %q", tt.cwds, got, tt.want)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "< 1 min"},
		{59 * time.Second, "< 1 min"},
		{time.Minute, "1 min"},
		{12*time.Minute + 30*time.Second, "12 min"},
		{time.Hour, "1 hr"},
		{2*time.Hour + 5*time.Minute, "2 hr 5 min"},
		{24 * time.Hour, "1 day"},
		{25*time.Hour + 59*time.Minute, "1 day 1 hr"},
		{3*24*time.Hour + 4*time.Hour + 59*time.Minute, "3 days 4 hr"},
		{-time.Hour, "< 1 min"},
	}
	for _, tt := range tests {
		if got := HumanDuration(tt.d); got != tt.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// An agent that exited and is not reaped yet is no agent session.
func TestGroupAgentsSkipsZombies(t *testing.T) {
	s := synthetic(time.Unix(1700000000, 0), [6]int{10, 1, 10}, [6]int{20, 1, 20})
	for i := range s.Procs {
		s.Procs[i].Comm = "claude"
	}
	s.Procs[1].State = 'Z'
	g, _ := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindAgent}, Tmux: TmuxConfig{Sockets: []string{"x"},
		ListPanes: func(string) ([]byte, error) { return nil, ErrNoTmuxServer }}})
	sessions, _ := g.Group(s)
	if got := namesOf(sessions, KindAgent); !slices.Equal(got, []string{"claude/pid-10"}) {
		t.Errorf("agents %v, want only the live claude/pid-10", got)
	}
}

// matchAgent returns the index of the first rule matching p, or -1. It tries
// the comm, argv[0]'s base name and, for interpreters, the script argument
// (its full path and its base name).
func matchAgent(p *procwalk.Process, rules []AgentRule) int {
	if !mayBeAgent(p) {
		return -1
	}
	return agentNames(p).match(rules)
}

// The match cache remembers the last names looked up: neighbouring
// processes that share a comm but run different scripts (node servers
// beside node running an agent's CLI) must each get their own answer, in
// any order, again and again.
func TestAgentMatchCacheTellsScriptsApart(t *testing.T) {
	rules := DefaultAgents()
	claude, codex := slices.IndexFunc(rules, func(r AgentRule) bool { return r.Name == "claude" }), slices.IndexFunc(rules, func(r AgentRule) bool { return r.Name == "codex" })
	node := func(script string) *procwalk.Process {
		return &procwalk.Process{Comm: "node", Cmdline: []string{"node", script}}
	}
	var k agentKind
	for i, c := range []struct {
		p    *procwalk.Process
		want int
	}{
		{node("server.js"), -1},
		{node("/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"), claude},
		{node("/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"), claude},
		{node("/usr/lib/node_modules/@openai/codex/bin/codex.js"), codex},
		{node("server.js"), -1},
		{node("/usr/lib/node_modules/@openai/codex/bin/codex.js"), codex},
		{&procwalk.Process{Comm: "claude", Cmdline: []string{"claude"}}, claude},
		{&procwalk.Process{Comm: "claude", Cmdline: []string{"claude"}, Kernel: true}, -1},
	} {
		if got := k.matchAgentCached(c.p, rules); got != c.want {
			t.Errorf("%d: %s %q matched rule %d; want %d", i, c.p.Comm, c.p.Cmdline, got, c.want)
		}
	}
}
