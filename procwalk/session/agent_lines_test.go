//go:build linux

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agent_lines_test.go: the transcript lines that are not plain turns, from
// the fixtures in testdata/transcripts, whose README says which public
// source each shape comes from (Claude Code 2.1.38/2.1.39 transcripts of
// marot/spotter, daaain/claude-code-log, ryoppippi/ccusage, openai/codex).

const fixtureSession = "7f3c1a52-8d4e-4b6a-9c21-5e0d7a3b9f14"

// fixtureLines reads a fixture's lines; n > 0 keeps the first n.
func fixtureLines(t testing.TB, name string, n int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if n > 0 {
		lines = lines[:n]
	}
	return lines
}

// readFixture reads the first n lines of a fixture (all for 0) as a
// transcript of its parser.
func readFixture(t *testing.T, name, parser string, n int) *Transcript {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, fixtureLines(t, name, n), "")
	f := newTestTranscript(path, parser)
	if _, _, err := f.update(nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return &f.t
}

// fixtureStatus gathers the fixture's claude agent (105) with the first n
// lines of a fixture as its transcript, last written at mod, at time at.
func fixtureStatus(t *testing.T, name string, n int, mod, at time.Time) *AgentState {
	t.Helper()
	root, home := agentFixture(t)
	writeTranscript(t, claudeFile(home, fixtureSession), fixtureLines(t, name, n), mod)
	return agentOf(t, newAgentGatherer(t, root, AgentStatusConfig{}).gather(at), "agent:claude/work/app")
}

func fixtureTime(s string) time.Time {
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return at
}

// An automatic compaction in the middle of a turn: the summary is no
// prompt, the context is unknown until the next model call says (this
// boundary states no postTokens, as 2.1.39 wrote it), then that call's.
func TestClaudeAutoCompaction(t *testing.T) {
	tr := readFixture(t, "claude-2.1-autocompact.jsonl", "claude", 7) // up to the summary
	if tr.Compactions != 1 || tr.ContextUsedTokens != 0 || tr.Turns != 1 || tr.Last != EntryToolResult {
		t.Errorf("after the summary: compactions %d, context %d, turns %d, last %v", tr.Compactions, tr.ContextUsedTokens, tr.Turns, tr.Last)
	}
	a := fixtureStatus(t, "claude-2.1-autocompact.jsonl", 7, fixtureTime("2026-02-12T16:00:12Z"), fixtureTime("2026-02-12T16:01:00Z"))
	if a.Status != AgentWorking || a.ContextPercent != 0 {
		t.Errorf("mid-turn after the compaction: %s (%s), context %v %%", a.Status, a.Why, a.ContextPercent)
	}
	tr = readFixture(t, "claude-2.1-autocompact.jsonl", "claude", 0)
	if tr.ContextUsedTokens != 3+14600+21478 || tr.Turns != 1 || tr.Last != EntryReply || tr.Compactions != 1 {
		t.Errorf("after the next call: context %d, turns %d, last %v", tr.ContextUsedTokens, tr.Turns, tr.Last)
	}
	// The message before the compaction was written in two lines: once.
	if tr.InputTokens != 3+3 || tr.OutputTokens != 120+9 || tr.CacheCreationTokens != 1200+14600 || tr.CacheCreation5mTokens != 1200+14600 {
		t.Errorf("tokens %+v", tr.Tokens())
	}
}

// /compact: the command, the boundary and the summary are no turn; the
// context follows postTokens, not the 91 % before; the agent is idle.
func TestClaudeManualCompaction(t *testing.T) {
	tr := readFixture(t, "claude-2.1-manual-compact.jsonl", "claude", 0)
	if tr.Turns != 1 || tr.Compactions != 1 || tr.ContextUsedTokens != 12345 || tr.Last != EntryReply {
		t.Errorf("turns %d, compactions %d, context %d, last %v", tr.Turns, tr.Compactions, tr.ContextUsedTokens, tr.Last)
	}
	a := fixtureStatus(t, "claude-2.1-manual-compact.jsonl", 0, fixtureTime("2026-02-12T16:02:40Z"), fixtureTime("2026-02-12T16:03:00Z"))
	if a.Status != AgentIdle || a.ContextPercent != 100*12345.0/200000 {
		t.Errorf("after /compact: %s (%s), context %v %%", a.Status, a.Why, a.ContextPercent)
	}
}

// Slash commands (2.1's local_command system lines, 2.0's user lines),
// their output and bash mode (!) are no prompts: one turn, idle.
func TestClaudeLocalCommandsAndBashMode(t *testing.T) {
	lines := fixtureLines(t, "claude-local-and-bash.jsonl", 0)
	// And bash mode's output long enough (over 8 KiB) to be scanned, not decoded.
	long := strings.Replace(lines[8], "M parser.go", strings.Repeat("?? generated/file.go\\n", 1000), 1)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, append(lines, long), "")
	f := newTestTranscript(path, "claude")
	if _, _, err := f.update(nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if tr := &f.t; tr.Turns != 1 || tr.Last != EntryReply || tr.Malformed != 0 || len(long) <= claudeBigLine {
		t.Errorf("turns %d, last %v, malformed %d", tr.Turns, tr.Last, tr.Malformed)
	}
	a := fixtureStatus(t, "claude-local-and-bash.jsonl", 0, fixtureTime("2026-02-12T16:03:55Z"), fixtureTime("2026-02-12T16:05:00Z"))
	if a.Status != AgentIdle {
		t.Errorf("after local commands: %s (%s)", a.Status, a.Why)
	}
}

// A custom slash command (or skill) the person typed expands to a prompt:
// the model answers it (working), and its expanded prompt is the turn. The
// line shapes are those public transcript readers' fixtures record
// ("<command-message>NAME is running…</command-message>").
func TestClaudePromptCommand(t *testing.T) {
	lines := fixtureLines(t, "claude-local-and-bash.jsonl", 2) // a prompt and its answer
	command := strings.Replace(lines[0], `"content":"what changed?"`, `"content":"<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>PR 12</command-args>"`, 1)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, append(lines, command), "")
	f := newTestTranscript(path, "claude")
	f.update(nil, time.Time{})
	if f.t.Last != EntryPrompt || f.t.Turns != 1 {
		t.Errorf("after the command: last %v, turns %d", f.t.Last, f.t.Turns)
	}
	appendText(t, path, strings.Replace(lines[0], "what changed?", "Review pull request 12: read its diff, then ...", 1)+"\n")
	f.update(nil, time.Time{})
	if f.t.Last != EntryPrompt || f.t.Turns != 2 {
		t.Errorf("after its expanded prompt: last %v, turns %d", f.t.Last, f.t.Turns)
	}
}

// A model call refused for the rate limit: its zero usage leaves the
// context as it was, the error is kept, and the agent is rate_limited,
// even while the transcript just grew; another error kind is "error"; a
// new prompt starts a turn again.
func TestClaudeAPIError(t *testing.T) {
	tr := readFixture(t, "claude-api-error.jsonl", "claude", 0)
	if tr.ContextUsedTokens != 150003 || tr.LastError != "rate_limit" || tr.APIErrors != 1 || tr.Last != EntryAPIError || tr.Model != "claude-opus-4-6" ||
		!tr.LastErrorAt.Equal(fixtureTime("2026-02-12T16:05:02Z")) || tr.Turns != 2 {
		t.Errorf("context %d, error %q at %v (%d), last %v, model %q, turns %d", tr.ContextUsedTokens, tr.LastError, tr.LastErrorAt, tr.APIErrors, tr.Last, tr.Model, tr.Turns)
	}
	if tr.WebSearchRequests != 2 || tr.WebFetchRequests != 1 || tr.CacheCreation5mTokens != 3000 {
		t.Errorf("server tools %d %d, 5m cache writes %d", tr.WebSearchRequests, tr.WebFetchRequests, tr.CacheCreation5mTokens)
	}
	errAt := fixtureTime("2026-02-12T16:05:02Z")
	for _, at := range []time.Time{errAt.Add(2 * time.Second), errAt.Add(20 * time.Minute)} {
		a := fixtureStatus(t, "claude-api-error.jsonl", 0, errAt, at)
		if a.Status != AgentRateLimited || a.ContextPercent != 100*150003.0/200000 {
			t.Errorf("%v after the error: %s (%s), context %v %%", at.Sub(errAt), a.Status, a.Why, a.ContextPercent)
		}
	}

	root, home := agentFixture(t)
	lines := fixtureLines(t, "claude-api-error.jsonl", 0)
	lines[3] = strings.Replace(strings.Replace(lines[3], `"error":"rate_limit"`, `"error":"server_error"`, 1), `"apiErrorStatus":429`, `"apiErrorStatus":529`, 1)
	path := claudeFile(home, fixtureSession)
	writeTranscript(t, path, lines, errAt)
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	if a := agentOf(t, ag.gather(errAt.Add(time.Minute)), "agent:claude/work/app"); a.Status != AgentError || !strings.Contains(a.Why, "server_error") {
		t.Errorf("a server error: %s (%s)", a.Status, a.Why)
	}
	appendText(t, path, strings.Replace(lines[2], "now the parser", "try again", 1)+"\n")
	if a := agentOf(t, ag.gather(errAt.Add(2*time.Minute)), "agent:claude/work/app"); a.Status != AgentWorking || a.Transcript.LastError != "server_error" {
		t.Errorf("a prompt after the error: %s (%s), last error %q", a.Status, a.Why, a.Transcript.LastError)
	}
}

// A message whose lines interleave with another's counts once, with its
// last usage: input 14, not 23; cache creation 18,500, not 35,500. The
// context is the main message's, not the sidechain's.
func TestClaudeInterleavedMessages(t *testing.T) {
	tr := readFixture(t, "claude-1.0-interleaved.jsonl", "claude", 0)
	if tr.InputTokens != 14 || tr.CacheCreationTokens != 18500 || tr.OutputTokens != 80+30 {
		t.Errorf("input %d, cache creation %d, output %d; want 14, 18500, 110", tr.InputTokens, tr.CacheCreationTokens, tr.OutputTokens)
	}
	if tr.ContextUsedTokens != 9+17000 || tr.PendingTools != 2 || tr.Last != EntryToolUse {
		t.Errorf("context %d, pending %d, last %v", tr.ContextUsedTokens, tr.PendingTools, tr.Last)
	}
	// Ids are remembered boundedly: past maxMessageIDs others, a message's
	// repeat counts again, and memory stays put.
	var lines []string
	for i := range 3 * maxMessageIDs {
		lines = append(lines, claudeAssistantLine(agentNow, fmt.Sprintf("msg_%d", i), claudeModel, "text", "", 1, 1, 0, 0))
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, lines, "")
	f := newTestTranscript(path, "claude")
	f.update(nil, agentNow)
	if len(f.t.msgs.byID) != maxMessageIDs || len(f.t.msgs.order) != maxMessageIDs || f.t.InputTokens != 3*maxMessageIDs {
		t.Errorf("kept %d ids (%d in order), input %d", len(f.t.msgs.byID), len(f.t.msgs.order), f.t.InputTokens)
	}
}

// Codex: the context is the last call's total_tokens of the window (Codex's
// own rule); a token_count stating total_tokens alone (the window
// exceeded) means a full context and leaves the counters; rate limits,
// version and branch as stated.
func TestCodexContextExceeded(t *testing.T) {
	tr := readFixture(t, "codex-context-exceeded.jsonl", "codex", 5)
	if tr.ContextUsedTokens != 61000 || tr.ContextWindowTokens != 272000 || tr.InputTokens != 30000 || tr.CacheReadTokens != 150000 ||
		tr.OutputTokens != 3000 || tr.ReasoningTokens != 1200 {
		t.Errorf("context %d of %d, tokens %+v", tr.ContextUsedTokens, tr.ContextWindowTokens, tr.Tokens())
	}
	if !tr.HaveRateLimits || tr.RateLimitPrimaryPercent != 7 || tr.RateLimitSecondaryPercent != 77 || tr.Version != "0.106.0" || tr.GitBranch != "fix-lexer" {
		t.Errorf("rate limits %v %v %v, version %q, branch %q", tr.HaveRateLimits, tr.RateLimitPrimaryPercent, tr.RateLimitSecondaryPercent, tr.Version, tr.GitBranch)
	}
	tr = readFixture(t, "codex-context-exceeded.jsonl", "codex", 0)
	if tr.ContextUsedTokens != 272000 || tr.InputTokens != 30000 || tr.CacheReadTokens != 150000 || tr.OutputTokens != 3000 || tr.ReasoningTokens != 1200 {
		t.Errorf("after the window was exceeded: context %d, tokens %+v", tr.ContextUsedTokens, tr.Tokens())
	}
	if tr.RateLimitPrimaryPercent != 9 || tr.RateLimitSecondaryPercent != 78 || tr.Malformed != 0 {
		t.Errorf("rate limits %v %v, malformed %d", tr.RateLimitPrimaryPercent, tr.RateLimitSecondaryPercent, tr.Malformed)
	}
}

// A transcript truncated and written again, longer, between two reads
// (same inode, larger than what was read) is read anew, not appended to:
// whether its head differs, or only the bytes before what was read.
func TestTranscriptRewrittenLonger(t *testing.T) {
	t0 := time.Date(2026, 2, 12, 16, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	// Another conversation, longer than the first, with other counts.
	rewrite := []string{claudeUserLine(t1, "a new topic, with a long prompt to be longer than the first conversation was"),
		claudeAssistantLine(t1, "msg_new", claudeModel, "text", "end_turn", 1000, 10, 0, 0)}
	for i := range 8 {
		rewrite = append(rewrite, claudeUserLine(t1, fmt.Sprintf("and %d", i)))
	}
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"another head", append([]string{`{"type":"summary","summary":"Another session","leafUuid":"l-2"}`}, rewrite...)},
		{"same head", rewrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			writeLines(t, path, claudeConversation(t0)[2:], "")
			f := newTestTranscript(path, "claude")
			f.update(nil, t0)
			before, ino := f.t.InputTokens, f.ino
			if err := os.WriteFile(path, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600); err != nil { // truncates: the same inode
				t.Fatal(err)
			}
			if grew, _, err := f.update(nil, t0); !grew || err != nil || f.ino != ino {
				t.Fatalf("grew %v, %v, inode %d (was %d)", grew, err, f.ino, ino)
			}
			want := newTestTranscript(path, "claude")
			want.update(nil, t0)
			if f.t.InputTokens != 1000 || f.t.Turns != 9 || f.t.Malformed != 0 || f.t.Bytes != want.t.Bytes || before != 114 {
				t.Errorf("input %d turns %d bytes %d, want %d %d %d (a fresh read)", f.t.InputTokens, f.t.Turns, f.t.Bytes, want.t.InputTokens, want.t.Turns, want.t.Bytes)
			}
		})
	}
}
