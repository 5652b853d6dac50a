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
//	session_meta  {"id":"…","cwd":"/project","cli_version":"0.46.0","git":{"branch":…},
//	              "base_instructions":{"text":"…15-96 KiB…"}}: first line; the file's session
//	turn_context  {"model":"gpt-5-codex","cwd":…}
//	response_item {"type":"function_call"|"custom_tool_call"|"local_shell_call","call_id":"…"}
//	              {"type":"function_call_output"|"custom_tool_call_output","call_id":"…"}
//	event_msg     {"type":"user_message"}: a prompt; "agent_message",
//	              "task_complete": the answer; "turn_aborted": an interruption;
//	              "task_started" {"model_context_window":N};
//	              "token_count" {"info":{"total_token_usage":{"input_tokens",
//	              "cached_input_tokens","output_tokens","reasoning_output_tokens",
//	              "total_tokens"},"last_token_usage":{…},"model_context_window":N},
//	              "rate_limits":{"primary":{"used_percent":…},"secondary":{…}}}
//
// This is the format of public Codex CLI releases of 2025 and 2026 as the
// tools that read it document it (ryoppippi/ccusage apps/codex,
// simonw/claude-code-transcripts, daaain/claude-code-log); unknown types
// are skipped. input_tokens includes the cached ones: procwalk reports
// input_tokens as the uncached part and cache_read_tokens as the cached
// one. The context is Codex's own figure (codex-rs protocol.rs,
// TokenUsage::tokens_in_context_window): the last call's total_tokens, of
// model_context_window. When the context window is exceeded Codex writes
// a token_count whose usage holds total_tokens alone
// (TokenUsageInfo::fill_to_context_window): the context is full, and the
// counters are not zero.

type codexParser struct{}

type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		CWD        string `json:"cwd"`
		Model      string `json:"model"`
		CallID     string `json:"call_id"`
		CLIVersion string `json:"cli_version"`
		Git        *struct {
			Branch string `json:"branch"`
		} `json:"git"`
		ContextWindow int64      `json:"model_context_window"`
		Info          *codexInfo `json:"info"`
		RateLimits    *struct {
			Primary   *codexRateLimit `json:"primary"`
			Secondary *codexRateLimit `json:"secondary"`
		} `json:"rate_limits"`
	} `json:"payload"`
}

type codexInfo struct {
	Total         codexUsage `json:"total_token_usage"`
	Last          codexUsage `json:"last_token_usage"`
	ContextWindow int64      `json:"model_context_window"`
}

type codexUsage struct {
	Input       int64 `json:"input_tokens"`
	CachedInput int64 `json:"cached_input_tokens"`
	Output      int64 `json:"output_tokens"`
	Reasoning   int64 `json:"reasoning_output_tokens"`
	Total       int64 `json:"total_tokens"`
}

// onlyTotal reports a usage stating total_tokens alone: the one Codex
// writes when the context window was exceeded.
func (u codexUsage) onlyTotal() bool {
	return u.Total > 0 && u.Input == 0 && u.CachedInput == 0 && u.Output == 0 && u.Reasoning == 0
}

type codexRateLimit struct {
	UsedPercent float64 `json:"used_percent"`
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
		if p.CLIVersion != "" {
			t.Version = p.CLIVersion
		}
		if p.Git != nil && p.Git.Branch != "" {
			t.GitBranch = p.Git.Branch
		}
	case "turn_context":
		if p.Model != "" {
			t.Model = p.Model
		}
	case "response_item":
		switch p.Type {
		case "function_call", "custom_tool_call", "local_shell_call":
			t.toolUse(p.CallID, false, at)
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
		case "task_started":
			if p.ContextWindow > 0 {
				t.ContextWindowTokens = p.ContextWindow
			}
		case "token_count":
			codexTokenCount(p.Info, t)
			if r := p.RateLimits; r != nil && (r.Primary != nil || r.Secondary != nil) {
				t.HaveRateLimits = true
				if r.Primary != nil {
					t.RateLimitPrimaryPercent = r.Primary.UsedPercent
				}
				if r.Secondary != nil {
					t.RateLimitSecondaryPercent = r.Secondary.UsedPercent
				}
			}
		}
	}
	return true
}

// codexTokenCount folds a token_count's info (null when it carries rate
// limits alone).
func codexTokenCount(i *codexInfo, t *Transcript) {
	if i == nil {
		return
	}
	if i.ContextWindow > 0 {
		t.ContextWindowTokens = i.ContextWindow
	}
	if i.Total.onlyTotal() {
		// The window was exceeded: full, and the totals as they were.
		if t.ContextWindowTokens > 0 {
			t.ContextUsedTokens = t.ContextWindowTokens
		}
		return
	}
	// The totals are the session's: what they grew by since the last
	// count was the current model's.
	total := TokenCounts{InputTokens: i.Total.Input - i.Total.CachedInput, CacheReadTokens: i.Total.CachedInput,
		OutputTokens: i.Total.Output, ReasoningTokens: i.Total.Reasoning}
	delta := total
	delta.add(t.Tokens(), -1)
	t.ByModel = addModelTokens(t.ByModel, t.Model, delta, 1)
	t.InputTokens, t.CacheReadTokens, t.OutputTokens, t.ReasoningTokens = total.InputTokens, total.CacheReadTokens, total.OutputTokens, total.ReasoningTokens
	t.HaveReasoning = true
	switch {
	case i.Last.Total > 0:
		t.ContextUsedTokens = i.Last.Total
	case i.Last.Input > 0 || i.Last.Output > 0:
		t.ContextUsedTokens = i.Last.Input + i.Last.Output // versions without total_tokens
	}
}
