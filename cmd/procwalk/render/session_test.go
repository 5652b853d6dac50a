//go:build linux

package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

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
		var kv Table
		addAgentLines(&kv, &s, a, now)
		var b strings.Builder
		for _, r := range kv.Rows {
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
	// Why quotes the transcript's error text: escaped.
	why := a.Why
	a.Status, a.Why = session.AgentError, "its last model call failed: \x1b]0;pwned\a"
	if got := lines(); !strings.Contains(got, "status: error for 3m00s: its last model call failed: \\x1b]0;pwned\\x07\n") {
		t.Errorf("an error's text:\n%s", got)
	}
	a.Status, a.Why = "blocked", why
	// Seen in that status first at this gather (a one-shot command's only
	// look): no "for 0s".
	idle := *a
	idle.Status, idle.StatusFor, idle.Why = "idle", 0, "no transcript found, and its processes are quiet"
	var kv Table
	addAgentLines(&kv, &s, &idle, now)
	if got := strings.Join(kv.Rows[0], ": "); got != "status: idle: no transcript found, and its processes are quiet" {
		t.Errorf("a status entered at this gather: %q", got)
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

func TestSessionsFooter(t *testing.T) {
	var b strings.Builder
	hint := func(k string) string { return "see " + k }
	SessionsFooter(&b, 3, map[string]int{session.KindUser: 1, session.KindTmux: 12, session.KindAgent: 0}, hint)
	// In the kinds' order, none for a count of 0.
	want := "... and 12 more tmux sessions (see tmux)\n... and 1 more user session (see user)\n"
	if b.String() != want {
		t.Errorf("footer:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	SessionsFooter(&b, 0, nil, hint)
	if b.String() != "(no sessions)\n" {
		t.Errorf("footer of no session: %q", b.String())
	}
}

func TestSessionsFields(t *testing.T) {
	for _, tt := range []struct {
		pss, rates, json bool
		want             procwalk.Fields
	}{
		{false, false, false, procwalk.FieldSwap},
		{true, false, false, procwalk.FieldSwap | procwalk.FieldSmaps},
		{false, true, false, procwalk.FieldSwap | procwalk.FieldIO},
		{false, false, true, procwalk.FieldSwap | procwalk.FieldIO}, // JSON has the byte counts
	} {
		if got := SessionsFields(tt.pss, tt.rates, tt.json); got != tt.want {
			t.Errorf("pss %v, rates %v, json %v: %q, want %q", tt.pss, tt.rates, tt.json, got, tt.want)
		}
	}
}
