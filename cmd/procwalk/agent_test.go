//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// An agent's INFO starts with its status (for how long, when blocked or
// ended), model and context use; its JSON has its status and strings in
// "agent", its numbers in "metrics".
func TestAgentInfoAndJSON(t *testing.T) {
	now := time.Unix(1700003600, 0)
	s := session.Session{Kind: session.KindAgent, Name: "claude/app",
		Attrs: map[string]string{session.AttrStatus: "blocked", session.AttrModel: "claude-opus-4-1", session.AttrCwd: "/home/dev/app",
			session.AttrElapsed: "2 hr", session.AttrSessionID: "s-1"},
		Agent: &session.AgentState{Status: "blocked", StatusSince: now.Add(-3 * time.Minute), StatusFor: 3 * time.Minute, Why: "a tool use awaits its result, and nothing runs",
			ContextWindowTokens: 200000, ContextPercent: 90.4, Binding: session.BindSessionRecord,
			Transcript: &session.Transcript{ContextUsedTokens: 180800, OutputTokens: 12, Turns: 2, PendingTools: 1, LastActivity: now.Add(-3 * time.Minute),
				Bytes: 9000000, SkippedBytes: 600000}},
	}
	if got, want := s.Info(), "blocked 3 min, claude-opus-4-1, ctx 90%, /home/dev/app, 2 hr"; got != want {
		t.Errorf("INFO %q, want %q", got, want)
	}
	b, err := json.Marshal(newJSONSession(now, 0, &s))
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Agent   map[string]any `json:"agent"`
		Metrics map[string]any `json:"metrics"`
		Members []any          `json:"members"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "blocked", "why": "a tool use awaits its result, and nothing runs", "status_since": "2023-11-14T23:10:20Z",
		"model": "claude-opus-4-1", "session_id": "s-1", "last_activity": "2023-11-14T23:10:20Z", "binding": "session record"}
	for k, v := range want {
		if j.Agent[k] != v {
			t.Errorf("agent.%s = %#v, want %#v", k, j.Agent[k], v)
		}
	}
	if len(j.Agent) != len(want) || j.Members == nil {
		t.Errorf("agent %v, members %v (an ended agent's row has [] members)", j.Agent, j.Members)
	}
	wantMetrics := map[string]any{"status_seconds": 180.0,
		"context_used_tokens": 180800.0, "context_window_tokens": 200000.0, "context_percent": 90.4, "input_tokens": 0.0, "output_tokens": 12.0,
		"cache_read_tokens": 0.0, "cache_creation_tokens": 0.0, "turns": 2.0, "pending_tools": 1.0, "last_activity_unix_seconds": 1700003420.0,
		"transcript_bytes": 9000000.0, "transcript_skipped_bytes": 600000.0, "transcript_malformed_lines": 0.0,
		"subagent_input_tokens": 0.0, "subagent_output_tokens": 0.0, "subagent_cache_read_tokens": 0.0, "subagent_cache_creation_tokens": 0.0,
		"subagents": 0.0, "subagents_working": 0.0, "cache_creation_5m_tokens": 0.0, "cache_creation_1h_tokens": 0.0,
		"compactions": 0.0, "api_errors": 0.0}
	for k, v := range wantMetrics {
		if j.Metrics[k] != v {
			t.Errorf("metrics.%s = %#v, want %#v", k, j.Metrics[k], v)
		}
	}
}

// procwalk session agent:NAME says all of it, and that the sums are of the
// part of the transcript read.
func TestAgentSessionLines(t *testing.T) {
	now := time.Unix(1700003600, 0)
	s := session.Session{Kind: session.KindAgent, Name: "claude/app", Attrs: map[string]string{}}
	a := &session.AgentState{Status: "blocked", StatusFor: 3 * time.Minute, Why: "a tool use awaits its result, and nothing runs",
		ContextWindowTokens: 200000, ContextPercent: 90.4,
		Transcript: &session.Transcript{Path: "/h/.claude/projects/-app/s.jsonl", Model: "claude-opus-4-1", ContextUsedTokens: 180800, InputTokens: 7,
			OutputTokens: 12, CacheReadTokens: 3, CacheCreationTokens: 4, Turns: 2, Last: session.EntryToolUse, PendingTools: 1,
			LastActivity: now.Add(-3 * time.Minute), Bytes: 9437184, SkippedBytes: 1048576, Malformed: 1}}
	lines := func() string {
		var kv table
		addAgentLines(&kv, &s, a, now)
		var b strings.Builder
		for _, r := range kv.rows {
			b.WriteString(strings.Join(r, ": ") + "\n")
		}
		return b.String()
	}
	want := `status: blocked for 3m00s: a tool use awaits its result, and nothing runs
model: claude-opus-4-1
context: 180800 tokens of 200000 (90.4%)
tokens: input 7, output 12, cache read 3, cache creation 4 (partial: of the part read; 1.0 MiB of the transcript was not)
turns: 2, last entry tool_use, tool uses awaiting results: 1 (partial: of the part read; 1.0 MiB of the transcript was not)
`
	got := lines()
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "transcript: /h/.claude/projects/-app/s.jsonl (8388608 bytes read of 9437184, 1048576 not, 1 lines skipped)\n") {
		t.Errorf("got\n%s\nwant it to start\n%s", got, want)
	}
	a.Transcript.SkippedBytes = 0
	if got := lines(); strings.Contains(got, "partial") || !strings.Contains(got, "(9437184 bytes read, 1 lines skipped)") || strings.Contains(got, "api errors") {
		t.Errorf("a whole transcript:\n%s", got)
	}
	a.Transcript.Compactions, a.Transcript.APIErrors, a.Transcript.LastError, a.Transcript.LastErrorAt = 2, 3, "rate_limit", now.Add(-2*time.Minute)
	if got := lines(); !strings.Contains(got, "tool uses awaiting results: 1, compactions: 2\n") ||
		!strings.Contains(got, "api errors: 3, the last rate_limit at "+now.Add(-2*time.Minute).Format("2006-01-02 15:04:05")+", 2m00s ago\n") {
		t.Errorf("compactions and API errors:\n%s", got)
	}
	// What the session says of itself, its cost and rate limits.
	a.Transcript.Title, a.Transcript.GitBranch, a.Transcript.Version, a.Transcript.PermissionMode = "lexer \x1b[1mv2", "main", "2.1.42", "plan"
	a.CostUSD, a.HaveCost, a.Transcript.HaveRateLimits, a.Transcript.RateLimitPrimaryPercent, a.Transcript.RateLimitSecondaryPercent = 0.33796, true, true, 7, 77.5
	if got := lines(); !strings.Contains(got, "session: title lexer \\x1b[1mv2, branch main, version 2.1.42, permission mode plan\n") ||
		!strings.Contains(got, "cost: $0.3380\n") || !strings.Contains(got, "rate limits: primary 7.0%, secondary 77.5% used\n") {
		t.Errorf("session, cost and rate limits:\n%s", got)
	}
	a.HaveCost, a.Unpriced = false, []string{"gemini-3"}
	if got := lines(); !strings.Contains(got, "cost: unknown: no price for gemini-3\n") {
		t.Errorf("unpriced:\n%s", got)
	}
	a.Transcript.Title, a.Transcript.GitBranch, a.Transcript.Version, a.Transcript.PermissionMode, a.Unpriced, a.Transcript.HaveRateLimits = "", "", "", "", nil, false
	// Its subagents' part of the tokens, which the tokens line includes.
	a.Subagents, a.SubagentsWorking, a.SubagentTokens = 2, 1, session.TokenCounts{InputTokens: 3, OutputTokens: 8, CacheCreationTokens: 100}
	if got := lines(); !strings.Contains(got, "tokens: input 10, output 20, cache read 3, cache creation 104\nsubagents: 2 (1 working), their tokens: input 3, output 8, cache read 0, cache creation 100\n") {
		t.Errorf("subagents:\n%s", got)
	}
	a.Subagents, a.SubagentTokens = 0, session.TokenCounts{}
	a.Transcript, a.TranscriptError = nil, "open /h/x: permission denied"
	if got := lines(); !strings.Contains(got, "transcript: unreadable: open /h/x: permission denied") {
		t.Errorf("no transcript:\n%s", got)
	}
	// How the transcript was found; when ambiguous, the files it could be.
	a.Binding, a.Candidates = session.BindAmbiguous, []string{"/h/p/a.jsonl", "/h/p/b.jsonl"}
	if got := lines(); !strings.Contains(got, "binding: ambiguous: one of /h/p/a.jsonl, /h/p/b.jsonl; none read\n") {
		t.Errorf("ambiguous:\n%s", got)
	}
	if b, err := json.Marshal(newJSONAgent(&s, a)); err != nil || !strings.Contains(string(b), `"binding":"ambiguous","candidates":["/h/p/a.jsonl","/h/p/b.jsonl"]`) {
		t.Errorf("JSON %s, %v", b, err)
	}
	// Files of its folders left unread, each with why, escaped.
	a.Skipped = []session.SkippedFile{{Path: "/h/p/f.jsonl", Why: "not a regular file: a FIFO"}, {Path: "/h/p/\x1b[2J.jsonl", Why: "a symbolic link, not followed"}}
	a.SkippedMore = 3
	if got := lines(); !strings.Contains(got, "skipped: /h/p/f.jsonl: not a regular file: a FIFO\nskipped: /h/p/\\x1b[2J.jsonl: a symbolic link, not followed\nskipped: 3 more files\n") {
		t.Errorf("skipped files:\n%s", got)
	}
	b, err := json.Marshal(newJSONAgent(&s, a))
	if err != nil || !strings.Contains(string(b), `"skipped":[{"path":"/h/p/f.jsonl","why":"not a regular file: a FIFO"},{"path":"/h/p/\u001b[2J.jsonl","why":"a symbolic link, not followed"}],"skipped_more":3`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// Bad agent options are usage errors that say what was wrong.
func TestAgentFlagErrors(t *testing.T) {
	clearEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent-transcript", "goose=claude:/x"}, `--agent-transcript: bad session config: agent transcript "goose=claude:/x": no agent "goose"`},
		{[]string{"--agent-transcript", "claude=yaml:/x"}, `unknown parser "yaml": parsers are claude, codex`},
		{[]string{"--agent-context-window", "claude=lots"}, `--agent-context-window: bad session config: context window "claude=lots": want FAMILY=TOKENS`},
		{[]string{"--agent-first-read", "1k"}, `--agent-first-read "1k": 1k is less than 64 KiB`},
		{[]string{"--agent-first-read", "lots"}, `--agent-first-read "lots": bad size "lots"`},
		{[]string{"--agent-busy-cpu", "-1"}, `--agent-busy-cpu -1: must not be negative`},
		{[]string{"--agent-turn-timeout", "-1s"}, `--agent-turn-timeout -1s: must not be negative`},
		{[]string{"--agent-prices", "/nonexistent/prices.conf"}, `--agent-prices "/nonexistent/prices.conf": bad price table: /nonexistent/prices.conf: no such file or directory`},
	} {
		r := cli(t, fixture(append([]string{"sessions", "--no-rates", "--kind", "agent"}, tt.args...)...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if r := cli(t, "telegraf", "--proc", fixtureProc, "--agent-active-within", "soon"); r.code == exitOK || !strings.Contains(r.stderr, `agent_active_within (--agent-active-within) "soon": want a duration`) {
		t.Errorf("telegraf --agent-active-within soon: exit %d, %q", r.code, r.stderr)
	}
}

// A list of agents alone keeps the agents' stable order (Group's: each
// agent keeps its place, new ones last), not the biggest first; --sort
// still sorts by a column.
func TestAgentListKeepsStableOrder(t *testing.T) {
	names := func(out string) []string {
		var n []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "agent" {
				n = append(n, f[1])
			}
		}
		return n
	}
	stable := cli(t, sessionsFixture("sessions", "--kind", "agent", "--no-rates", "--wide")...)
	byRSS := cli(t, sessionsFixture("sessions", "--kind", "agent", "--no-rates", "--wide", "--sort", "rss")...)
	if stable.code != 0 || byRSS.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", stable.code, byRSS.code, stable.stderr, byRSS.stderr)
	}
	fs, err := procwalk.NewFS(sessionsProc)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.FieldCmdline | procwalk.FieldCwd | procwalk.FieldStatus)
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindAgent}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sessions, _ := g.Group(snap)
	for _, s := range sessions {
		want = append(want, s.Name)
	}
	if got := names(stable.stdout); len(want) < 3 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sessions --kind agent: %v, want Group's order %v", got, want)
	}
	if got := names(byRSS.stdout); strings.Join(got, " ") == strings.Join(want, " ") {
		t.Errorf("--sort rss kept Group's order %v: the fixture no longer tells them apart", got)
	}
}
