//go:build linux

package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// The fixture's claude (105, cwd /home/dev/work/app) starts at btime
// 1700000000 + 3000 ticks; its child node (106) 100 ticks later.
var (
	agentStart = time.Unix(1700000030, 0)
	agentNow   = time.Unix(1700003600, 0) // the tests' clock: an hour later
)

// agentFixture copies the session fixture and gives the claude (105) and
// codex (206) agents a HOME in a temporary directory, returned.
func agentFixture(t testing.TB) (root, home string) {
	t.Helper()
	root, home = copyTree(t, sessionFixture), t.TempDir()
	for _, pid := range []string{"105", "206"} {
		if err := os.WriteFile(filepath.Join(root, pid, "environ"), []byte("TERM=xterm\x00HOME="+home+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, home
}

// claudeFile is where the fixture claude's transcript of session id goes.
func claudeFile(home, id string) string {
	return filepath.Join(home, ".claude", "projects", "-home-dev-work-app", id+".jsonl")
}

// writeTranscript writes lines to path, last modified at mod.
func writeTranscript(t testing.TB, path string, lines []string, mod time.Time) {
	t.Helper()
	writeLines(t, path, lines, "")
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// agentGatherer gathers the fixture's agents on a clock the test sets.
type agentGatherer struct {
	t     *testing.T
	g     *Grouper
	m     *procwalk.Monitor
	clock *stepClock
}

func newAgentGatherer(t *testing.T, root string, st AgentStatusConfig) *agentGatherer {
	t.Helper()
	fsys, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fsys, Config{Kinds: []string{KindAgent}, Tmux: TmuxConfig{Sockets: []string{}}, AgentStatus: st})
	if err != nil {
		t.Fatal(err)
	}
	clock := &stepClock{t: agentNow}
	return &agentGatherer{t: t, g: g, m: procwalk.NewMonitor(fsys, procwalk.MonitorConfig{Clock: clock}, g), clock: clock}
}

func (a *agentGatherer) gather(at time.Time) []Session {
	a.t.Helper()
	a.clock.t = at
	s, err := a.m.Gather()
	if err != nil {
		a.t.Fatal(err)
	}
	sessions, _ := a.g.Group(s)
	return sessions
}

func agentOf(t *testing.T, sessions []Session, ref string) *AgentState {
	t.Helper()
	s := find(t, sessions, ref)
	if s.Agent == nil {
		t.Fatalf("%s has no agent state", ref)
	}
	if s.Attrs[AttrStatus] != s.Agent.Status {
		t.Errorf("%s: attr status %q, agent status %q", ref, s.Attrs[AttrStatus], s.Agent.Status)
	}
	return s.Agent
}

// One fixture transcript per status, each decided by its rule.
func TestAgentStatusRules(t *testing.T) {
	reply := claudeConversation(agentNow.Add(-5 * time.Minute))
	pending := append(claudeConversation(agentNow.Add(-6*time.Minute)),
		claudeAssistantLine(agentNow.Add(-5*time.Minute), "msg_09", claudeModel, "tool_use:toolu_09", "tool_use", 3, 30, 150000, 2000))
	prompt := append(claudeConversation(agentNow.Add(-3*time.Minute)), claudeUserLine(agentNow.Add(-time.Minute), "and the docs"))
	// The tool use that started the fixture's node child (106, started at
	// agentStart + 1 s) is still running.
	running := append(claudeConversation(agentStart.Add(-20*time.Second)),
		claudeAssistantLine(agentStart.Add(500*time.Millisecond), "msg_09", claudeModel, "tool_use:toolu_09", "tool_use", 3, 30, 150000, 2000))
	for _, tc := range []struct {
		name    string
		lines   []string
		mod     time.Time
		cfg     AgentStatusConfig
		status  string
		since   time.Time
		context int64
	}{
		{"grew just now", reply, agentNow.Add(-3 * time.Second), AgentStatusConfig{}, AgentWorking, agentNow, 15204},
		{"grew before the window", reply, agentNow.Add(-3 * time.Second), AgentStatusConfig{ActiveWithin: 2 * time.Second}, AgentIdle, agentNow, 15204},
		{"turn ended", reply, agentNow.Add(-5 * time.Minute), AgentStatusConfig{}, AgentIdle, agentNow, 15204},
		{"tool use awaits", pending, agentNow.Add(-5 * time.Minute), AgentStatusConfig{}, AgentBlocked, agentNow.Add(-5 * time.Minute), 152003},
		{"tool runs", running, agentNow.Add(-5 * time.Minute), AgentStatusConfig{}, AgentWorking, agentNow, 152003},
		{"model answers", prompt, agentNow.Add(-time.Minute), AgentStatusConfig{}, AgentWorking, agentNow, 15204},
		{"answer overdue", prompt, agentNow.Add(-time.Minute), AgentStatusConfig{TurnTimeout: 30 * time.Second}, AgentIdle, agentNow, 15204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, home := agentFixture(t)
			writeTranscript(t, claudeFile(home, "5f2c9a1e-0000-4000-8000-000000000001"), tc.lines, tc.mod)
			sessions := newAgentGatherer(t, root, tc.cfg).gather(agentNow)
			a := agentOf(t, sessions, "agent:claude/work/app")
			if a.Status != tc.status || !a.StatusSince.Equal(tc.since) {
				t.Errorf("status %s since %v (%s), want %s since %v", a.Status, a.StatusSince, a.Why, tc.status, tc.since)
			}
			if a.Transcript == nil || a.Transcript.ContextUsedTokens != tc.context || a.ContextWindowTokens != 200000 {
				t.Fatalf("transcript %+v, window %d", a.Transcript, a.ContextWindowTokens)
			}
			if want := 100 * float64(tc.context) / 200000; a.ContextPercent != want {
				t.Errorf("context %v %%, want %v", a.ContextPercent, want)
			}
			s := find(t, sessions, "agent:claude/work/app")
			if s.Attrs[AttrModel] != claudeModel || s.Attrs[AttrSessionID] != "5f2c9a1e-0000-4000-8000-000000000001" {
				t.Errorf("attrs %v", s.Attrs)
			}
		})
	}
}

// Over gathers: growth makes an idle agent work; an agent that exits stays
// as "ended" (no members) for EndedKeep, in its place, then leaves; a new
// agent goes to the end of the list although it started before the others.
func TestAgentStatusOverTime(t *testing.T) {
	root, home := agentFixture(t)
	path := claudeFile(home, "5f2c9a1e-0000-4000-8000-000000000001")
	writeTranscript(t, path, claudeConversation(agentNow.Add(-5*time.Minute)), agentNow.Add(-5*time.Minute))
	// An older session of the same project, written before the agent started: not its transcript.
	writeTranscript(t, claudeFile(home, "old"), []string{claudeUserLine(agentStart.Add(-time.Hour), "old")}, agentStart.Add(-time.Hour))
	ag := newAgentGatherer(t, root, AgentStatusConfig{EndedKeep: time.Minute})
	order := func(sessions []Session) []string {
		var out []string
		for i := range sessions {
			out = append(out, sessions[i].Name+"="+sessions[i].Attrs[AttrStatus])
		}
		return out
	}
	sessions := ag.gather(agentNow)
	if got, want := order(sessions), []string{"claude/work/app=idle", "claude/other/app=idle", "codex/work/app=idle", "claude/other/app#2=idle"}; !slices.Equal(got, want) {
		t.Fatalf("first gather: %q, want %q", got, want)
	}
	if a := agentOf(t, sessions, "agent:claude/work/app"); a.Transcript.Path != path || a.Transcript.Turns != 1 {
		t.Fatalf("transcript %+v", a.Transcript)
	}

	t1 := agentNow.Add(20 * time.Second)
	appendText(t, path, claudeUserLine(t1, "again")+"\n")
	sessions = ag.gather(t1)
	if a := agentOf(t, sessions, "agent:claude/work/app"); a.Status != AgentWorking || !a.StatusSince.Equal(t1) || a.Transcript.Turns != 2 {
		t.Errorf("after growth: %s since %v (%s), turns %d", a.Status, a.StatusSince, a.Why, a.Transcript.Turns)
	}

	// The claude agent exits; an older claude starts in its folder (a
	// clone of 105 started at tick 2000, before every other agent).
	if err := os.RemoveAll(filepath.Join(root, "105")); err != nil {
		t.Fatal(err)
	}
	addClone(t, root, "207", "209", "2000")
	t2 := t1.Add(20 * time.Second)
	sessions = ag.gather(t2)
	if got, want := order(sessions), []string{"claude/work/app=ended", "claude/other/app=idle", "codex/work/app=idle", "claude/other/app#2=idle", "claude/other/app#3=idle"}; !slices.Equal(got, want) {
		t.Fatalf("after the exit: %q, want %q", got, want)
	}
	ended := find(t, sessions, "agent:claude/work/app")
	if len(ended.Members) != 0 || ended.Agent.Transcript == nil || ended.Agent.Transcript.Turns != 2 || !ended.Agent.StatusSince.Equal(t2) {
		t.Errorf("ended row: members %v, agent %+v", ended.Members, ended.Agent)
	}
	sessions = ag.gather(t2.Add(2 * time.Minute))
	if got, want := order(sessions), []string{"claude/other/app=idle", "codex/work/app=idle", "claude/other/app#2=idle", "claude/other/app#3=idle"}; !slices.Equal(got, want) {
		t.Errorf("after EndedKeep: %q, want %q", got, want)
	}
}

// The Codex agent's transcript is the newest rollout file of its own
// working directory; a newer one of another project is not its.
func TestAgentStatusCodex(t *testing.T) {
	root, home := agentFixture(t)
	day := filepath.Join(home, ".codex", "sessions", agentNow.UTC().Format("2006/01/02"))
	ours := filepath.Join(day, "rollout-2023-11-14T22-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
	writeTranscript(t, ours, codexLines(agentNow.Add(-10*time.Minute), "/home/dev/work/app"), agentNow.Add(-10*time.Minute))
	writeTranscript(t, filepath.Join(day, "rollout-2023-11-14T23-00-00-other.jsonl"), codexLines(agentNow.Add(-time.Minute), "/home/dev/elsewhere"), agentNow.Add(-time.Minute))
	sessions := newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow)
	a := agentOf(t, sessions, "agent:codex/work/app")
	if a.Transcript == nil || a.Transcript.Path != ours {
		t.Fatalf("transcript %+v", a.Transcript)
	}
	if a.Status != AgentBlocked || a.Transcript.Model != "gpt-5-codex" || a.ContextWindowTokens != 272000 || a.Transcript.ContextUsedTokens != 12500 {
		t.Errorf("status %s (%s), model %q, context %d of %d", a.Status, a.Why, a.Transcript.Model, a.Transcript.ContextUsedTokens, a.ContextWindowTokens)
	}
}

// A transcript of another user is not read, even in the agent's folder.
func TestAgentTranscriptOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	root, home := agentFixture(t)
	path := claudeFile(home, "x")
	writeTranscript(t, path, claudeConversation(agentNow.Add(-time.Minute)), agentNow.Add(-time.Minute))
	if err := os.Chown(path, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	a := agentOf(t, newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow), "agent:claude/work/app")
	if a.Transcript != nil || a.Status != AgentIdle {
		t.Errorf("read another user's transcript: %+v, %s", a.Transcript, a.Status)
	}
	if len(a.Skipped) != 1 || a.Skipped[0].Path != path || a.Skipped[0].Why != "owned by another user (uid 12345, not 0)" {
		t.Errorf("skipped %+v", a.Skipped)
	}
}

func TestContextWindowFamilies(t *testing.T) {
	c := AgentStatusConfig{ContextWindows: map[string]int64{"claude": 200000, "claude-sonnet-4-5": 1000000}}.withDefaults()
	for model, want := range map[string]int64{"claude-opus-4-1": 200000, "claude-sonnet-4-5-20250929": 1000000, "mistral": 0} {
		if got := c.contextWindow(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
}

func TestAgentOptions(t *testing.T) {
	w, err := ContextWindows([]string{"claude-sonnet-4-5=1000000", "mistral=32000"})
	if err != nil || w["claude-sonnet-4-5"] != 1000000 || w["mistral"] != 32000 || w["claude"] != 200000 {
		t.Errorf("windows %v, %v", w, err)
	}
	for _, bad := range []string{"claude", "=5", "claude=0", "claude=-1", "claude=2e5", "claude=lots"} {
		if _, err := ContextWindows([]string{bad}); err == nil {
			t.Errorf("context window %q accepted", bad)
		}
	}
	rules, err := WithTranscripts(nil, []string{"aider=claude:{home}/.aider/{project}"})
	if err != nil || rules[3].Name != "aider" || rules[3].Transcript.Parser != "claude" || rules[0].Transcript.Parser != "claude" {
		t.Errorf("rules %+v, %v", rules, err)
	}
	for _, bad := range []string{"goose=claude:/x", "aider=yaml:/x", "aider=claude:relative/dir", "aider"} {
		if _, err := WithTranscripts(nil, []string{bad}); err == nil {
			t.Errorf("transcript %q accepted", bad)
		}
	}
	if _, err := NewGrouper(procwalk.FS{}, Config{AgentStatus: AgentStatusConfig{ContextWindows: map[string]int64{"x": 0}}}); err == nil {
		t.Error("a zero context window accepted")
	}
	// The Go API has the options' rules: a first read under 64 KiB is refused.
	_, err = NewGrouper(procwalk.FS{}, Config{AgentStatus: AgentStatusConfig{FirstReadBytes: 2048}})
	if want := "agent status FirstReadBytes 2.0 KiB: is less than 64 KiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a first read of 2 KiB: %v, want an error with %q", err, want)
	}
}

// The Grouper bounds a transcript's first read by FirstReadBytes: the
// status and context come from the end, and what was not read is said.
func TestAgentFirstReadBound(t *testing.T) {
	root, home := agentFixture(t)
	var lines []string
	const turns = 1000 // some 300 KiB, past the 64 KiB a first read takes at least
	for i := range turns {
		lines = append(lines, claudeUserLine(agentNow.Add(-time.Hour+time.Duration(i)*time.Second), strings.Repeat("again ", 20)))
	}
	lines = append(lines, claudeAssistantLine(agentNow.Add(-5*time.Minute), "msg_09", claudeModel, "tool_use:toolu_09", "tool_use", 3, 30, 150000, 2000))
	writeTranscript(t, claudeFile(home, "s"), lines, agentNow.Add(-5*time.Minute))
	for _, tc := range []struct {
		firstRead int64
		whole     bool
	}{{64 << 10, false}, {-1, true}, {0, true}} { // 0: the default, 8 MiB
		a := agentOf(t, newAgentGatherer(t, root, AgentStatusConfig{FirstReadBytes: tc.firstRead}).gather(agentNow), "agent:claude/work/app")
		tr := a.Transcript
		if tr == nil || a.Status != AgentBlocked || tr.ContextUsedTokens != 152003 || (tr.SkippedBytes == 0) != tc.whole || (tr.Turns == turns) != tc.whole {
			t.Errorf("first read %d: status %s, transcript %+v", tc.firstRead, a.Status, tr)
		}
	}
}

// Two agents in one folder never share a transcript, nor take each
// other's: with nothing saying which is whose (both started before both
// files), both are ambiguous, naming both files, and neither is read.
func TestAgentTranscriptsNotShared(t *testing.T) {
	root, home := agentFixture(t)
	for _, pid := range []string{"203", "207"} { // claude/other/app and claude/other/app#2
		if err := os.WriteFile(filepath.Join(root, pid, "environ"), []byte("HOME="+home+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(home, ".claude", "projects", "-home-dev-other-app")
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeTranscript(t, a, claudeConversation(agentNow.Add(-3*time.Minute)), agentNow.Add(-2*time.Minute))
	writeTranscript(t, b, claudeConversation(agentNow.Add(-2*time.Minute)), agentNow.Add(-time.Minute))
	sessions := newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow)
	for _, ref := range []string{"agent:claude/other/app", "agent:claude/other/app#2"} {
		got := agentOf(t, sessions, ref)
		if got.Transcript != nil || got.Binding != BindAmbiguous || !slices.Equal(got.Candidates, []string{a, b}) {
			t.Errorf("%s: transcript %+v, binding %q, candidates %q", ref, got.Transcript, got.Binding, got.Candidates)
		}
	}
}

// An agent follows its transcript when the agent starts a new one (Claude
// Code's /clear) and when it is deleted: no transcript then, and why.
func TestAgentTranscriptRotatedAndDeleted(t *testing.T) {
	root, home := agentFixture(t)
	first, second := claudeFile(home, "first"), claudeFile(home, "second")
	writeTranscript(t, first, claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-10*time.Minute))
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	path := func(at time.Time) (string, *AgentState) {
		a := agentOf(t, ag.gather(at), "agent:claude/work/app")
		if a.Transcript == nil {
			return "", a
		}
		return a.Transcript.Path, a
	}
	if p, _ := path(agentNow); p != first {
		t.Fatalf("transcript %q, want %q", p, first)
	}
	writeTranscript(t, second, []string{claudeUserLine(agentNow.Add(10*time.Second), "new topic")}, agentNow.Add(10*time.Second))
	if p, a := path(agentNow.Add(20 * time.Second)); p != second || a.Transcript.Turns != 1 {
		t.Errorf("after a new transcript: %q (%+v), want %q", p, a.Transcript, second)
	}
	for _, f := range []string{first, second} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if p, a := path(agentNow.Add(40 * time.Second)); p != "" || a.Status != AgentIdle || a.TranscriptError != second+": deleted" {
		t.Errorf("after deletion: transcript %q, status %s, error %q", p, a.Status, a.TranscriptError)
	}
}

// A negative EndedKeep drops an agent's row as soon as its process is gone;
// the default keeps it 5 minutes on the injected clock, and not a second
// more.
func TestAgentEndedKeep(t *testing.T) {
	for _, tc := range []struct {
		keep  time.Duration
		shown []time.Duration // after the exit: the row is there at these
		gone  time.Duration
	}{
		{-time.Second, nil, 0},
		{0, []time.Duration{0, 5 * time.Minute}, 5*time.Minute + time.Second},
	} {
		root, _ := agentFixture(t)
		ag := newAgentGatherer(t, root, AgentStatusConfig{EndedKeep: tc.keep})
		ag.gather(agentNow)
		if err := os.RemoveAll(filepath.Join(root, "105")); err != nil {
			t.Fatal(err)
		}
		has := func(at time.Duration) bool {
			for _, s := range ag.gather(agentNow.Add(time.Second + at)) {
				if s.Name == "claude/work/app" {
					return s.Attrs[AttrStatus] == AgentEnded
				}
			}
			return false
		}
		for _, at := range tc.shown {
			if !has(at) {
				t.Errorf("keep %v: no ended row %v after the exit", tc.keep, at)
			}
		}
		if has(tc.gone) {
			t.Errorf("keep %v: an ended row %v after the exit", tc.keep, tc.gone)
		}
	}
}

// The agents table sorts by what needs a person first: a blocked agent,
// one stopped on a failed model call, then working, idle, ended; every
// status has a rank above an unknown one.
func TestAttentionRank(t *testing.T) {
	order := []string{AgentBlocked, AgentError, AgentRateLimited, AgentWorking, AgentIdle, AgentEnded, "-"}
	for i := 1; i < len(order); i++ {
		if AttentionRank(order[i-1]) <= AttentionRank(order[i]) {
			t.Errorf("%q ranks %v, not above %q (%v)", order[i-1], AttentionRank(order[i-1]), order[i], AttentionRank(order[i]))
		}
	}
	for _, s := range AgentStatuses() {
		if AttentionRank(s) == 0 {
			t.Errorf("status %s has no rank", s)
		}
	}
}
