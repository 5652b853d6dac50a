//go:build linux

package session

import (
	"encoding/json"
	"time"
)

// agent_transcript_codex.go parses the Codex CLI's session ("rollout")
// files, ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl. Each line
// is {"timestamp":"…","type":T,"payload":{…}}; the types read are:
//
//	session_meta  {"id":"…","cwd":"/project",…}: first line; the file's session
//	turn_context  {"model":"gpt-5-codex","cwd":…}
//	response_item {"type":"function_call"|"custom_tool_call"|"local_shell_call","call_id":"…"}
//	              {"type":"function_call_output"|"custom_tool_call_output","call_id":"…"}
//	event_msg     {"type":"user_message"}: a prompt; "agent_message",
//	              "task_complete": the answer; "turn_aborted": an interruption;
//	              "token_count" {"info":{"total_token_usage":{"input_tokens",
//	              "cached_input_tokens","output_tokens",…},"last_token_usage":{…},
//	              "model_context_window":N}}
//
// This is the format of public Codex CLI releases of 2025 as documented by
// tools that read it (ccusage, token-audit); unknown types are skipped.
// input_tokens includes the cached ones: procwalk reports input_tokens as
// the uncached part and cache_read_tokens as the cached one.

type codexParser struct{}

type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		CWD    string `json:"cwd"`
		Model  string `json:"model"`
		CallID string `json:"call_id"`
		Info   *struct {
			Total         codexUsage `json:"total_token_usage"`
			Last          codexUsage `json:"last_token_usage"`
			ContextWindow int64      `json:"model_context_window"`
		} `json:"info"`
	} `json:"payload"`
}

type codexUsage struct {
	Input       int64 `json:"input_tokens"`
	CachedInput int64 `json:"cached_input_tokens"`
	Output      int64 `json:"output_tokens"`
}

func (codexParser) line(b []byte, t *Transcript, now time.Time) bool {
	var l codexLine
	if err := json.Unmarshal(b, &l); err != nil || l.Type == "" {
		return false
	}
	at := l.Timestamp
	if at.IsZero() {
		at = now
	}
	t.LastActivity = at
	p := &l.Payload
	switch l.Type {
	case "session_meta":
		t.SessionID, t.CWD = p.ID, p.CWD
	case "turn_context":
		if p.Model != "" {
			t.Model = p.Model
		}
	case "response_item":
		switch p.Type {
		case "function_call", "custom_tool_call", "local_shell_call":
			t.toolUse(p.CallID, at)
			t.Last = EntryToolUse
		case "function_call_output", "custom_tool_call_output":
			t.toolResult(p.CallID)
			t.Last = EntryToolResult
		}
	case "event_msg":
		switch p.Type {
		case "user_message":
			t.clearPending()
			t.Turns++
			t.Last = EntryPrompt
		case "agent_message":
			if t.PendingTools == 0 {
				t.Last = EntryReply
			}
		case "task_complete":
			t.clearPending()
			t.Last = EntryReply
		case "turn_aborted":
			t.clearPending()
			t.Last = EntryInterrupted
		case "token_count":
			if i := p.Info; i != nil {
				t.InputTokens = i.Total.Input - i.Total.CachedInput
				t.CacheReadTokens = i.Total.CachedInput
				t.OutputTokens = i.Total.Output
				t.ContextUsedTokens = i.Last.Input
				if i.ContextWindow > 0 {
					t.ContextWindowTokens = i.ContextWindow
				}
			}
		}
	}
	return true
}
