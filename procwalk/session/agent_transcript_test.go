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

// Claude Code transcript lines in the real format, as the tests write them.

func claudeUserLine(at time.Time, text string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/work/app","sessionId":"5f2c9a1e-0000-4000-8000-000000000001","version":"2.0.14","type":"user","message":{"role":"user","content":%q},"uuid":"u-%d","timestamp":%q}`,
		text, at.UnixNano(), at.UTC().Format(time.RFC3339Nano))
}

func claudeToolResultLine(at time.Time, toolID string) string {
	return fmt.Sprintf(`{"parentUuid":"a","isSidechain":false,"sessionId":"5f2c9a1e-0000-4000-8000-000000000001","type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"ok\nPASS","is_error":false}]},"uuid":"r-%d","timestamp":%q,"toolUseResult":{"stdout":"ok"}}`,
		toolID, at.UnixNano(), at.UTC().Format(time.RFC3339Nano))
}

// claudeAssistantLine is one content block of message msgID: "text",
// "thinking" or "tool_use:ID".
func claudeAssistantLine(at time.Time, msgID, model, block, stop string, in, out, cacheRead, cacheCreate int64) string {
	content := `{"type":"text","text":"Done."}`
	switch {
	case block == "thinking":
		content = `{"type":"thinking","thinking":"Let me see.","signature":"x"}`
	case strings.HasPrefix(block, "tool_use:"):
		content = fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"go test ./..."}}`, strings.TrimPrefix(block, "tool_use:"))
	}
	stopJSON := "null"
	if stop != "" {
		stopJSON = fmt.Sprintf("%q", stop)
	}
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"sessionId":"5f2c9a1e-0000-4000-8000-000000000001","type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":%q,"content":[%s],"stop_reason":%s,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"}},"requestId":"req_1","uuid":"a-%d","timestamp":%q}`,
		msgID, model, content, stopJSON, in, cacheCreate, cacheRead, out, at.UnixNano(), at.UTC().Format(time.RFC3339Nano))
}

const claudeModel = "claude-sonnet-4-5-20250929"

// claudeConversation is a session: meta lines, a prompt, a message in two
// blocks (thinking, tool use: one usage, repeated), the tool's result, the
// answer, and a sub-agent's line. It ends with the model's reply.
func claudeConversation(t0 time.Time) []string {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []string{
		`{"type":"summary","summary":"Fix the flaky test","leafUuid":"l-1"}`,
		`{"type":"file-history-snapshot","messageId":"m","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}`,
		claudeUserLine(at(0), "make the tests pass"),
		claudeAssistantLine(at(2), "msg_01", claudeModel, "thinking", "", 10, 5, 12000, 3000),
		claudeAssistantLine(at(3), "msg_01", claudeModel, "tool_use:toolu_01", "tool_use", 10, 80, 12000, 3000),
		claudeToolResultLine(at(9), "toolu_01"),
		`{"isSidechain":true,"sessionId":"5f2c9a1e-0000-4000-8000-000000000001","type":"assistant","message":{"id":"msg_sub","model":"claude-haiku-4-5","content":[{"type":"text","text":"sub"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":7,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"timestamp":"` + at(10).UTC().Format(time.RFC3339Nano) + `"}`,
		claudeAssistantLine(at(12), "msg_02", claudeModel, "text", "end_turn", 4, 40, 15000, 200),
	}
}

func writeLines(t testing.TB, path string, lines []string, tail string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"+tail), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendText(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func newTestTranscript(path, parser string) *transcriptFile {
	return &transcriptFile{path: path, uid: uint32(os.Getuid()), parser: newTranscriptParser(parser)}
}

func TestClaudeTranscriptIncremental(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := claudeConversation(t0)
	// A malformed line in the middle, and a last line cut short.
	lines = append(lines[:3], append([]string{`{"type":"user","message":`}, lines[3:]...)...)
	cut := claudeUserLine(t0.Add(60*time.Second), "now the docs")
	writeLines(t, path, lines, cut[:40])
	f := newTestTranscript(path, "claude")
	var buf []byte
	grew, buf, err := f.update(buf, t0)
	if err != nil || !grew {
		t.Fatalf("first read: grew %v, %v", grew, err)
	}
	got := f.t
	if got.Malformed != 1 || got.Model != claudeModel || got.SessionID != "5f2c9a1e-0000-4000-8000-000000000001" {
		t.Errorf("malformed %d, model %q, session %q", got.Malformed, got.Model, got.SessionID)
	}
	// msg_01's usage counted once though written twice; the sub-agent's counts.
	if got.InputTokens != 10+100+4 || got.OutputTokens != 80+7+40 || got.CacheReadTokens != 12000+15000 || got.CacheCreationTokens != 3000+200 {
		t.Errorf("tokens in %d out %d cache read %d creation %d", got.InputTokens, got.OutputTokens, got.CacheReadTokens, got.CacheCreationTokens)
	}
	if got.ContextUsedTokens != 4+15000+200 || got.Turns != 1 || got.Last != EntryReply || got.PendingTools != 0 {
		t.Errorf("context %d, turns %d, last %v, pending %d", got.ContextUsedTokens, got.Turns, got.Last, got.PendingTools)
	}
	if want := t0.Add(12 * time.Second); !got.LastActivity.Equal(want) {
		t.Errorf("last activity %v, want %v", got.LastActivity, want)
	}
	whole := int64(len(strings.Join(lines, "\n")) + 1)
	if f.offset != whole || string(f.line) != cut[:40] {
		t.Fatalf("offset %d (want %d), kept %q", f.offset, whole, f.line)
	}

	// Nothing appended: nothing read.
	if grew, _, err := f.update(buf, t0); grew || err != nil {
		t.Errorf("unchanged file: grew %v, %v", grew, err)
	}
	// The cut line completes, then a tool use awaits its result.
	appendText(t, path, cut[40:]+"\n"+claudeAssistantLine(t0.Add(70*time.Second), "msg_03", claudeModel, "tool_use:toolu_02", "tool_use", 3, 20, 15300, 100)+"\n")
	if grew, _, err := f.update(buf, t0); !grew || err != nil {
		t.Fatalf("append: grew %v, %v", grew, err)
	}
	got = f.t
	if got.Turns != 2 || got.Last != EntryToolUse || got.PendingTools != 1 || !got.PendingSince.Equal(t0.Add(70*time.Second)) {
		t.Errorf("after append: turns %d, last %v, pending %d since %v", got.Turns, got.Last, got.PendingTools, got.PendingSince)
	}
	if got.ContextUsedTokens != 3+15300+100 || got.Malformed != 1 {
		t.Errorf("after append: context %d, malformed %d", got.ContextUsedTokens, got.Malformed)
	}

	// Replaced by a new file (another inode, here also shorter): read anew.
	tmp := path + ".new"
	writeLines(t, tmp, []string{claudeUserLine(t0.Add(90*time.Second), "hello")}, "")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if grew, _, err := f.update(buf, t0); !grew || err != nil {
		t.Fatalf("replaced: grew %v, %v", grew, err)
	}
	got = f.t
	if got.Turns != 1 || got.InputTokens != 0 || got.Malformed != 0 || got.Last != EntryPrompt || got.Model != "" {
		t.Errorf("replaced: turns %d, input %d, malformed %d, last %v, model %q", got.Turns, got.InputTokens, got.Malformed, got.Last, got.Model)
	}

	// Truncated in place (same inode, shorter than read): read anew.
	if err := os.WriteFile(path, []byte(claudeUserLine(t0, "x")[:10]), 0o600); err != nil {
		t.Fatal(err)
	}
	f.update(buf, t0)
	if f.t.Turns != 0 || f.offset != 0 || len(f.line) != 10 {
		t.Errorf("truncated: turns %d, offset %d, kept %d bytes", f.t.Turns, f.offset, len(f.line))
	}
}

// An interruption ends the turn and forgets the tool use it cut short.
func TestClaudeTranscriptInterrupted(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, []string{
		claudeUserLine(t0, "refactor"),
		claudeAssistantLine(t0.Add(time.Second), "msg_01", claudeModel, "tool_use:toolu_01", "tool_use", 1, 1, 1, 1),
		claudeUserLine(t0.Add(5*time.Second), "[Request interrupted by user for tool use]"),
	}, "")
	f := newTestTranscript(path, "claude")
	f.update(nil, t0)
	if f.t.Last != EntryInterrupted || f.t.PendingTools != 0 || f.t.Turns != 1 {
		t.Errorf("last %v, pending %d, turns %d", f.t.Last, f.t.PendingTools, f.t.Turns)
	}
}

// A line longer than maxTranscriptLine is skipped and counted; reading goes
// on after it, and memory stays bounded.
func TestTranscriptOversizedLine(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	big := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", maxTranscriptLine) + `"}}`
	writeLines(t, path, []string{claudeUserLine(t0, "a"), big, claudeUserLine(t0, "b")}, "")
	f := newTestTranscript(path, "claude")
	f.update(nil, t0)
	if f.t.Oversized != 1 || f.t.Turns != 2 || f.t.Malformed != 0 || cap(f.line) > transcriptChunk {
		t.Errorf("oversized %d, turns %d, malformed %d, kept buffer %d", f.t.Oversized, f.t.Turns, f.t.Malformed, cap(f.line))
	}
}

// Another user's file is not read.
func TestTranscriptOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, []string{`{"type":"summary"}`}, "")
	f := &transcriptFile{path: path, uid: uint32(os.Getuid()) + 1, parser: claudeParser{}}
	if _, _, err := f.update(nil, time.Time{}); err == nil || !strings.Contains(err.Error(), ErrTranscriptOwner.Error()) {
		t.Errorf("got %v, want %v", err, ErrTranscriptOwner)
	}
}

// codexLines is a Codex CLI session in its rollout format: the session's
// meta, a prompt, a function call and its output, token counts, and a
// second function call still awaiting its output.
func codexLines(t0 time.Time, cwd string) []string {
	ts := func(s int) string {
		return t0.Add(time.Duration(s) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return []string{
		`{"timestamp":"` + ts(0) + `","type":"session_meta","payload":{"id":"0199a213-81c0-7800-8aa1-bbab2a035a53","timestamp":"` + ts(0) + `","cwd":"` + cwd + `","originator":"codex_cli_rs","cli_version":"0.46.0","instructions":null}}`,
		`{"timestamp":"` + ts(1) + `","type":"turn_context","payload":{"cwd":"` + cwd + `","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}`,
		`{"timestamp":"` + ts(1) + `","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the build"}]}}`,
		`{"timestamp":"` + ts(1) + `","type":"event_msg","payload":{"type":"user_message","message":"fix the build","images":[]}}`,
		`{"timestamp":"` + ts(3) + `","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"build\"]}","call_id":"call_A"}}`,
		`{"timestamp":"` + ts(5) + `","type":"response_item","payload":{"type":"function_call_output","call_id":"call_A","output":"{\"output\":\"\",\"metadata\":{\"exit_code\":0}}"}}`,
		`{"timestamp":"` + ts(6) + `","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":21000,"cached_input_tokens":15000,"output_tokens":900,"reasoning_output_tokens":300,"total_tokens":21900},"last_token_usage":{"input_tokens":12000,"cached_input_tokens":9000,"output_tokens":500,"reasoning_output_tokens":200,"total_tokens":12500},"model_context_window":272000},"rate_limits":null}}`,
		`{"timestamp":"` + ts(8) + `","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"rm\",\"-rf\",\"build\"]}","call_id":"call_B"}}`,
	}
}

func TestCodexTranscript(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	done := `{"timestamp":"2023-11-14T22:00:20.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Built."}}`
	writeLines(t, path, codexLines(t0, "/home/dev/work/app"), done[:30])
	f := newTestTranscript(path, "codex")
	f.update(nil, t0)
	got := f.t
	if got.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" || got.CWD != "/home/dev/work/app" || got.Model != "gpt-5-codex" {
		t.Errorf("session %q cwd %q model %q", got.SessionID, got.CWD, got.Model)
	}
	if got.InputTokens != 6000 || got.CacheReadTokens != 15000 || got.OutputTokens != 900 || got.ContextUsedTokens != 12500 || got.ContextWindowTokens != 272000 {
		t.Errorf("input %d cache %d output %d context %d/%d", got.InputTokens, got.CacheReadTokens, got.OutputTokens, got.ContextUsedTokens, got.ContextWindowTokens)
	}
	if got.Turns != 1 || got.Last != EntryToolUse || got.PendingTools != 1 || !got.PendingSince.Equal(t0.Add(8*time.Second)) || got.Malformed != 0 {
		t.Errorf("turns %d last %v pending %d since %v malformed %d", got.Turns, got.Last, got.PendingTools, got.PendingSince, got.Malformed)
	}
	appendText(t, path, done[30:]+"\n"+`{"timestamp":"yesterday","type":"event_msg"}`+"\n")
	f.update(nil, t0)
	if f.t.Last != EntryReply || f.t.PendingTools != 0 || f.t.Malformed != 1 || !f.t.LastActivity.Equal(t0.Add(20*time.Second)) {
		t.Errorf("after the cut line completed and a malformed one: last %v pending %d malformed %d activity %v", f.t.Last, f.t.PendingTools, f.t.Malformed, f.t.LastActivity)
	}
}

func TestTranscriptSourceDirs(t *testing.T) {
	start := time.Date(2025, 3, 30, 23, 0, 0, 0, time.UTC)
	now := time.Date(2025, 4, 1, 1, 0, 0, 0, time.UTC)
	got := expandDays("/home/dev/.codex/sessions/{yyyy}/{mm}/{dd}", start, now)
	for _, want := range []string{"/home/dev/.codex/sessions/2025/03/30", "/home/dev/.codex/sessions/2025/03/31", "/home/dev/.codex/sessions/2025/04/01"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("dirs %q lack %q", got, want)
		}
	}
	if got := expandDays("/home/dev/.claude/projects/{project}", start, now); len(got) != 1 {
		t.Errorf("claude dirs %q", got)
	}
	if _, _, err := ParseTranscriptSource("x=nope:/d"); err == nil {
		t.Error("unknown parser accepted")
	}
	name, src, err := ParseTranscriptSource("aider=claude:{home}/.aider/{project}")
	if err != nil || name != "aider" || src.Parser != "claude" || src.Dir != "{home}/.aider/{project}" {
		t.Errorf("got %q %+v %v", name, src, err)
	}
}

// Long user lines (tool results with file contents, pasted prompts) are
// scanned for their keys: the same result as decoding them.
func TestClaudeTranscriptLongLines(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	big := strings.Repeat(`line \"quoted\" \"tool_use_id\":\"fake\"\n`, 1000)
	result := func(at time.Time, sidechain bool, ids ...string) string {
		var blocks []string
		for _, id := range ids {
			blocks = append(blocks, fmt.Sprintf(`{"tool_use_id":%q,"type":"tool_result","content":"%s"}`, id, big))
		}
		return fmt.Sprintf(`{"parentUuid":"a","isSidechain":%v,"userType":"external","cwd":"/home/dev/work/app","sessionId":"sess-long","type":"user","message":{"role":"user","content":[%s]},"toolUseResult":{"stdout":"%s"},"timestamp":%q}`,
			sidechain, strings.Join(blocks, ","), big, at.UTC().Format(time.RFC3339Nano))
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, []string{
		claudeUserLine(t0, "go"),
		claudeAssistantLine(t0.Add(time.Second), "msg_1", claudeModel, "tool_use:toolu_1", "", 1, 1, 1, 1),
		claudeAssistantLine(t0.Add(time.Second), "msg_1", claudeModel, "tool_use:toolu_2", "tool_use", 1, 1, 1, 1),
		result(t0.Add(2*time.Second), true, "toolu_1", "toolu_2"), // a sub-agent's: not ours
	}, "")
	f := newTestTranscript(path, "claude")
	f.update(nil, t0)
	if f.t.PendingTools != 2 || f.t.Last != EntryToolUse || !f.t.LastActivity.Equal(t0.Add(2*time.Second)) {
		t.Errorf("after a sub-agent's long result: pending %d, last %v, activity %v", f.t.PendingTools, f.t.Last, f.t.LastActivity)
	}
	appendText(t, path, result(t0.Add(3*time.Second), false, "toolu_1", "toolu_2")+"\n")
	f.update(nil, t0)
	if f.t.PendingTools != 0 || f.t.Last != EntryToolResult || f.t.SessionID != "sess-long" || f.t.Malformed != 0 {
		t.Errorf("after the long result: pending %d, last %v, session %q, malformed %d", f.t.PendingTools, f.t.Last, f.t.SessionID, f.t.Malformed)
	}
	prompt := fmt.Sprintf(`{"isSidechain":false,"sessionId":"sess-long","type":"user","message":{"role":"user","content":"%s"},"timestamp":%q}`, big, t0.Add(4*time.Second).UTC().Format(time.RFC3339Nano))
	appendText(t, path, prompt+"\n")
	f.update(nil, t0)
	if f.t.Turns != 2 || f.t.Last != EntryPrompt {
		t.Errorf("after a long prompt: turns %d, last %v", f.t.Turns, f.t.Last)
	}
}

// A first read of a transcript larger than its bound reads the first line
// and the lines that start in the last firstRead bytes, whole: the line
// the bound falls in is dropped, not parsed from its middle; what was not
// read is SkippedBytes, to the byte. Later reads take what is appended.
func TestTranscriptFirstReadBounded(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	// A session id only the first line names, 40 prompts, then a tool use
	// awaiting its result.
	lines := []string{strings.Replace(claudeUserLine(t0, "start"), "5f2c9a1e-0000-4000-8000-000000000001", "first-line-id", 1)}
	for i := range 40 {
		lines = append(lines, claudeUserLine(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("prompt %02d", i)))
	}
	lines = append(lines, claudeAssistantLine(t0.Add(time.Minute), "msg_1", claudeModel, "tool_use:toolu_1", "tool_use", 5, 40, 150000, 29995))
	starts := make([]int64, len(lines)+1) // starts[i]: offset of line i; the last, the size
	for i, l := range lines {
		starts[i+1] = starts[i] + int64(len(l)) + 1
	}
	size := starts[len(lines)]
	firstEnd := starts[1]
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, lines, "")
	for _, tc := range []struct {
		name      string
		firstRead int64
		from      int // the first line read after the first
	}{
		{"bound on a line start", size - starts[30], 30},
		{"bound inside a line", size - starts[30] - 5, 31},
		{"bound one byte past a newline", size - starts[30] + 1, 30},
		{"whole file", size, 1},
		{"no bound", -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestTranscript(path, "claude")
			f.firstRead = tc.firstRead
			grew, _, err := f.update(nil, t0)
			if err != nil || !grew {
				t.Fatalf("grew %v, %v", grew, err)
			}
			got := f.t
			prompts := 41 - tc.from // lines 1..40 are prompts; the first is "start"
			if tc.from == 1 {
				prompts = 40
			}
			if want := starts[tc.from] - firstEnd; got.SkippedBytes != want || got.Bytes != size {
				t.Errorf("skipped %d of %d, want %d of %d", got.SkippedBytes, got.Bytes, want, size)
			}
			if got.Turns != prompts+1 || got.Malformed != 0 || got.SessionID != "5f2c9a1e-0000-4000-8000-000000000001" {
				t.Errorf("turns %d (want %d), malformed %d, session %q", got.Turns, prompts+1, got.Malformed, got.SessionID)
			}
			if got.ContextUsedTokens != 180000 || got.PendingTools != 1 || got.OutputTokens != 40 || got.Model != claudeModel {
				t.Errorf("context %d, pending %d, output %d, model %q", got.ContextUsedTokens, got.PendingTools, got.OutputTokens, got.Model)
			}
		})
	}

	// Codex names its session in its first line, and states token totals:
	// both whole after a bounded first read.
	cpath := filepath.Join(t.TempDir(), "rollout.jsonl")
	codex := codexLines(t0, "/home/dev/work/app")
	pad := strings.Repeat(`{"timestamp":"2023-11-14T22:00:01.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"thinking"}}`+"\n", 200)
	writeLines(t, cpath, codex[:1], pad+strings.Join(codex[1:], "\n")+"\n")
	f := newTestTranscript(cpath, "codex")
	f.firstRead = 4096
	f.update(nil, t0)
	if got := f.t; got.SkippedBytes <= 0 || got.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" || got.CWD != "/home/dev/work/app" ||
		got.InputTokens != 6000 || got.CacheReadTokens != 15000 || got.PendingTools != 1 || got.Malformed != 0 {
		t.Errorf("codex: skipped %d, session %q, cwd %q, input %d, cache %d, pending %d, malformed %d",
			got.SkippedBytes, got.SessionID, got.CWD, got.InputTokens, got.CacheReadTokens, got.PendingTools, got.Malformed)
	}

	// What is appended next is read alone; a replaced file is a first
	// read again.
	f = newTestTranscript(path, "claude")
	f.firstRead = size - starts[30]
	f.update(nil, t0)
	skipped := f.t.SkippedBytes
	more := claudeToolResultLine(t0.Add(2*time.Minute), "toolu_1") + "\n"
	appendText(t, path, more)
	f.update(nil, t0)
	if f.t.SkippedBytes != skipped || f.t.Bytes != size+int64(len(more)) || f.t.PendingTools != 0 {
		t.Errorf("after an append: skipped %d (was %d), bytes %d, pending %d", f.t.SkippedBytes, skipped, f.t.Bytes, f.t.PendingTools)
	}
	small := filepath.Join(t.TempDir(), "new.jsonl")
	writeLines(t, small, claudeConversation(t0), "")
	if err := os.Rename(small, path); err != nil {
		t.Fatal(err)
	}
	f.update(nil, t0)
	if f.t.SkippedBytes != 0 || f.t.Turns != 1 {
		t.Errorf("replaced by a small file: skipped %d, turns %d", f.t.SkippedBytes, f.t.Turns)
	}
}

// Memory per transcript stays bounded however many tool uses a message
// asks for: at most maxPendingTools ids are kept.
func TestTranscriptPendingToolsBounded(t *testing.T) {
	t0 := time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
	var lines []string
	for i := range 3 * maxPendingTools {
		lines = append(lines, claudeAssistantLine(t0, fmt.Sprintf("msg_%d", i), claudeModel, fmt.Sprintf("tool_use:toolu_%d", i), "tool_use", 1, 1, 1, 1))
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, lines, "")
	f := newTestTranscript(path, "claude")
	f.update(nil, t0)
	if f.t.PendingTools != maxPendingTools || len(f.t.pending) != maxPendingTools || cap(f.t.pending) > 2*maxPendingTools {
		t.Errorf("pending %d, kept %d ids (capacity %d), want %d", f.t.PendingTools, len(f.t.pending), cap(f.t.pending), maxPendingTools)
	}
}
