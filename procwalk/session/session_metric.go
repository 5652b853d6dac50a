//go:build linux

package session

import (
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// session_metric.go is the catalogue of session metrics: each sum, count,
// rate and limit a Session carries, and the numbers of an agent session's
// status and transcript, once, with its name, unit, type and the rule for
// when it is absent. Telegraf's procwalk_session fields, Lua's session
// fields, and the agent objects of JSON and Lua are views of it. Where a session metric is the sum
// of a process metric it has the process metric's name (rss_bytes,
// cpu_percent ...); counters of a session are its cumulative ones, which
// never go back when a member exits.

// MetricDesc describes one metric of a session.
type MetricDesc struct {
	// Name is the metric's name in every output, snake_case, ending in
	// its unit.
	Name string
	// Aliases are short names Lua accepts too, e.g. "rss".
	Aliases []string
	Unit    string // bytes, seconds, percent, cores, bytes/s, bytes/min, tokens, usd, or "" for a count
	Type    procwalk.MetricType
	// Integer values are whole numbers; Flag values are 1 or 0, written
	// as true or false.
	Integer, Flag bool
	// Agent metrics are those of Session.Agent, absent for other
	// sessions; outputs list them in their agent objects too.
	Agent bool
	Help  string

	value func(ss *Session, read procwalk.Fields, now time.Time) (float64, bool)
}

// Value is the metric of ss, grouped from a snapshot that read the
// optional fields read at time now, and false when it is absent: not read,
// not measured yet, or not applying (a limit of a session without a
// cgroup). Absent is never 0.
func (d *MetricDesc) Value(ss *Session, read procwalk.Fields, now time.Time) (float64, bool) {
	return d.value(ss, read, now)
}

// Metrics returns the catalogue of session metrics, in the order
// outputs list them.
func Metrics() []MetricDesc {
	type v = func(ss *Session, read procwalk.Fields, now time.Time) (float64, bool)
	total := func(f func(t *Totals) float64, ok func(t *Totals) bool) v {
		return func(ss *Session, _ procwalk.Fields, _ time.Time) (float64, bool) {
			return f(&ss.Totals), ok(&ss.Totals)
		}
	}
	always := func(*Totals) bool { return true }
	smaps := func(t *Totals) bool { return t.SmapsRead > 0 }
	io := func(t *Totals) bool { return t.IORead > 0 }
	rates := func(t *Totals) bool { return t.RatesMeasured > 0 }
	cgroup := func(f func(c *CgroupUsage, t *Totals) (float64, bool)) v {
		return func(ss *Session, _ procwalk.Fields, _ time.Time) (float64, bool) {
			if c := ss.Totals.Cgroup; c != nil {
				return f(c, &ss.Totals)
			}
			return 0, false
		}
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	return append([]MetricDesc{
		{Name: "procs", Type: procwalk.Gauge, Integer: true, Help: "members",
			value: total(func(t *Totals) float64 { return float64(t.Procs) }, always)},
		{Name: "threads", Type: procwalk.Gauge, Integer: true, Help: "sum of the members' threads",
			value: total(func(t *Totals) float64 { return float64(t.Threads) }, always)},
		{Name: "zombies", Type: procwalk.Gauge, Integer: true, Help: "members in state Z",
			value: total(func(t *Totals) float64 { return float64(t.Zombies) }, always)},
		{Name: "partial", Type: procwalk.Gauge, Flag: true, Help: "members may be missing from the sums: grouping could not check every process",
			value: func(ss *Session, _ procwalk.Fields, _ time.Time) (float64, bool) { return flag(ss.Partial), true }},
		{Name: "rss_bytes", Aliases: []string{"rss"}, Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "sum of RSS: over-counts pages the members share",
			value: total(func(t *Totals) float64 { return float64(t.RSSBytes) }, always)},
		{Name: "swap_bytes", Aliases: []string{"swap"}, Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "sum of VmSwap (status) or Swap (smaps_rollup)",
			value: func(ss *Session, read procwalk.Fields, _ time.Time) (float64, bool) {
				return float64(ss.Totals.SwapBytes), read&(procwalk.FieldStatus|procwalk.FieldSmaps) != 0
			}},
		{Name: "pss_bytes", Aliases: []string{"pss"}, Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "sum of PSS: shared pages split between their users",
			value: total(func(t *Totals) float64 { return float64(t.PSSBytes) }, smaps)},
		{Name: "uss_bytes", Aliases: []string{"uss"}, Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "sum of USS",
			value: total(func(t *Totals) float64 { return float64(t.USSBytes) }, smaps)},
		{Name: "smaps_read_procs", Type: procwalk.Gauge, Integer: true, Help: "members whose smaps_rollup was read: fewer than procs means partial PSS and USS",
			value: total(func(t *Totals) float64 { return float64(t.SmapsRead) }, smaps)},
		{Name: "cpu_time_seconds", Aliases: []string{"cumulative_cpu_time"}, Unit: "seconds", Type: procwalk.Counter,
			Help:  "CPU the members used while they were members; never goes back when a member exits",
			value: total(func(t *Totals) float64 { return t.CumulativeCPUSeconds }, always)},
		{Name: "read_bytes", Aliases: []string{"cumulative_read_bytes"}, Unit: "bytes", Type: procwalk.Counter, Integer: true,
			Help:  "storage bytes the members read while members",
			value: total(func(t *Totals) float64 { return float64(t.CumulativeReadBytes) }, io)},
		{Name: "write_bytes", Aliases: []string{"cumulative_write_bytes"}, Unit: "bytes", Type: procwalk.Counter, Integer: true,
			Help:  "storage bytes the members wrote while members",
			value: total(func(t *Totals) float64 { return float64(t.CumulativeWriteBytes) }, io)},
		{Name: "io_read_procs", Type: procwalk.Gauge, Integer: true, Help: "members whose io file was readable",
			value: total(func(t *Totals) float64 { return float64(t.IORead) }, io)},
		{Name: "cpu_percent", Aliases: []string{"cpu"}, Unit: "percent", Type: procwalk.Rate, Help: "the members' CPU rate, percent of one core",
			value: total(func(t *Totals) float64 { return t.CPUPercent }, rates)},
		{Name: "rss_growth_bytes_per_minute", Aliases: []string{"growth"}, Unit: "bytes/min", Type: procwalk.Rate, Help: "sum of the members' RSS growth",
			value: total(func(t *Totals) float64 { return t.RSSGrowthBytesPerMinute }, rates)},
		{Name: "pss_growth_bytes_per_minute", Aliases: []string{"pss_growth"}, Unit: "bytes/min", Type: procwalk.Rate, Help: "sum of the members' PSS growth",
			value: total(func(t *Totals) float64 { return t.PSSGrowthBytesPerMinute }, func(t *Totals) bool { return rates(t) && smaps(t) })},
		{Name: "read_bytes_per_second", Aliases: []string{"read_rate"}, Unit: "bytes/s", Type: procwalk.Rate, Help: "the members' storage reads",
			value: total(func(t *Totals) float64 { return t.ReadBytesPerSecond }, func(t *Totals) bool { return rates(t) && io(t) })},
		{Name: "write_bytes_per_second", Aliases: []string{"write_rate"}, Unit: "bytes/s", Type: procwalk.Rate, Help: "the members' storage writes",
			value: total(func(t *Totals) float64 { return t.WriteBytesPerSecond }, func(t *Totals) bool { return rates(t) && io(t) })},
		{Name: "oldest_start_unix_seconds", Unit: "seconds", Type: procwalk.Gauge, Integer: true, Help: "start of the oldest member, whole seconds since 1970",
			value: total(func(t *Totals) float64 { return float64(t.OldestStart.Unix()) }, func(t *Totals) bool { return !t.OldestStart.IsZero() })},
		{Name: "age_seconds", Aliases: []string{"age"}, Unit: "seconds", Type: procwalk.Gauge, Help: "time since the oldest member started",
			value: func(ss *Session, _ procwalk.Fields, now time.Time) (float64, bool) {
				return now.Sub(ss.Totals.OldestStart).Seconds(), !ss.Totals.OldestStart.IsZero()
			}},
		{Name: "memory_usage_bytes", Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "the session's cgroup memory usage",
			value: cgroup(func(c *CgroupUsage, _ *Totals) (float64, bool) {
				return float64(c.MemoryUsageBytes), c.HaveMemoryUsage
			})},
		{Name: "memory_limit_bytes", Unit: "bytes", Type: procwalk.Gauge, Integer: true, Help: "the tightest memory limit of the cgroup and its ancestors",
			value: cgroup(func(c *CgroupUsage, _ *Totals) (float64, bool) {
				return float64(c.MemoryLimitBytes), c.MemoryLimitBytes > 0
			})},
		{Name: "memory_usage_percent", Unit: "percent", Type: procwalk.Gauge, Help: "memory usage over the limit",
			value: cgroup(func(c *CgroupUsage, _ *Totals) (float64, bool) {
				return c.MemoryPercent, c.MemoryLimitBytes > 0 && c.HaveMemoryUsage
			})},
		{Name: "cpu_quota_cores", Unit: "cores", Type: procwalk.Gauge, Help: "the tightest CPU quota, in CPUs",
			value: cgroup(func(c *CgroupUsage, _ *Totals) (float64, bool) { return c.CPUQuotaCores, c.CPUQuotaCores > 0 })},
		{Name: "cpu_quota_percent", Unit: "percent", Type: procwalk.Rate, Help: "the members' CPU rate over the quota",
			value: cgroup(func(c *CgroupUsage, t *Totals) (float64, bool) {
				return c.CPUQuotaPercent, c.CPUQuotaCores > 0 && t.RatesMeasured > 0
			})},
		{Name: "danger", Type: procwalk.Gauge, Flag: true, Help: "memory or CPU at or above the danger threshold of its limit",
			value: cgroup(func(c *CgroupUsage, _ *Totals) (float64, bool) { return flag(c.Danger), true })},
	}, agentMetrics()...)
}

// agentMetrics are the numbers of an agent session (agent_status.go).
func agentMetrics() []MetricDesc {
	type v = func(ss *Session, read procwalk.Fields, now time.Time) (float64, bool)
	agent := func(f func(a *AgentState, now time.Time) (float64, bool)) v {
		return func(ss *Session, _ procwalk.Fields, now time.Time) (float64, bool) {
			if ss.Agent == nil {
				return 0, false
			}
			return f(ss.Agent, now)
		}
	}
	// tr is a figure of the transcript, absent without one.
	tr := func(f func(t *Transcript) int64) v {
		return agent(func(a *AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			return float64(f(a.Transcript)), true
		})
	}
	// tok is a cumulative count of the agent's, its subagents' included,
	// absent without a transcript.
	tok := func(f func(c *TokenCounts) int64) v {
		return agent(func(a *AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			c := a.Tokens()
			return float64(f(&c)), true
		})
	}
	// sub is a count of its subagents', absent without a transcript.
	sub := func(f func(a *AgentState) int64) v {
		return agent(func(a *AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			return float64(f(a)), true
		})
	}
	// when is a figure of the transcript present when ok says so.
	when := func(ok func(t *Transcript) bool, f func(a *AgentState) float64) v {
		return agent(func(a *AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil || !ok(a.Transcript) {
				return 0, false
			}
			return f(a), true
		})
	}
	contextKnown := func(a *AgentState) bool { return a.Transcript != nil && a.Transcript.ContextUsedTokens > 0 }
	return []MetricDesc{
		{Name: "status_seconds", Unit: "seconds", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "time in the current status",
			value: agent(func(a *AgentState, now time.Time) (float64, bool) {
				return float64(int64(max(now.Sub(a.StatusSince), 0) / time.Second)), !a.StatusSince.IsZero()
			})},
		{Name: "context_used_tokens", Unit: "tokens", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "what the last model call read: input, cache read and cache creation tokens",
			value: agent(func(a *AgentState, _ time.Time) (float64, bool) {
				if !contextKnown(a) {
					return 0, false
				}
				return float64(a.Transcript.ContextUsedTokens), true
			})},
		{Name: "context_window_tokens", Unit: "tokens", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "the model's context window (configured per model family, or stated by the transcript)",
			value: agent(func(a *AgentState, _ time.Time) (float64, bool) {
				return float64(a.ContextWindowTokens), a.ContextWindowTokens > 0
			})},
		{Name: "context_percent", Unit: "percent", Type: procwalk.Gauge, Agent: true, Help: "context_used_tokens of context_window_tokens",
			value: agent(func(a *AgentState, _ time.Time) (float64, bool) {
				return a.ContextPercent, contextKnown(a) && a.ContextWindowTokens > 0
			})},
		{Name: "input_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "uncached input tokens of every model call, its subagents' included, cumulative (of the part read: transcript_skipped_bytes)",
			value: tok(func(c *TokenCounts) int64 { return c.InputTokens })},
		{Name: "output_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "output tokens, its subagents' included, cumulative (of the part read)",
			value: tok(func(c *TokenCounts) int64 { return c.OutputTokens })},
		{Name: "cache_read_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "input tokens read from the prompt cache, its subagents' included, cumulative (of the part read)",
			value: tok(func(c *TokenCounts) int64 { return c.CacheReadTokens })},
		{Name: "cache_creation_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "input tokens written to the prompt cache, its subagents' included, cumulative (of the part read)",
			value: tok(func(c *TokenCounts) int64 { return c.CacheCreationTokens })},
		{Name: "cache_creation_5m_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of cache_creation_tokens, those cached for 5 minutes (the default, and those the usage does not split)",
			value: tok(func(c *TokenCounts) int64 { return c.CacheCreationTokens - c.CacheCreation1hTokens })},
		{Name: "cache_creation_1h_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of cache_creation_tokens, those cached for an hour (priced higher)",
			value: tok(func(c *TokenCounts) int64 { return c.CacheCreation1hTokens })},
		{Name: "reasoning_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of output_tokens, those spent reasoning, where the transcript says (Codex; Claude Code does not split thinking from output)",
			value: when(func(t *Transcript) bool { return t.HaveReasoning }, func(a *AgentState) float64 { return float64(a.Tokens().ReasoningTokens) })},
		{Name: "web_search_requests", Type: procwalk.Counter, Integer: true, Agent: true, Help: "web searches the model ran on the server (usage.server_tool_use)",
			value: when(func(t *Transcript) bool { return t.HaveServerTools }, func(a *AgentState) float64 { return float64(a.Tokens().WebSearchRequests) })},
		{Name: "web_fetch_requests", Type: procwalk.Counter, Integer: true, Agent: true, Help: "web fetches the model ran on the server (usage.server_tool_use)",
			value: when(func(t *Transcript) bool { return t.HaveServerTools }, func(a *AgentState) float64 { return float64(a.Tokens().WebFetchRequests) })},
		{Name: "cost_usd", Unit: "usd", Type: procwalk.Counter, Agent: true, Help: "what its tokens, its subagents' included, cost by the price table of agent_prices (--agent-prices); absent without one, or without a price for a model it ran",
			value: agent(func(a *AgentState, _ time.Time) (float64, bool) { return a.CostUSD, a.HaveCost })},
		{Name: "subagent_input_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of input_tokens, its subagents' (their own transcripts)",
			value: sub(func(a *AgentState) int64 { return a.SubagentTokens.InputTokens })},
		{Name: "subagent_output_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of output_tokens, its subagents'",
			value: sub(func(a *AgentState) int64 { return a.SubagentTokens.OutputTokens })},
		{Name: "subagent_cache_read_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of cache_read_tokens, its subagents'",
			value: sub(func(a *AgentState) int64 { return a.SubagentTokens.CacheReadTokens })},
		{Name: "subagent_cache_creation_tokens", Unit: "tokens", Type: procwalk.Counter, Integer: true, Agent: true, Help: "of cache_creation_tokens, its subagents'",
			value: sub(func(a *AgentState) int64 { return a.SubagentTokens.CacheCreationTokens })},
		{Name: "subagents", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "subagent transcripts of its session (Claude Code's Task subagents)",
			value: sub(func(a *AgentState) int64 { return int64(a.Subagents) })},
		{Name: "subagents_working", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "subagents whose transcript grew within agent_active_within",
			value: sub(func(a *AgentState) int64 { return int64(a.SubagentsWorking) })},
		{Name: "turns", Type: procwalk.Counter, Integer: true, Agent: true, Help: "prompts the person sent (in the part read)",
			value: tr(func(t *Transcript) int64 { return int64(t.Turns) })},
		{Name: "pending_tools", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "tool uses awaiting their results",
			value: tr(func(t *Transcript) int64 { return int64(t.PendingTools) })},
		{Name: "compactions", Type: procwalk.Counter, Integer: true, Agent: true, Help: "compactions of the context: /compact or the automatic one (in the part read)",
			value: tr(func(t *Transcript) int64 { return int64(t.Compactions) })},
		{Name: "api_errors", Type: procwalk.Counter, Integer: true, Agent: true, Help: "model calls that failed for good: rate limit, overload, authentication (in the part read; last_error names the last)",
			value: tr(func(t *Transcript) int64 { return int64(t.APIErrors) })},
		{Name: "rate_limit_primary_percent", Unit: "percent", Type: procwalk.Gauge, Agent: true, Help: "use of the agent's primary rate limit, where the transcript says (Codex: the 5-hour window)",
			value: when(func(t *Transcript) bool { return t.HaveRateLimits }, func(a *AgentState) float64 { return a.Transcript.RateLimitPrimaryPercent })},
		{Name: "rate_limit_secondary_percent", Unit: "percent", Type: procwalk.Gauge, Agent: true, Help: "use of the agent's secondary rate limit, where the transcript says (Codex: the weekly window)",
			value: when(func(t *Transcript) bool { return t.HaveRateLimits }, func(a *AgentState) float64 { return a.Transcript.RateLimitSecondaryPercent })},
		{Name: "last_activity_unix_seconds", Unit: "seconds", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "time of the transcript's last entry, seconds since 1970",
			value: agent(func(a *AgentState, _ time.Time) (float64, bool) {
				if a.Transcript == nil || a.Transcript.LastActivity.IsZero() {
					return 0, false
				}
				return float64(a.Transcript.LastActivity.Unix()), true
			})},
		{Name: "transcript_bytes", Unit: "bytes", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "how far the transcript was read: its size at the last read",
			value: tr(func(t *Transcript) int64 { return t.Bytes })},
		{Name: "transcript_skipped_bytes", Unit: "bytes", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "bytes of the transcript never read (its first read was bounded): above 0, the cumulative counts are of the part read",
			value: tr(func(t *Transcript) int64 { return t.SkippedBytes })},
		{Name: "transcript_malformed_lines", Type: procwalk.Gauge, Integer: true, Agent: true, Help: "lines skipped: not JSON of the format, or longer than 4 MiB",
			value: tr(func(t *Transcript) int64 { return int64(t.Malformed + t.Oversized) })},
	}
}
