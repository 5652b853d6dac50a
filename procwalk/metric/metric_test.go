//go:build linux

package metric

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

func TestNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, d := range All() {
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			if other, dup := seen[n]; dup {
				t.Errorf("%q names both %s and %s", n, other, d.Name)
			}
			seen[n] = d.Name
		}
		if d.Label == "" || d.Kind == 0 || d.Help == "" || !d.OfProcess() && !d.OfSession() {
			t.Errorf("%s lacks a label, kind, help or value", d.Name)
		}
		if d.Kind == Rate && d.Unit != "percent" && d.Unit != "bytes/s" && d.Unit != "bytes/min" {
			t.Errorf("rate %s in %q: a rate is per time", d.Name, d.Unit)
		}
		if d.ID && d.OfSession() {
			t.Errorf("%s is an id with a session value: ids are never summed", d.Name)
		}
		if d.Agent && (d.OfProcess() || d.When == "") {
			t.Errorf("agent metric %s: a session's only, and says when it is there", d.Name)
		}
	}
}

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"rss": "rss_bytes", "RSS_BYTES": "rss_bytes", " cpu ": "cpu_percent", "time": "cpu_time_seconds",
		"growth": "rss_growth_bytes_per_minute", "read_rate": "read_bytes_per_second", "euid": "uid",
		"procs": "procs", "memory_usage_percent": "memory_usage_percent",
	} {
		if d, ok := Lookup(name); !ok || d.Name != want {
			t.Errorf("Lookup(%q) = %s, %v; want %s", name, d.Name, ok, want)
		}
		if d, ok := NewCatalogue().Lookup(name); !ok || d.Name != want {
			t.Errorf("Catalogue.Lookup(%q) = %v, %v; want %s", name, d, ok, want)
		}
	}
	if _, ok := Lookup("size"); ok {
		t.Error(`Lookup("size") found a metric`)
	}
	// Lookup walks the families one by one: every metric of All, by
	// each of its names, is found, and is the one All lists.
	for _, want := range All() {
		for _, name := range append([]string{want.Name}, want.Aliases...) {
			if d, ok := Lookup(name); !ok || d.Name != want.Name || d.Label != want.Label {
				t.Errorf("Lookup(%q) = %s, %v; want %s", name, d.Name, ok, want.Name)
			}
		}
	}
}

// TestCatalogueSize: All's one allocation holds the whole catalogue.
func TestCatalogueSize(t *testing.T) {
	if n := len(All()); n > catalogueSize {
		t.Errorf("the catalogue has %d metrics, catalogueSize room for %d: raise it", n, catalogueSize)
	}
}

// TestProcessAbsentIsNotZero: a value not read, denied or not measured is
// absent, whatever zero the Process holds in its place; so is a metric
// that is not a process's.
func TestProcessAbsentIsNotZero(t *testing.T) {
	s := &procwalk.Snapshot{Time: time.Unix(1000, 0)}
	p := &procwalk.Process{ID: procwalk.ProcID{PID: 7}, Start: time.Unix(400, 0), RSSBytes: 4096}
	for _, name := range []string{"uid", "ruid", "pss_bytes", "uss_bytes", "swap_bytes", "fds", "oom_score",
		"cpu_percent", "read_bytes", "read_bytes_per_second", "rss_growth_bytes_per_minute", "pss_growth_bytes_per_minute",
		"procs", "memory_usage_bytes", "input_tokens"} {
		d, _ := Lookup(name)
		if v, ok := d.Process(s, p); ok {
			t.Errorf("%s of a process that read nothing = %v, want absent", name, v)
		}
	}
	p.Read = procwalk.FieldSmaps | procwalk.FieldIO
	p.Smaps.PSSBytes = 1024
	p.Rates = procwalk.Rates{Measured: true, CPUPercent: 12.5}
	for name, want := range map[string]float64{"pss_bytes": 1024, "read_bytes": 0, "cpu_percent": 12.5, "rss_bytes": 4096, "age_seconds": 600} {
		d, _ := Lookup(name)
		if v, ok := d.Process(s, p); !ok || v != want {
			t.Errorf("%s = %v, %v; want %v", name, v, ok, want)
		}
	}
	d, _ := Lookup("read_bytes_per_second")
	if _, ok := d.Process(s, p); ok {
		t.Error("an IO rate without HaveIO is present")
	}
}

// TestSessionValues: sums are there when what they sum was read, counters
// are the session's cumulative ones, limits only for a cgroup that has
// them, agent figures only for agents with a transcript.
func TestSessionValues(t *testing.T) {
	now := time.Unix(1000, 0)
	ss := &session.Session{Kind: "tmux", Name: "build"}
	ss.Totals.Procs, ss.Totals.RSSBytes, ss.Totals.OldestStart = 3, 3<<20, time.Unix(900, 0)
	ss.Totals.CPUSeconds, ss.Totals.CumulativeCPUSeconds = 1.5, 4.25 // members now, and cumulative
	ss.Totals.ReadBytes, ss.Totals.CumulativeReadBytes, ss.Totals.IORead = 10, 300, 2
	got := func(name string, read procwalk.Fields) (float64, bool) {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("no metric %s", name)
		}
		return d.Session(ss, read, now)
	}
	for name, want := range map[string]float64{"procs": 3, "rss_bytes": 3 << 20, "cpu_time_seconds": 4.25, "read_bytes": 300,
		"io_read_procs": 2, "age_seconds": 100, "start_unix_seconds": 900, "partial": 0} {
		if v, ok := got(name, 0); !ok || v != want {
			t.Errorf("%s = %v, %v; want %v", name, v, ok, want)
		}
	}
	for _, name := range []string{"pss_bytes", "swap_bytes", "cpu_percent", "read_bytes_per_second", "memory_limit_bytes",
		"danger", "input_tokens", "status_seconds", "pid", "vsize_bytes"} {
		if v, ok := got(name, 0); ok {
			t.Errorf("%s = %v, want absent", name, v)
		}
	}
	if v, ok := got("swap_bytes", procwalk.FieldStatus); !ok || v != 0 {
		t.Errorf("swap_bytes with status read = %v, %v; want 0, true", v, ok)
	}
	ss.Totals.Cgroup = &session.CgroupUsage{MemoryLimitBytes: 1 << 30, MemoryUsageBytes: 1 << 29, HaveMemoryUsage: true, MemoryPercent: 50}
	if v, ok := got("memory_usage_percent", 0); !ok || v != 50 {
		t.Errorf("memory_usage_percent = %v, %v; want 50", v, ok)
	}
	if v, ok := got("cpu_quota_cores", 0); ok {
		t.Errorf("cpu_quota_cores without a quota = %v, want absent", v)
	}
	ss.Agent = &session.AgentState{Status: "idle", StatusSince: time.Unix(940, 0), Transcript: &session.Transcript{InputTokens: 7}}
	if v, ok := got("input_tokens", 0); !ok || v != 7 {
		t.Errorf("input_tokens = %v, %v; want 7", v, ok)
	}
	if v, ok := got("status_seconds", 0); !ok || v != 60 {
		t.Errorf("status_seconds = %v, %v; want 60", v, ok)
	}
}

func pids(ps []*procwalk.Process) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.ID.PID)
	}
	return out
}

// TestTopFollowsTheOneRule: larger first, absent last, ties by lower pid;
// Top's top equals the head of the full sort.
func TestTopFollowsTheOneRule(t *testing.T) {
	s := &procwalk.Snapshot{}
	mk := func(pid int, pss uint64, read bool) *procwalk.Process {
		p := &procwalk.Process{ID: procwalk.ProcID{PID: pid}, RSSBytes: 1 << 30}
		if read {
			p.Read = procwalk.FieldSmaps
			p.Smaps.PSSBytes = pss
		}
		return p
	}
	procs := []*procwalk.Process{mk(9, 100, true), mk(3, 0, false), mk(5, 300, true), mk(4, 100, true), mk(2, 0, true), mk(1, 0, false)}
	pss, _ := Lookup("pss")
	sorted := slices.Clone(procs)
	Sort(s, sorted, &pss)
	if got, want := pids(sorted), []int{5, 4, 9, 2, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("sorted by pss: %v, want %v (unread PSS last, never ranked as RSS or 0)", got, want)
	}
	for n := 0; n <= len(procs)+1; n++ {
		top := Top(s, slices.Clone(procs), n, &pss)
		if want := pids(sorted)[:min(n, len(procs))]; !slices.Equal(pids(top), want) {
			t.Errorf("Top %d = %v, want %v", n, pids(top), want)
		}
	}
}

// TestSortAndTopOrder checks Sort and Top against Compare on values full of
// ties, signed zeros, NaN, infinities, negative numbers and processes
// without a value, given in a shuffled order: sorted by Compare, ties by pid
// (NaNs, which compare equal to each other, too).
func TestSortAndTopOrder(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, 1, 2.5, -3, math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e-300, 4096, 4096}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		n := rng.IntN(300)
		procs := make([]procwalk.Process, n)
		value := map[int]float64{}
		missing := map[int]bool{}
		for i := range procs {
			pid := i*3 + 1
			procs[i].ID.PID = pid
			if rng.IntN(7) == 0 {
				missing[pid] = true
			} else {
				value[pid] = values[rng.IntN(len(values))]
			}
		}
		d := Desc{Name: "test", process: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return value[p.ID.PID], !missing[p.ID.PID]
		}}
		ptrs := make([]*procwalk.Process, n)
		for i := range procs {
			ptrs[i] = &procs[i]
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(i, j int) { ptrs[i], ptrs[j] = ptrs[j], ptrs[i] })
		}
		k := rng.IntN(n + 2)
		top := Top(nil, slices.Clone(ptrs), k, &d)
		Sort(nil, ptrs, &d)
		if want := pids(ptrs)[:min(k, n)]; !slices.Equal(pids(top), want) {
			t.Fatalf("round %d: Top %d = %v, want %v", round, k, pids(top), want)
		}
		seen := map[int]bool{}
		for i, p := range ptrs {
			seen[p.ID.PID] = true
			if i == 0 {
				continue
			}
			q := ptrs[i-1]
			c := Compare(value[q.ID.PID], !missing[q.ID.PID], value[p.ID.PID], !missing[p.ID.PID])
			if c > 0 || c == 0 && q.ID.PID > p.ID.PID {
				t.Fatalf("round %d: pid %d (%v, %v) before pid %d (%v, %v)", round, q.ID.PID, value[q.ID.PID], !missing[q.ID.PID], p.ID.PID, value[p.ID.PID], !missing[p.ID.PID])
			}
		}
		if len(seen) != n {
			t.Fatalf("round %d: %d distinct processes after sorting, want %d", round, len(seen), n)
		}
	}
}

// TestSortSessions: a session whose value is absent (CPU % before rates,
// PSS not read) sorts after every one with a value, never as 0; ties keep
// the order given.
func TestSortSessions(t *testing.T) {
	mk := func(name string, cpu float64, measured bool) session.Session {
		s := session.Session{Kind: "tmux", Name: name}
		s.Totals.CPUPercent = cpu
		if measured {
			s.Totals.RatesMeasured = 1
		}
		return s
	}
	sessions := []session.Session{mk("a", 0, false), mk("b", 0, true), mk("c", 50, true), mk("d", 0, false), mk("e", 0, true), mk("f", -0.0, true)}
	cpu, _ := Lookup("cpu")
	SortSessions(sessions, &cpu, 0, time.Time{})
	var got []string
	for _, s := range sessions {
		got = append(got, s.Name)
	}
	if want := []string{"c", "b", "e", "f", "a", "d"}; !slices.Equal(got, want) {
		t.Errorf("sessions by cpu: %v, want %v", got, want)
	}
}

// Every agent metric is absent for a session that is no agent, and without
// a transcript (status_seconds aside); each is read from it with one.
func TestAgentMetrics(t *testing.T) {
	now := time.Unix(1700005000, 0)
	full := &session.AgentState{Status: session.AgentBlocked, StatusSince: now.Add(-90 * time.Second), ContextWindowTokens: 200000, ContextPercent: 76,
		Transcript: &session.Transcript{ContextUsedTokens: 152000, InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheCreationTokens: 40,
			CacheCreation1hTokens: 16, ReasoningTokens: 6, WebSearchRequests: 2, WebFetchRequests: 1, HaveReasoning: true, HaveServerTools: true,
			Compactions: 2, APIErrors: 1, HaveRateLimits: true, RateLimitPrimaryPercent: 7, RateLimitSecondaryPercent: 77,
			Turns: 3, PendingTools: 1, LastActivity: time.Unix(1700003000, 0), Bytes: 5000, SkippedBytes: 4000, Malformed: 1, Oversized: 1},
		CostUSD: 1.25, HaveCost: true,
		SubagentTokens: session.TokenCounts{InputTokens: 5, OutputTokens: 7, CacheCreationTokens: 1}, Subagents: 2, SubagentsWorking: 1}
	// Token counts include the subagents': input 10 + 5, output 20 + 7.
	want := map[string]float64{"status_seconds": 90, "context_used_tokens": 152000, "context_window_tokens": 200000, "context_percent": 76,
		"input_tokens": 15, "output_tokens": 27, "cache_read_tokens": 30, "cache_creation_tokens": 41, "turns": 3, "pending_tools": 1,
		"subagent_input_tokens": 5, "subagent_output_tokens": 7, "subagent_cache_read_tokens": 0, "subagent_cache_creation_tokens": 1,
		"subagents": 2, "subagents_working": 1, "cache_creation_5m_tokens": 41 - 16, "cache_creation_1h_tokens": 16, "reasoning_tokens": 6,
		"web_search_requests": 2, "web_fetch_requests": 1, "cost_usd": 1.25, "compactions": 2, "api_errors": 1,
		"rate_limit_primary_percent": 7, "rate_limit_secondary_percent": 77,
		"last_activity_unix_seconds": 1700003000, "transcript_bytes": 5000, "transcript_skipped_bytes": 4000, "transcript_malformed_lines": 2}
	none := &session.Session{Kind: session.KindTmux}
	bare := &session.Session{Kind: session.KindAgent, Agent: &session.AgentState{Status: session.AgentIdle}}
	agent := &session.Session{Kind: session.KindAgent, Agent: full}
	n := 0
	for _, d := range All() {
		if _, isAgent := want[d.Name]; isAgent != d.Agent {
			t.Errorf("%s: Agent %v", d.Name, d.Agent)
		}
		if !d.Agent {
			continue
		}
		n++
		if v, ok := d.Session(none, 0, now); ok {
			t.Errorf("%s of a tmux session: %v", d.Name, v)
		}
		if v, ok := d.Session(bare, 0, now); ok {
			t.Errorf("%s without a transcript: %v", d.Name, v)
		}
		if v, ok := d.Session(agent, 0, now); !ok || v != want[d.Name] {
			t.Errorf("%s: %v %v, want %v", d.Name, v, ok, want[d.Name])
		}
	}
	if n != len(want) {
		t.Errorf("%d agent metrics, want %d", n, len(want))
	}
}

// cpu_time_seconds is whole clock ticks: user plus system time summed as
// floats prints noise Telegraf and JSON would show.
func TestCPUTimeSecondsIsTicks(t *testing.T) {
	p := procwalk.Process{UserCPUSeconds: 2.0 / 100, SystemCPUSeconds: 374.0 / 100} // 2 and 374 ticks
	if noisy := strconv.FormatFloat(p.CPUSeconds(), 'f', -1, 64); noisy != "3.7600000000000002" {
		t.Fatalf("the sum is %s: this test no longer shows the noise", noisy)
	}
	s := procwalk.NewSnapshot(procwalk.Host{ClockTicks: 100}, 0, 0, []procwalk.Process{p}, procwalk.Visibility{})
	d, _ := Lookup("cpu_time_seconds")
	v, ok := d.Process(s, &s.Procs[0])
	if got := strconv.FormatFloat(v, 'f', -1, 64); !ok || got != "3.76" {
		t.Errorf("cpu_time_seconds = %s, %v; want 3.76", got, ok)
	}
}
