//go:build linux

package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// agent_transcript_claude.go parses Claude Code's transcript lines, as
// Claude Code 2.0 and 2.1 write them:
//
//	{"type":"user","isSidechain":false,"sessionId":"…","timestamp":"2025-…Z",
//	 "version":"2.1.39","gitBranch":"main","permissionMode":"default",
//	 "message":{"role":"user","content":"prompt" | [{"type":"tool_result","tool_use_id":"toolu_1",…}]}}
//	{"type":"assistant","sessionId":"…","timestamp":"…","message":{"id":"msg_1",
//	 "model":"claude-…","stop_reason":"tool_use"|"end_turn"|null,
//	 "content":[{"type":"text"|"thinking"|"tool_use","id":"toolu_1","name":"Bash",…}],
//	 "usage":{"input_tokens":…,"output_tokens":…,"cache_read_input_tokens":…,"cache_creation_input_tokens":…,
//	  "cache_creation":{"ephemeral_5m_input_tokens":…,"ephemeral_1h_input_tokens":…},
//	  "server_tool_use":{"web_search_requests":…,"web_fetch_requests":…}}}}
//
// and lines that are not the conversation:
//
//	{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":167094,"postTokens":…}}
//	  then {"type":"user","isCompactSummary":true,…}: /compact, or the automatic one;
//	{"type":"system","subtype":"local_command","content":"<command-name>/model</command-name>…"}
//	  (older versions: user lines "<command-name>…", "<local-command-stdout>…");
//	user lines "<bash-input>…", "<bash-stdout>…": bash mode (!);
//	{"type":"assistant","isApiErrorMessage":true,"error":"rate_limit","message":{"model":"<synthetic>",…}}:
//	  a model call that failed for good, with zero usage;
//	{"type":"ai-title","aiTitle":…}, {"type":"custom-title","customTitle":…},
//	{"type":"summary","summary":…}, {"type":"permission-mode","permissionMode":…},
//	"progress", "file-history-snapshot", "queue-operation" …: they date activity.
//
// One API message may take several lines, one per content block, each
// with the message's id and usage; older versions interleave two ids.
// Lines of subagents (isSidechain: older versions wrote them into the main
// file) count for tokens but not for the context or the turn. "progress"
// lines repeat a subagent's messages (agent_progress): never counted.
// The shapes are those of real transcripts in public repositories'
// fixtures (marot/spotter, Claude Code 2.1.38/2.1.39; daaain/claude-code-log).

type claudeParser struct{}

type claudeLine struct {
	Type              string           `json:"type"`
	Subtype           string           `json:"subtype"`
	SessionID         string           `json:"sessionId"`
	Timestamp         time.Time        `json:"timestamp"`
	IsSidechain       bool             `json:"isSidechain"`
	IsMeta            bool             `json:"isMeta"`
	IsCompactSummary  bool             `json:"isCompactSummary"`
	IsAPIErrorMessage bool             `json:"isApiErrorMessage"`
	Error             claudeErrorField `json:"error"`
	Version           string           `json:"version"`
	GitBranch         string           `json:"gitBranch"`
	PermissionMode    string           `json:"permissionMode"`
	AITitle           string           `json:"aiTitle"`
	CustomTitle       string           `json:"customTitle"`
	Summary           string           `json:"summary"`
	CompactMetadata   *struct {
		PostTokens *int64 `json:"postTokens"`
	} `json:"compactMetadata"`
	Message *struct {
		ID         string             `json:"id"`
		Model      string             `json:"model"`
		StopReason string             `json:"stop_reason"`
		Content    claudeContentField `json:"content"`
		Usage      *claudeUsage       `json:"usage"`
	} `json:"message"`
}

type claudeUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	Split         *struct {
		FiveMinutes int64 `json:"ephemeral_5m_input_tokens"`
		OneHour     int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	Server *struct {
		WebSearch int64 `json:"web_search_requests"`
		WebFetch  int64 `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
}

func (u *claudeUsage) counts() TokenCounts {
	c := TokenCounts{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheCreationTokens: u.CacheCreation}
	if u.Split != nil {
		c.CacheCreation5mTokens, c.CacheCreation1hTokens = u.Split.FiveMinutes, u.Split.OneHour
	}
	if u.Server != nil {
		c.WebSearchRequests, c.WebFetchRequests = u.Server.WebSearch, u.Server.WebFetch
	}
	return c
}

// claudeErrorField is an API error line's error: a kind ("rate_limit"),
// or in some versions an object with a message.
type claudeErrorField string

func (e *claudeErrorField) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		*e = claudeErrorField(s)
		return err
	}
	var o struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil {
		*e = claudeErrorField(o.Type)
		if o.Type == "" {
			*e = claudeErrorField(o.Message)
		}
	}
	return nil
}

type claudeBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
	Text      string `json:"text"`
}

// claudeInterrupted starts the text Claude Code writes as the person's
// message when they interrupt a turn (Esc).
const claudeInterrupted = "[Request interrupted by user"

// claudeSubagentTools are the tools whose use starts a subagent, which
// writes its own transcript (agent_discover.go) while the use is pending.
func claudeSubagentTool(name string) bool { return name == "Task" || name == "Agent" }

// claudeLocalText reports whether a user line's text is Claude Code's
// record of something done locally, not a prompt to the model: bash mode
// (!), a slash command and its output, the caveat before them.
func claudeLocalText(text string) bool {
	text = strings.TrimLeft(text, " \n")
	for _, tag := range []string{"<bash-input>", "<bash-stdout>", "<bash-stderr>", "<command-name>", "<command-message>",
		"<command-args>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>"} {
		if strings.HasPrefix(text, tag) {
			return true
		}
	}
	return false
}

// claudePromptCommand reports a typed slash command that expands to a
// prompt for the model: Claude Code writes
// "<command-message>NAME is running…</command-message><command-name>/NAME…"
// for those (custom commands, skills), and "<command-message>NAME</…" for
// the local ones (/model, /cost).
func claudePromptCommand(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \n"), "<command-message>") && strings.Contains(text, " is running…</command-message>")
}

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
	claudeMeta(&l, t)
	if l.Type != "user" && l.Type != "assistant" {
		switch l.Type {
		case "summary", "ai-title", "custom-title", "agent-name", "permission-mode", "last-prompt", "mode":
			// Written on resume or beside the conversation, not as work.
		default:
			t.LastActivity = at
		}
		if l.Type == "system" && l.Subtype == "compact_boundary" && !l.IsSidechain {
			// The context now holds what the compaction left; before the
			// next model call says, that is known only when the line
			// states it (postTokens, in later versions).
			t.Compactions++
			t.ContextUsedTokens = 0
			if m := l.CompactMetadata; m != nil && m.PostTokens != nil {
				t.ContextUsedTokens = *m.PostTokens
			}
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
		if l.IsAPIErrorMessage {
			// Its usage is zero: the context is the last real call's.
			if l.IsSidechain {
				return true
			}
			t.APIErrors++
			t.LastError, t.LastErrorAt = string(l.Error), at
			if t.LastError == "" {
				t.LastError = "api_error"
			}
			t.clearPending()
			t.Last = EntryAPIError
			return true
		}
		if m.Usage != nil {
			if m.Usage.Server != nil {
				t.HaveServerTools = true
			}
			newest := t.addUsage(m.ID, m.Model, m.Usage.counts())
			if !l.IsSidechain && newest {
				t.ContextUsedTokens = m.Usage.Input + m.Usage.CacheRead + m.Usage.CacheCreation
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
				t.toolUse(bl.ID, claudeSubagentTool(bl.Name), at)
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
	if l.IsSidechain || l.IsMeta || l.IsCompactSummary {
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
	case claudePromptCommand(text):
		// A custom slash command or skill the person typed: its expanded
		// prompt follows (counted as the turn when not a meta line), and
		// the model answers.
		t.clearPending()
		t.Last = EntryPrompt
	case claudeLocalText(text):
		// Done locally: no turn for the model.
	case text != "":
		t.clearPending()
		t.Turns++
		t.Last = EntryPrompt
	}
	return true
}

// claudeMeta takes what a line says of the session besides the
// conversation: its title, branch, version and permission mode.
func claudeMeta(l *claudeLine, t *Transcript) {
	switch {
	case l.CustomTitle != "":
		t.Title, t.titleRank = l.CustomTitle, 3
	case l.AITitle != "" && t.titleRank <= 2:
		t.Title, t.titleRank = l.AITitle, 2
	case l.Type == "summary" && l.Summary != "" && t.titleRank <= 1:
		t.Title, t.titleRank = l.Summary, 1
	}
	if l.IsSidechain {
		return
	}
	if l.GitBranch != "" {
		t.GitBranch = l.GitBranch
	}
	if l.Version != "" {
		t.Version = l.Version
	}
	if l.PermissionMode != "" {
		t.PermissionMode = l.PermissionMode
	}
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
// with none, it is a (long, pasted) prompt, unless it is a compaction's
// summary (the key follows the message) or bash mode's or a local
// command's output.
func claudeBigUserLine(b []byte, t *Transcript, now time.Time) bool {
	if b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	head, tail := b[:1024], b[len(b)-1024:]
	if id := jsonKeyString(b, `"sessionId":"`, false); id != "" {
		t.SessionID = id
	}
	at := now
	if ts, err := time.Parse(time.RFC3339Nano, jsonKeyString(b, `"timestamp":"`, true)); err == nil {
		at = ts
	}
	t.LastActivity = at
	if bytes.Contains(head, []byte(`"isSidechain":true`)) || bytes.Contains(head, []byte(`"isMeta":true`)) ||
		bytes.Contains(head, []byte(`"isCompactSummary":true`)) || bytes.Contains(tail, []byte(`"isCompactSummary":true`)) {
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
	if text := firstText(head); text != "" && claudeLocalText(text) {
		return true
	}
	t.clearPending()
	t.Turns++
	t.Last = EntryPrompt
	return true
}

// firstText is the start of a long user line's text: the string after its
// message's first "content":" or "text":" key, undecoded ("\n" stays
// escaped, which claudeLocalText's tags do not hold).
func firstText(head []byte) string {
	i := bytes.Index(head, []byte(`"message":`))
	if i < 0 {
		return ""
	}
	rest := head[i:]
	for _, key := range []string{`"content":"`, `"text":"`} {
		if j := bytes.Index(rest, []byte(key)); j >= 0 {
			return strings.ReplaceAll(string(rest[j+len(key):]), `\n`, "\n")
		}
	}
	return ""
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
