//go:build linux

package render

import (
	"strings"
	"testing"
	"time"

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
	if got := lines(); strings.Contains(got, "partial") || !strings.Contains(got, "(9437184 bytes read, 1 lines skipped)") {
		t.Errorf("a whole transcript:\n%s", got)
	}
	a.Transcript, a.TranscriptError = nil, "open /h/x: permission denied"
	if got := lines(); !strings.Contains(got, "transcript: unreadable: open /h/x: permission denied") {
		t.Errorf("no transcript:\n%s", got)
	}
}
