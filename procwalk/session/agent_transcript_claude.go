//go:build linux

package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// agent_transcript_claude.go parses Claude Code's transcript lines:
//
//	{"type":"user","isSidechain":false,"sessionId":"…","timestamp":"2025-…Z",
//	 "message":{"role":"user","content":"prompt" | [{"type":"tool_result","tool_use_id":"toolu_1",…}]}}
//	{"type":"assistant","sessionId":"…","timestamp":"…","message":{"id":"msg_1",
//	 "model":"claude-…","stop_reason":"tool_use"|"end_turn"|null,
//	 "content":[{"type":"text"|"thinking"|"tool_use","id":"toolu_1",…}],
//	 "usage":{"input_tokens":…,"output_tokens":…,"cache_read_input_tokens":…,"cache_creation_input_tokens":…}}}
//
// and others ("summary", "system", "file-history-snapshot" …) that only
// date activity. One API message may take several lines, one per content
// block, each repeating the message's id and usage. Lines of sub-agents
// (isSidechain) count for tokens but not for the context or the turn.

type claudeParser struct{}

type claudeLine struct {
	Type        string    `json:"type"`
	SessionID   string    `json:"sessionId"`
	Timestamp   time.Time `json:"timestamp"`
	IsSidechain bool      `json:"isSidechain"`
	IsMeta      bool      `json:"isMeta"`
	Message     *struct {
		ID         string             `json:"id"`
		Model      string             `json:"model"`
		StopReason string             `json:"stop_reason"`
		Content    claudeContentField `json:"content"`
		Usage      *struct {
			Input         int64 `json:"input_tokens"`
			Output        int64 `json:"output_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

type claudeBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
	Text      string `json:"text"`
}

// claudeInterrupted starts the text Claude Code writes as the person's
// message when they interrupt a turn (Esc).
const claudeInterrupted = "[Request interrupted by user"

func (claudeParser) line(b []byte, t *Transcript, now time.Time) bool {
	if len(b) > claudeBigLine && bytes.HasPrefix(b[bytes.Index(b, []byte(`"type":"`))+1:], []byte(`type":"user"`)) {
		return claudeBigUserLine(b, t, now) // the first "type" key is the line's
	}
	var l claudeLine
	if err := json.Unmarshal(b, &l); err != nil || l.Type == "" {
		return false
	}
	at := l.Timestamp
	if at.IsZero() {
		at = now
	}
	if l.SessionID != "" {
		t.SessionID = l.SessionID
	}
	if l.Type != "user" && l.Type != "assistant" {
		if l.Type != "summary" { // summaries are written on resume, not as work
			t.LastActivity = at
		}
		return true
	}
	t.LastActivity = at
	m := l.Message
	if m == nil {
		return false
	}
	blocks, text := m.Content.blocks, m.Content.text
	if l.Type == "assistant" {
		if m.Usage != nil {
			u := usage{m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheCreation}
			t.addUsage(m.ID, u)
			if !l.IsSidechain {
				t.ContextUsedTokens = u.input + u.cacheRead + u.cacheCreation
			}
		}
		if l.IsSidechain {
			return true
		}
		if m.Model != "" && m.Model != "<synthetic>" {
			t.Model = m.Model
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "tool_use":
				t.toolUse(bl.ID, at)
				t.Last = EntryToolUse
			case "text":
				if t.PendingTools == 0 {
					t.Last = EntryReply
				}
			}
		}
		if m.StopReason == "end_turn" || m.StopReason == "stop_sequence" {
			t.clearPending()
			t.Last = EntryReply
		}
		return true
	}
	if l.IsSidechain || l.IsMeta {
		return true
	}
	results := 0
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_result":
			t.toolResult(bl.ToolUseID)
			results++
		case "text":
			text += bl.Text
		}
	}
	switch {
	case strings.HasPrefix(text, claudeInterrupted):
		t.clearPending()
		t.Last = EntryInterrupted
	case results > 0:
		t.Last = EntryToolResult
	case text != "":
		t.clearPending()
		t.Turns++
		t.Last = EntryPrompt
	}
	return true
}

// claudeContentField is a message's content: a string, or an array of
// blocks. Decoded in place: a json.RawMessage would copy every tool result.
type claudeContentField struct {
	text   string
	blocks []claudeBlock
}

func (c *claudeContentField) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil
	case raw[0] == '"':
		return json.Unmarshal(raw, &c.text)
	}
	return json.Unmarshal(raw, &c.blocks)
}

// claudeBigLine is the length above which a user line is scanned for its
// keys instead of decoded: such lines are tool results holding file
// contents or command output, most of a transcript's bytes, of which only
// the ids matter. Decoding them made a first read of 1 GB of transcripts
// take half a minute.
const claudeBigLine = 8 << 10

// claudeBigUserLine folds a long user line, found by its keys: a quote
// inside a JSON string is escaped, so `"key":"` matches keys alone. It
// names its session and time like any line, the tool uses it answers, or,
// with none, it is a (long, pasted) prompt.
func claudeBigUserLine(b []byte, t *Transcript, now time.Time) bool {
	if b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	head := b[:1024]
	if id := jsonKeyString(b, `"sessionId":"`, false); id != "" {
		t.SessionID = id
	}
	at := now
	if ts, err := time.Parse(time.RFC3339Nano, jsonKeyString(b, `"timestamp":"`, true)); err == nil {
		at = ts
	}
	t.LastActivity = at
	if bytes.Contains(head, []byte(`"isSidechain":true`)) || bytes.Contains(head, []byte(`"isMeta":true`)) {
		return true
	}
	results := 0
	for rest := b; ; results++ {
		i := bytes.Index(rest, []byte(`"tool_use_id":"`))
		if i < 0 {
			break
		}
		rest = rest[i+len(`"tool_use_id":"`):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 {
			return false
		}
		t.toolResult(string(rest[:end]))
	}
	if results > 0 {
		t.Last = EntryToolResult
		return true
	}
	t.clearPending()
	t.Turns++
	t.Last = EntryPrompt
	return true
}

// jsonKeyString is the string value after key ("name":"), the first or the
// last occurrence; "" when absent.
func jsonKeyString(b []byte, key string, last bool) string {
	var i int
	if last {
		i = bytes.LastIndex(b, []byte(key))
	} else {
		i = bytes.Index(b, []byte(key))
	}
	if i < 0 {
		return ""
	}
	v := b[i+len(key):]
	end := bytes.IndexByte(v, '"')
	if end < 0 || end > 256 {
		return ""
	}
	return string(v[:end])
}
