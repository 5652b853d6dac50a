package procwalk

import "time"

// agent_fields.go is the catalogue of an agent session's numbers: JSON,
// Telegraf fields and Lua read them from this one table, so that a name, a
// unit or when a value is absent cannot drift between them. The strings
// (status, model, session id, transcript) are Session.Attrs.

// AgentFieldDesc describes one number of an agent session.
type AgentFieldDesc struct {
	Name    string // snake_case, ending in its unit
	Unit    string // tokens, percent, seconds, or "" for a count
	Integer bool
	Help    string
	value   func(a *AgentState, now time.Time) (float64, bool)
}

// Value is the field of a (as of now), false when unknown: no transcript,
// or nothing in it says.
func (d *AgentFieldDesc) Value(a *AgentState, now time.Time) (float64, bool) {
	if a == nil {
		return 0, false
	}
	return d.value(a, now)
}

// AgentFields lists the numbers of agent sessions, in the order outputs
// list them.
func AgentFields() []AgentFieldDesc {
	tr := func(v func(t *Transcript) int64) func(*AgentState, time.Time) (float64, bool) {
		return func(a *AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			return float64(v(a.Transcript)), true
		}
	}
	return []AgentFieldDesc{
		{Name: "status_seconds", Unit: "seconds", Integer: true, Help: "time in the current status",
			value: func(a *AgentState, now time.Time) (float64, bool) {
				return float64(int64(max(now.Sub(a.StatusSince), 0) / time.Second)), !a.StatusSince.IsZero()
			}},
		{Name: "context_used_tokens", Unit: "tokens", Integer: true, Help: "what the last model call read: input, cache read and cache creation tokens",
			value: func(a *AgentState, _ time.Time) (float64, bool) {
				if a.Transcript == nil || a.Transcript.ContextUsedTokens == 0 {
					return 0, false
				}
				return float64(a.Transcript.ContextUsedTokens), true
			}},
		{Name: "context_window_tokens", Unit: "tokens", Integer: true, Help: "the model's context window (configured per model family, or stated by the transcript)",
			value: func(a *AgentState, _ time.Time) (float64, bool) {
				return float64(a.ContextWindowTokens), a.ContextWindowTokens > 0
			}},
		{Name: "context_percent", Unit: "percent", Help: "context_used_tokens of context_window_tokens",
			value: func(a *AgentState, _ time.Time) (float64, bool) {
				return a.ContextPercent, a.Transcript != nil && a.Transcript.ContextUsedTokens > 0 && a.ContextWindowTokens > 0
			}},
		{Name: "input_tokens", Unit: "tokens", Integer: true, Help: "uncached input tokens of every model call, cumulative",
			value: tr(func(t *Transcript) int64 { return t.InputTokens })},
		{Name: "output_tokens", Unit: "tokens", Integer: true, Help: "output tokens, cumulative",
			value: tr(func(t *Transcript) int64 { return t.OutputTokens })},
		{Name: "cache_read_tokens", Unit: "tokens", Integer: true, Help: "input tokens read from the prompt cache, cumulative",
			value: tr(func(t *Transcript) int64 { return t.CacheReadTokens })},
		{Name: "cache_creation_tokens", Unit: "tokens", Integer: true, Help: "input tokens written to the prompt cache, cumulative",
			value: tr(func(t *Transcript) int64 { return t.CacheCreationTokens })},
		{Name: "turns", Integer: true, Help: "prompts the person sent",
			value: tr(func(t *Transcript) int64 { return int64(t.Turns) })},
		{Name: "pending_tools", Integer: true, Help: "tool uses awaiting their results",
			value: tr(func(t *Transcript) int64 { return int64(t.PendingTools) })},
		{Name: "last_activity_unix_seconds", Unit: "seconds", Integer: true, Help: "time of the transcript's last entry, seconds since 1970",
			value: func(a *AgentState, _ time.Time) (float64, bool) {
				if a.Transcript == nil || a.Transcript.LastActivity.IsZero() {
					return 0, false
				}
				return float64(a.Transcript.LastActivity.Unix()), true
			}},
		{Name: "transcript_bytes", Unit: "bytes", Integer: true, Help: "bytes of the transcript read",
			value: tr(func(t *Transcript) int64 { return t.Bytes })},
		{Name: "transcript_malformed_lines", Integer: true, Help: "lines skipped: not JSON of the format, or longer than 4 MiB",
			value: tr(func(t *Transcript) int64 { return int64(t.Malformed + t.Oversized) })},
	}
}
