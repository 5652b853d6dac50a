//go:build linux

package metric

import (
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// catalogue.go is the metric catalogue: every number procwalk measures of
// a process or a session, once. Where a metric has a value for both (RSS,
// CPU time, age ...) it means the same for both: a session's value is the
// sum over its members (a gauge, a rate) or the session's own counter,
// which never goes back when a member exits.

// All returns the catalogue, in the order outputs list metrics.
func All() []Desc {
	all := make([]Desc, 0, catalogueSize)
	for _, family := range families() {
		all = append(all, family()...)
	}
	return all
}

// families are the parts of the catalogue, in the order outputs list
// metrics: Lookup builds them one by one and stops at the one it looks for
// (a one-shot command looks up its columns one by one, before any scan).
func families() [6]func() []Desc {
	return [...]func() []Desc{processIDs, memory, cpuAndIO, times, cgroupMetrics, agentMetrics}
}

// catalogueSize is room for every metric of All in one allocation
// (TestCatalogueSize keeps it large enough).
const catalogueSize = 80

// Helpers that build value functions.

func read(p *procwalk.Process, f procwalk.Fields) bool { return p.Read&f != 0 }

// always is a process value that is always there.
func always(v func(p *procwalk.Process) float64) ProcessValue {
	return func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) { return v(p), true }
}

// ifRead is a process value there when f was read.
func ifRead(f procwalk.Fields, v func(p *procwalk.Process) float64) ProcessValue {
	return func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) { return v(p), read(p, f) }
}

// rate is a process rate, there once measured and when ok.
func rate(ok func(r *procwalk.Rates) bool, v func(r *procwalk.Rates) float64) ProcessValue {
	return func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
		r := &p.Rates
		return v(r), r.Measured && ok(r)
	}
}

func measured(*procwalk.Rates) bool      { return true }
func haveIO(r *procwalk.Rates) bool      { return r.HaveIO }
func haveSmaps(r *procwalk.Rates) bool   { return r.HaveSmaps }
func allTotals(*session.Totals) bool     { return true }
func smapsTotals(t *session.Totals) bool { return t.SmapsRead > 0 }
func ioTotals(t *session.Totals) bool    { return t.IORead > 0 }
func rateTotals(t *session.Totals) bool  { return t.RatesMeasured > 0 }

// total is a session value from its totals, there when ok.
func total(v func(t *session.Totals) float64, ok func(t *session.Totals) bool) SessionValue {
	return func(ss *session.Session, _ procwalk.Fields, _ time.Time) (float64, bool) {
		return v(&ss.Totals), ok(&ss.Totals)
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// processIDs are a process's ids and the counts of a session's members.
func processIDs() []Desc {
	id := func(name, label, help string, v func(p *procwalk.Process) float64) Desc {
		return Desc{Name: name, Label: label, Kind: Gauge, Integer: true, ID: true, Help: help, process: always(v)}
	}
	uid := func(name, label string, aliases []string, needs procwalk.Fields, help string, v func(p *procwalk.Process) int) Desc {
		return Desc{Name: name, Aliases: aliases, Label: label, Kind: Gauge, Integer: true, ID: true, Needs: needs, Help: help,
			process: ifRead(needs, func(p *procwalk.Process) float64 { return float64(v(p)) })}
	}
	return []Desc{
		id("pid", "PID", "process id", func(p *procwalk.Process) float64 { return float64(p.ID.PID) }),
		id("ppid", "PPID", "parent process id", func(p *procwalk.Process) float64 { return float64(p.PPID) }),
		id("pgrp", "PGRP", "process group id", func(p *procwalk.Process) float64 { return float64(p.PGRP) }),
		id("sid", "SID", "session id (setsid)", func(p *procwalk.Process) float64 { return float64(p.SID) }),
		{Name: "tty_nr", Label: "TTY", Kind: Gauge, Integer: true, ID: true,
			Help:    "controlling terminal's device number, 0 for none",
			process: always(func(p *procwalk.Process) float64 { return float64(p.TTY) })},
		uid("uid", "UID", []string{"euid"}, procwalk.FieldOwner, "effective user id, as ps(1) shows (user sessions group by it)",
			func(p *procwalk.Process) int { return p.EffectiveUID }),
		uid("ruid", "RUID", nil, procwalk.FieldStatus, "real user id", func(p *procwalk.Process) int { return p.RealUID }),
		{Name: "procs", Label: "PROCS", Kind: Gauge, Integer: true, Help: "member processes",
			session: total(func(t *session.Totals) float64 { return float64(t.Procs) }, allTotals)},
		{Name: "threads", Label: "THR", Kind: Gauge, Integer: true, Help: "thread count", SessionHelp: "sum of the members' threads",
			process: always(func(p *procwalk.Process) float64 { return float64(p.Threads) }),
			session: total(func(t *session.Totals) float64 { return float64(t.Threads) }, allTotals)},
		{Name: "zombies", Label: "ZOMB", Kind: Gauge, Integer: true, Help: "members in state Z",
			session: total(func(t *session.Totals) float64 { return float64(t.Zombies) }, allTotals)},
		{Name: "partial", Label: "PARTIAL", Kind: Gauge, Flag: true,
			Help: "members may be missing from the sums: grouping could not check every process",
			session: func(ss *session.Session, _ procwalk.Fields, _ time.Time) (float64, bool) {
				return flag(ss.Partial), true
			}},
	}
}

// memory are sizes: of a process, and summed over a session's members.
func memory() []Desc {
	return []Desc{
		{Name: "rss_bytes", Aliases: []string{"rss"}, Label: "RSS", Unit: "bytes", Kind: Gauge, Integer: true,
			Help:        "resident memory (statm); counts shared pages in every process mapping them",
			SessionHelp: "sum of RSS: over-counts pages the members share",
			process:     always(func(p *procwalk.Process) float64 { return float64(p.RSSBytes) }),
			session:     total(func(t *session.Totals) float64 { return float64(t.RSSBytes) }, allTotals)},
		{Name: "pss_bytes", Aliases: []string{"pss"}, Label: "PSS", Unit: "bytes", Kind: Gauge, Integer: true, Needs: procwalk.FieldSmaps,
			Help:        "proportional set size (smaps_rollup): shared pages split between their users; sums without double-counting",
			SessionHelp: "sum of PSS: shared pages split between their users",
			process:     ifRead(procwalk.FieldSmaps, func(p *procwalk.Process) float64 { return float64(p.Smaps.PSSBytes) }),
			session:     total(func(t *session.Totals) float64 { return float64(t.PSSBytes) }, smapsTotals)},
		{Name: "uss_bytes", Aliases: []string{"uss"}, Label: "USS", Unit: "bytes", Kind: Gauge, Integer: true, Needs: procwalk.FieldSmaps,
			Help:        "unique set size (smaps_rollup): memory freed if the process exits",
			SessionHelp: "sum of USS",
			process:     ifRead(procwalk.FieldSmaps, func(p *procwalk.Process) float64 { return float64(p.Smaps.USSBytes) }),
			session:     total(func(t *session.Totals) float64 { return float64(t.USSBytes) }, smapsTotals)},
		{Name: "smaps_read_procs", Label: "SMAPS", Kind: Gauge, Integer: true, Needs: procwalk.FieldSmaps,
			Help:    "members whose smaps_rollup was read: fewer than procs means partial PSS and USS",
			session: total(func(t *session.Totals) float64 { return float64(t.SmapsRead) }, smapsTotals)},
		{Name: "swap_bytes", Aliases: []string{"swap"}, Label: "SWAP", Unit: "bytes", Kind: Gauge, Integer: true, Needs: procwalk.FieldSwap,
			When:        "`swap` or `pss`, or the BPF source",
			Help:        "swapped-out memory (status VmSwap, 0 on a host with no swap in use; smaps_rollup Swap when read)",
			SessionHelp: "sum of VmSwap (status; 0 without reading on a host with no swap in use) or Swap (smaps_rollup)",
			process:     ifRead(procwalk.FieldSwap, func(p *procwalk.Process) float64 { return float64(p.SwapBytes) }),
			session: func(ss *session.Session, read procwalk.Fields, _ time.Time) (float64, bool) {
				return float64(ss.Totals.SwapBytes), read&(procwalk.FieldSwap|procwalk.FieldStatus|procwalk.FieldSmaps) != 0
			}},
		{Name: "vsize_bytes", Aliases: []string{"vsize"}, Label: "VSZ", Unit: "bytes", Kind: Gauge, Integer: true, Help: "virtual memory size",
			process: always(func(p *procwalk.Process) float64 { return float64(p.VSizeBytes) })},
		{Name: "shared_bytes", Aliases: []string{"shared"}, Label: "SHR", Unit: "bytes", Kind: Gauge, Integer: true,
			Help:    "resident shared (file-backed) memory (statm)",
			process: always(func(p *procwalk.Process) float64 { return float64(p.SharedBytes) })},
		{Name: "fds", Label: "FDS", Kind: Gauge, Integer: true, Needs: procwalk.FieldFDs, Help: "open file descriptors",
			process: ifRead(procwalk.FieldFDs, func(p *procwalk.Process) float64 { return float64(p.FDs) })},
		{Name: "oom_score", Label: "OOM", Kind: Gauge, Integer: true, Needs: procwalk.FieldOOMScore, Help: "the OOM killer's badness score",
			process: ifRead(procwalk.FieldOOMScore, func(p *procwalk.Process) float64 { return float64(p.OOMScore) })},
	}
}

// cpuAndIO are CPU and storage IO: counters and their rates.
func cpuAndIO() []Desc {
	bothIO := func(t *session.Totals) bool { return rateTotals(t) && ioTotals(t) }
	return []Desc{
		{Name: "cpu_percent", Aliases: []string{"cpu"}, Label: "CPU%", Unit: "percent", Kind: Rate,
			Help:        "CPU use between two gathers, percent of one core (200 is two cores busy)",
			SessionHelp: "the members' CPU use between two gathers, percent of one core",
			process:     rate(measured, func(r *procwalk.Rates) float64 { return r.CPUPercent }),
			session:     total(func(t *session.Totals) float64 { return t.CPUPercent }, rateTotals)},
		{Name: "cpu_time_seconds", Aliases: []string{"time", "cpu_time"}, Label: "TIME", Unit: "seconds", Kind: Counter,
			Help:        "CPU time used, user and system",
			SessionHelp: "CPU the members used while they were members; never goes back when a member exits",
			// Whole clock ticks: user plus system summed as floats is noise
			// (3.7600000000000002) that Telegraf and JSON would show.
			process: func(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
				return s.Host.RoundToTicks(p.CPUSeconds()), true
			},
			session: total(func(t *session.Totals) float64 { return t.CumulativeCPUSeconds }, allTotals)},
		{Name: "cpu_user_seconds", Aliases: []string{"user_time"}, Label: "UTIME", Unit: "seconds", Kind: Counter, Help: "CPU time in user mode",
			process: always(func(p *procwalk.Process) float64 { return p.UserCPUSeconds })},
		{Name: "cpu_system_seconds", Aliases: []string{"system_time"}, Label: "STIME", Unit: "seconds", Kind: Counter, Help: "CPU time in the kernel",
			process: always(func(p *procwalk.Process) float64 { return p.SystemCPUSeconds })},
		{Name: "read_bytes", Label: "READ", Unit: "bytes", Kind: Counter, Integer: true, Needs: procwalk.FieldIO,
			Help:        "bytes read from storage (io), reaped children included; needs ptrace access",
			SessionHelp: "storage bytes the members read while members; never goes back when a member exits",
			process:     ifRead(procwalk.FieldIO, func(p *procwalk.Process) float64 { return float64(p.IO.ReadBytes) }),
			session:     total(func(t *session.Totals) float64 { return float64(t.CumulativeReadBytes) }, ioTotals)},
		{Name: "write_bytes", Label: "WRITE", Unit: "bytes", Kind: Counter, Integer: true, Needs: procwalk.FieldIO,
			Help:        "bytes written to storage (io), reaped children included; needs ptrace access",
			SessionHelp: "storage bytes the members wrote while members; never goes back when a member exits",
			process:     ifRead(procwalk.FieldIO, func(p *procwalk.Process) float64 { return float64(p.IO.WriteBytes) }),
			session:     total(func(t *session.Totals) float64 { return float64(t.CumulativeWriteBytes) }, ioTotals)},
		{Name: "io_read_procs", Label: "IOREAD", Kind: Gauge, Integer: true, Needs: procwalk.FieldIO,
			Help:    "members whose io file was readable: fewer than procs means partial IO sums",
			session: total(func(t *session.Totals) float64 { return float64(t.IORead) }, ioTotals)},
		{Name: "read_bytes_per_second", Aliases: []string{"read", "read_rate"}, Label: "READ/s", Unit: "bytes/s", Kind: Rate, Needs: procwalk.FieldIO,
			Help: "storage reads between two gathers", SessionHelp: "the members' storage reads between two gathers",
			process: rate(haveIO, func(r *procwalk.Rates) float64 { return r.ReadBytesPerSecond }),
			session: total(func(t *session.Totals) float64 { return t.ReadBytesPerSecond }, bothIO)},
		{Name: "write_bytes_per_second", Aliases: []string{"write", "write_rate"}, Label: "WRITE/s", Unit: "bytes/s", Kind: Rate, Needs: procwalk.FieldIO,
			Help: "storage writes between two gathers", SessionHelp: "the members' storage writes between two gathers",
			process: rate(haveIO, func(r *procwalk.Rates) float64 { return r.WriteBytesPerSecond }),
			session: total(func(t *session.Totals) float64 { return t.WriteBytesPerSecond }, bothIO)},
		{Name: "io_bytes_per_second", Aliases: []string{"io"}, Label: "IO/s", Unit: "bytes/s", Kind: Rate, Needs: procwalk.FieldIO,
			Help: "storage reads and writes between two gathers", SessionHelp: "the members' storage reads and writes between two gathers",
			process: rate(haveIO, func(r *procwalk.Rates) float64 { return r.ReadBytesPerSecond + r.WriteBytesPerSecond }),
			session: total(func(t *session.Totals) float64 { return t.ReadBytesPerSecond + t.WriteBytesPerSecond }, bothIO)},
		{Name: "rss_growth_bytes_per_minute", Aliases: []string{"growth"}, Label: "GROWTH", Unit: "bytes/min", Kind: Rate,
			Help: "RSS change between two gathers; negative when it shrinks", SessionHelp: "sum of the members' RSS growth",
			process: rate(measured, func(r *procwalk.Rates) float64 { return r.RSSGrowthBytesPerMinute }),
			session: total(func(t *session.Totals) float64 { return t.RSSGrowthBytesPerMinute }, rateTotals)},
		{Name: "pss_growth_bytes_per_minute", Aliases: []string{"pss_growth"}, Label: "PSS+", Unit: "bytes/min", Kind: Rate, Needs: procwalk.FieldSmaps,
			Help: "PSS change between two gathers", SessionHelp: "sum of the members' PSS growth",
			process: rate(haveSmaps, func(r *procwalk.Rates) float64 { return r.PSSGrowthBytesPerMinute }),
			session: total(func(t *session.Totals) float64 { return t.PSSGrowthBytesPerMinute },
				func(t *session.Totals) bool { return rateTotals(t) && smapsTotals(t) })},
		{Name: "uss_growth_bytes_per_minute", Aliases: []string{"uss_growth"}, Label: "USS+", Unit: "bytes/min", Kind: Rate, Needs: procwalk.FieldSmaps,
			Help:    "USS change between two gathers",
			process: rate(haveSmaps, func(r *procwalk.Rates) float64 { return r.USSGrowthBytesPerMinute })},
	}
}

// times are ages and start times.
func times() []Desc {
	return []Desc{
		{Name: "age_seconds", Aliases: []string{"age"}, Label: "AGE", Unit: "seconds", Kind: Gauge,
			Help: "time since the process started, at the gather's time", SessionHelp: "time since the oldest member started",
			process: func(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
				return max(s.Time.Sub(p.Start).Seconds(), 0), true
			},
			session: func(ss *session.Session, _ procwalk.Fields, now time.Time) (float64, bool) {
				return max(now.Sub(ss.Totals.OldestStart).Seconds(), 0), !ss.Totals.OldestStart.IsZero()
			}},
		{Name: "start_unix_seconds", Aliases: []string{"start"}, Label: "START", Unit: "seconds", Kind: Gauge, Integer: true,
			Help:        "when the process started, whole seconds since 1970 (btime + starttime)",
			SessionHelp: "when the oldest member started, whole seconds since 1970",
			process:     always(func(p *procwalk.Process) float64 { return float64(p.Start.Unix()) }),
			session: total(func(t *session.Totals) float64 { return float64(t.OldestStart.Unix()) },
				func(t *session.Totals) bool { return !t.OldestStart.IsZero() })},
	}
}

// cgroupMetrics are a cgroup session's usage and limits (cgroupfs).
func cgroupMetrics() []Desc {
	cgroup := func(v func(c *session.CgroupUsage, t *session.Totals) (float64, bool)) SessionValue {
		return func(ss *session.Session, _ procwalk.Fields, _ time.Time) (float64, bool) {
			if c := ss.Totals.Cgroup; c != nil {
				return v(c, &ss.Totals)
			}
			return 0, false
		}
	}
	return []Desc{
		{Name: "memory_usage_bytes", Label: "MEM", Unit: "bytes", Kind: Gauge, Integer: true, When: "cgroup sessions with a readable memory controller",
			Help: "the session's cgroup memory usage (memory.current, memory.usage_in_bytes)",
			session: cgroup(func(c *session.CgroupUsage, _ *session.Totals) (float64, bool) {
				return float64(c.MemoryUsageBytes), c.HaveMemoryUsage
			})},
		{Name: "memory_limit_bytes", Label: "LIMIT", Unit: "bytes", Kind: Gauge, Integer: true, When: "cgroup sessions under a memory limit",
			Help: "the tightest memory limit of the cgroup and its ancestors",
			session: cgroup(func(c *session.CgroupUsage, _ *session.Totals) (float64, bool) {
				return float64(c.MemoryLimitBytes), c.MemoryLimitBytes > 0
			})},
		{Name: "memory_usage_percent", Label: "MEM%", Unit: "percent", Kind: Gauge, When: "cgroup sessions with a memory limit and usage",
			Help: "memory usage over the limit",
			session: cgroup(func(c *session.CgroupUsage, _ *session.Totals) (float64, bool) {
				return c.MemoryPercent, c.MemoryLimitBytes > 0 && c.HaveMemoryUsage
			})},
		{Name: "cpu_quota_cores", Label: "QUOTA", Unit: "cores", Kind: Gauge, When: "cgroup sessions under a CPU quota",
			Help: "the tightest CPU quota (quota / period): 1.5 is one and a half CPUs",
			session: cgroup(func(c *session.CgroupUsage, _ *session.Totals) (float64, bool) {
				return c.CPUQuotaCores, c.CPUQuotaCores > 0
			})},
		{Name: "cpu_quota_percent", Label: "QUOTA%", Unit: "percent", Kind: Rate, When: "cgroup sessions under a CPU quota",
			Help: "the members' CPU use over the quota",
			session: cgroup(func(c *session.CgroupUsage, t *session.Totals) (float64, bool) {
				return c.CPUQuotaPercent, c.CPUQuotaCores > 0 && t.RatesMeasured > 0
			})},
		{Name: "danger", Label: "DANGER", Kind: Gauge, Flag: true, When: "cgroup sessions",
			Help:    "memory or CPU at or above the danger threshold of its limit",
			session: cgroup(func(c *session.CgroupUsage, _ *session.Totals) (float64, bool) { return flag(c.Danger), true })},
	}
}

// agentMetrics are the numbers of an agent session (session.AgentState).
func agentMetrics() []Desc {
	agent := func(v func(a *session.AgentState, now time.Time) (float64, bool)) SessionValue {
		return func(ss *session.Session, _ procwalk.Fields, now time.Time) (float64, bool) {
			if ss.Agent == nil {
				return 0, false
			}
			return v(ss.Agent, now)
		}
	}
	// tr is a figure of the transcript, absent without one.
	tr := func(v func(t *session.Transcript) int64) SessionValue {
		return agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			return float64(v(a.Transcript)), true
		})
	}
	// tok is a cumulative count of the agent's, its subagents' included,
	// absent without a transcript.
	tok := func(v func(c *session.TokenCounts) int64) SessionValue {
		return agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			c := a.Tokens()
			return float64(v(&c)), true
		})
	}
	// sub is a count of its subagents', absent without a transcript.
	sub := func(v func(a *session.AgentState) int64) SessionValue {
		return agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil {
				return 0, false
			}
			return float64(v(a)), true
		})
	}
	// when is a figure of the transcript, there when ok says so.
	when := func(ok func(t *session.Transcript) bool, v func(a *session.AgentState) float64) SessionValue {
		return agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
			if a.Transcript == nil || !ok(a.Transcript) {
				return 0, false
			}
			return v(a), true
		})
	}
	contextKnown := func(a *session.AgentState) bool { return a.Transcript != nil && a.Transcript.ContextUsedTokens > 0 }
	const transcript = "agent sessions with a transcript"
	return []Desc{
		{Name: "status_seconds", Label: "STATUS", Unit: "seconds", Kind: Gauge, Integer: true, Agent: true, When: "agent sessions",
			Help: "time in the current status (a blocked agent: since the tool use it waits on)",
			session: agent(func(a *session.AgentState, now time.Time) (float64, bool) {
				return float64(int64(max(now.Sub(a.StatusSince), 0) / time.Second)), !a.StatusSince.IsZero()
			})},
		{Name: "context_used_tokens", Label: "CTX", Unit: "tokens", Kind: Gauge, Integer: true, Agent: true, When: "agent transcripts with usage",
			Help: "what the last model call read: input, cache read and cache creation tokens",
			session: agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
				if !contextKnown(a) {
					return 0, false
				}
				return float64(a.Transcript.ContextUsedTokens), true
			})},
		{Name: "context_window_tokens", Label: "WINDOW", Unit: "tokens", Kind: Gauge, Integer: true, Agent: true, When: "agents of a known model family",
			Help: "the model's context window (configured per model family, or stated by the transcript)",
			session: agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
				return float64(a.ContextWindowTokens), a.ContextWindowTokens > 0
			})},
		{Name: "context_percent", Label: "CTX%", Unit: "percent", Kind: Gauge, Agent: true, When: "with both above",
			Help: "context_used_tokens of context_window_tokens",
			session: agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
				return a.ContextPercent, contextKnown(a) && a.ContextWindowTokens > 0
			})},
		{Name: "input_tokens", Label: "IN", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "uncached input tokens of every model call, its subagents' included, cumulative (of the part read: transcript_skipped_bytes)",
			session: tok(func(c *session.TokenCounts) int64 { return c.InputTokens })},
		{Name: "output_tokens", Label: "OUT", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "output tokens, its subagents' included, cumulative (of the part read)",
			session: tok(func(c *session.TokenCounts) int64 { return c.OutputTokens })},
		{Name: "cache_read_tokens", Label: "CACHE-R", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "input tokens read from the prompt cache, its subagents' included, cumulative (of the part read)",
			session: tok(func(c *session.TokenCounts) int64 { return c.CacheReadTokens })},
		{Name: "cache_creation_tokens", Label: "CACHE-W", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "input tokens written to the prompt cache, its subagents' included, cumulative (of the part read)",
			session: tok(func(c *session.TokenCounts) int64 { return c.CacheCreationTokens })},
		{Name: "cache_creation_5m_tokens", Label: "CACHE-W5M", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of cache_creation_tokens, those cached for 5 minutes (the default, and those the usage does not split)",
			session: tok(func(c *session.TokenCounts) int64 { return c.CacheCreationTokens - c.CacheCreation1hTokens })},
		{Name: "cache_creation_1h_tokens", Label: "CACHE-W1H", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of cache_creation_tokens, those cached for an hour (priced higher)",
			session: tok(func(c *session.TokenCounts) int64 { return c.CacheCreation1hTokens })},
		{Name: "reasoning_tokens", Label: "REASON", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: "transcripts that split reasoning (Codex)",
			Help: "of output_tokens, those spent reasoning (Claude Code does not split thinking from output)",
			session: when(func(t *session.Transcript) bool { return t.HaveReasoning },
				func(a *session.AgentState) float64 { return float64(a.Tokens().ReasoningTokens) })},
		{Name: "web_search_requests", Label: "SEARCH", Kind: Counter, Integer: true, Agent: true, When: "transcripts with usage.server_tool_use (Claude Code)",
			Help: "web searches the model ran on the server",
			session: when(func(t *session.Transcript) bool { return t.HaveServerTools },
				func(a *session.AgentState) float64 { return float64(a.Tokens().WebSearchRequests) })},
		{Name: "web_fetch_requests", Label: "FETCH", Kind: Counter, Integer: true, Agent: true, When: "transcripts with usage.server_tool_use (Claude Code)",
			Help: "web fetches the model ran on the server",
			session: when(func(t *session.Transcript) bool { return t.HaveServerTools },
				func(a *session.AgentState) float64 { return float64(a.Tokens().WebFetchRequests) })},
		{Name: "cost_usd", Label: "COST", Unit: "usd", Kind: Counter, Agent: true, When: "agent_prices (--agent-prices) prices every model it ran",
			Help:    "what its tokens, its subagents' included, cost by the user's price table",
			session: agent(func(a *session.AgentState, _ time.Time) (float64, bool) { return a.CostUSD, a.HaveCost })},
		{Name: "subagent_input_tokens", Label: "SUB-IN", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of input_tokens, its subagents' (their own transcripts)",
			session: sub(func(a *session.AgentState) int64 { return a.SubagentTokens.InputTokens })},
		{Name: "subagent_output_tokens", Label: "SUB-OUT", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of output_tokens, its subagents'",
			session: sub(func(a *session.AgentState) int64 { return a.SubagentTokens.OutputTokens })},
		{Name: "subagent_cache_read_tokens", Label: "SUB-CACHE-R", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of cache_read_tokens, its subagents'",
			session: sub(func(a *session.AgentState) int64 { return a.SubagentTokens.CacheReadTokens })},
		{Name: "subagent_cache_creation_tokens", Label: "SUB-CACHE-W", Unit: "tokens", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "of cache_creation_tokens, its subagents'",
			session: sub(func(a *session.AgentState) int64 { return a.SubagentTokens.CacheCreationTokens })},
		{Name: "subagents", Label: "SUBAGENTS", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "subagent transcripts of its session (Claude Code's Task subagents)",
			session: sub(func(a *session.AgentState) int64 { return int64(a.Subagents) })},
		{Name: "subagents_working", Label: "SUB-WORKING", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "subagents whose transcript grew within agent_active_within",
			session: sub(func(a *session.AgentState) int64 { return int64(a.SubagentsWorking) })},
		{Name: "turns", Label: "TURNS", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "prompts the person sent (in the part read)",
			session: tr(func(t *session.Transcript) int64 { return int64(t.Turns) })},
		{Name: "pending_tools", Label: "TOOLS", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "tool uses awaiting their results",
			session: tr(func(t *session.Transcript) int64 { return int64(t.PendingTools) })},
		{Name: "compactions", Label: "COMPACT", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "compactions of the context: /compact or the automatic one (in the part read)",
			session: tr(func(t *session.Transcript) int64 { return int64(t.Compactions) })},
		{Name: "api_errors", Label: "API-ERR", Kind: Counter, Integer: true, Agent: true, When: transcript,
			Help:    "model calls that failed for good: rate limit, overload, authentication (in the part read; last_error names the last)",
			session: tr(func(t *session.Transcript) int64 { return int64(t.APIErrors) })},
		{Name: "rate_limit_primary_percent", Label: "LIMIT1%", Unit: "percent", Kind: Gauge, Agent: true, When: "transcripts that state rate limits (Codex)",
			Help: "use of the agent's primary rate limit (Codex: the 5-hour window)",
			session: when(func(t *session.Transcript) bool { return t.HaveRateLimits },
				func(a *session.AgentState) float64 { return a.Transcript.RateLimitPrimaryPercent })},
		{Name: "rate_limit_secondary_percent", Label: "LIMIT2%", Unit: "percent", Kind: Gauge, Agent: true, When: "transcripts that state rate limits (Codex)",
			Help: "use of the agent's secondary rate limit (Codex: the weekly window)",
			session: when(func(t *session.Transcript) bool { return t.HaveRateLimits },
				func(a *session.AgentState) float64 { return a.Transcript.RateLimitSecondaryPercent })},
		{Name: "last_activity_unix_seconds", Label: "ACTIVE", Unit: "seconds", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help: "time of the transcript's last entry, whole seconds since 1970",
			session: agent(func(a *session.AgentState, _ time.Time) (float64, bool) {
				if a.Transcript == nil || a.Transcript.LastActivity.IsZero() {
					return 0, false
				}
				return float64(a.Transcript.LastActivity.Unix()), true
			})},
		{Name: "transcript_bytes", Label: "TRANSCRIPT", Unit: "bytes", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "how far the transcript was read: its size at the last read",
			session: tr(func(t *session.Transcript) int64 { return t.Bytes })},
		{Name: "transcript_skipped_bytes", Label: "SKIPPED", Unit: "bytes", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "bytes of the transcript never read (its first read was bounded): above 0, the cumulative counts are of the part read",
			session: tr(func(t *session.Transcript) int64 { return t.SkippedBytes })},
		{Name: "transcript_malformed_lines", Label: "MALFORMED", Kind: Gauge, Integer: true, Agent: true, When: transcript,
			Help:    "lines skipped: not JSON of the format, or longer than 4 MiB",
			session: tr(func(t *session.Transcript) int64 { return int64(t.Malformed + t.Oversized) })},
	}
}
