//go:build linux

package plugin

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

var t0 = time.Unix(1700000100, 0)

func encode(t *testing.T, write func(w metricWriter)) []point {
	t.Helper()
	var w lineWriter
	write(&w)
	if w.err != nil {
		t.Fatalf("encoder rejected a line: %v", w.err)
	}
	return decode(t, w.bytes())
}

func TestWriteSessionFields(t *testing.T) {
	s := session.Session{
		Kind:    session.KindCgroup,
		Name:    "kubepods/pod-a",
		Attrs:   map[string]string{session.AttrPod: "web-1", session.AttrNamespace: "prod", session.AttrCgroup: "/kubepods/x"},
		Partial: true,
		Totals: session.Totals{
			Totals: procwalk.Totals{
				Procs: 3, Threads: 7, Zombies: 1, RSSBytes: 3 << 20, PSSBytes: 2 << 20, USSBytes: 1 << 20,
				SwapBytes: 4096, CPUPercent: 12.5, ReadBytesPerSecond: 10, WriteBytesPerSecond: 20,
				RatesMeasured: 2, SmapsRead: 3, IORead: 3,
			},
			OldestStart:             time.Unix(1700000000, 0),
			RSSGrowthBytesPerMinute: 1024,
			PSSGrowthBytesPerMinute: 512,
			CumulativeCPUSeconds:    42.5,
			CumulativeReadBytes:     1000,
			CumulativeWriteBytes:    2000,
			Cgroup: &session.CgroupUsage{
				HaveMemoryUsage: true, MemoryUsageBytes: 50 << 20, MemoryLimitBytes: 100 << 20,
				MemoryPercent: 50, CPUQuotaCores: 1.5, CPUQuotaPercent: 20,
			},
		},
	}
	ps := encode(t, func(w metricWriter) { writeSession(w, &s, procwalk.FieldStatus, t0, SessionFields()) })
	if len(ps) != 1 {
		t.Fatalf("%d points, want 1", len(ps))
	}
	p := ps[0]
	wantTags := map[string]string{"kind": "cgroup", "session": "kubepods/pod-a", "pod": "web-1", "namespace": "prod"}
	if !reflect.DeepEqual(p.tags, wantTags) {
		t.Errorf("tags = %v, want %v", p.tags, wantTags)
	}
	want := map[string]any{
		"procs": int64(3), "threads": int64(7), "zombies": int64(1), "partial": true,
		"rss_bytes": int64(3 << 20), "pss_bytes": int64(2 << 20), "uss_bytes": int64(1 << 20),
		"swap_bytes": int64(4096), "smaps_read_procs": int64(3),
		"cpu_time_seconds": 42.5, "read_bytes": int64(1000), "write_bytes": int64(2000), "io_read_procs": int64(3),
		"cpu_percent": 12.5, "rss_growth_bytes_per_minute": 1024.0, "pss_growth_bytes_per_minute": 512.0,
		"read_bytes_per_second": 10.0, "write_bytes_per_second": 20.0, "io_bytes_per_second": 30.0,
		"start_unix_seconds": int64(1700000000),
		"memory_usage_bytes": int64(50 << 20), "memory_limit_bytes": int64(100 << 20), "memory_usage_percent": 50.0,
		"cpu_quota_cores": 1.5, "cpu_quota_percent": 20.0, "danger": false,
	}
	if !reflect.DeepEqual(p.fields, want) {
		t.Errorf("fields =\n%v\nwant\n%v", p.fields, want)
	}
	if !p.time.Equal(t0) {
		t.Errorf("time = %v, want %v", p.time, t0)
	}
}

// Unknown values are left out, never written as a misleading zero, and the
// fields that are written keep their types.
func TestWriteSessionLeavesOutUnknowns(t *testing.T) {
	s := session.Session{Kind: session.KindTmux, Name: "build", Totals: session.Totals{
		Totals: procwalk.Totals{Procs: 2, RSSBytes: 100},
	}}
	p := encode(t, func(w metricWriter) { writeSession(w, &s, 0, t0, SessionFields()) })[0]
	for _, absent := range []string{"swap_bytes", "pss_bytes", "uss_bytes", "read_bytes", "cpu_percent", "read_bytes_per_second",
		"rss_growth_bytes_per_minute", "memory_limit_bytes", "cpu_quota_cores", "start_unix_seconds", "danger"} {
		if v, ok := p.fields[absent]; ok {
			t.Errorf("%s = %v written without data", absent, v)
		}
	}
	if _, ok := p.fields["cpu_time_seconds"].(float64); !ok {
		t.Errorf("cpu_time_seconds = %#v, want a float even when whole", p.fields["cpu_time_seconds"])
	}
	if _, ok := p.tags["pod"]; ok {
		t.Errorf("empty pod tag written: %v", p.tags)
	}
}

func TestWriteProcessHostileNames(t *testing.T) {
	s := session.Session{Kind: session.KindTmux, Name: "my session,x=y"}
	p := procwalk.Process{
		ID: procwalk.ProcID{PID: 4242, StartTicks: 99}, PPID: 1, Comm: "evil\n) x=1", State: 'R',
		Cmdline: []string{"/bin/evil", "a\nb", "\xff"}, Read: procwalk.FieldCmdline | procwalk.FieldIO,
		Threads: 2, RSSBytes: 1 << 20, IO: procwalk.IO{ReadBytes: 10, WriteBytes: 20},
		Rates: procwalk.Rates{Measured: true, CPUPercent: 99.5, HaveIO: true, ReadBytesPerSecond: 1},
	}
	snap := &procwalk.Snapshot{Time: t0}
	got := encode(t, func(w metricWriter) { writeProcess(w, snap, &s, 3, &p, "cpu_percent", ProcessFields()) })[0]
	wantTags := map[string]string{"kind": "tmux", "session": "my session,x=y", "rank": "3", "by": "cpu_percent"}
	if !reflect.DeepEqual(got.tags, wantTags) {
		t.Errorf("tags = %v, want %v", got.tags, wantTags)
	}
	checks := map[string]any{
		"pid": int64(4242), "ppid": int64(1), "comm": `evil\n) x=1`, "cmdline": `/bin/evil a\nb \xff`,
		"state": "running", "rss_bytes": int64(1 << 20), "read_bytes": int64(10), "cpu_percent": 99.5,
		"read_bytes_per_second": 1.0,
	}
	for k, want := range checks {
		if got.fields[k] != want {
			t.Errorf("%s = %#v, want %#v", k, got.fields[k], want)
		}
	}
	if _, ok := got.fields["pss_bytes"]; ok {
		t.Error("pss_bytes written without smaps")
	}
}

func TestProcessRanking(t *testing.T) {
	procs := []procwalk.Process{
		{ID: procwalk.ProcID{PID: 5}, RSSBytes: 10},
		{ID: procwalk.ProcID{PID: 3}, RSSBytes: 30},
		{ID: procwalk.ProcID{PID: 9}, RSSBytes: 30},
		{ID: procwalk.ProcID{PID: 1}, RSSBytes: 5},
		{ID: procwalk.ProcID{PID: 7}, RSSBytes: 40},
	}
	for _, by := range []string{"", "rss_bytes", "rss"} {
		rank, ok := processRanking(by)
		if !ok || rank.Name != "rss_bytes" {
			t.Fatalf("processRanking(%q) = %s, %v", by, rank.Name, ok)
		}
		var top []*procwalk.Process
		for i := range procs {
			top = append(top, &procs[i])
		}
		var got []int
		for _, p := range metric.Top(&procwalk.Snapshot{}, top, 3, &rank) {
			got = append(got, p.ID.PID)
		}
		if want := []int{7, 3, 9}; !reflect.DeepEqual(got, want) {
			t.Errorf("top 3 by %q = %v, want %v (ties: lower pid first)", by, got, want)
		}
	}
	for _, by := range []string{"memory", "pid", "uid", "procs", "input_tokens"} {
		if _, ok := processRanking(by); ok {
			t.Errorf("processRanking(%q) accepted", by)
		}
	}
}

func TestBatchAdd(t *testing.T) {
	var w lineWriter
	b := &Batch{w: &w, t: t0}
	err := b.Add("rule_hits", map[string]string{"rule": "grow fast", "empty": ""}, map[string]any{
		"count": 3, "ratio": float32(0.5), "big": uint64(1 << 40), "ok": true, "why": "rss\ngrew",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		m    string
		tags map[string]string
		f    map[string]any
	}{
		{"", nil, map[string]any{"a": 1}},
		{"m", nil, nil},
		{"m", nil, map[string]any{"a": []int{1}}},
		{"m", nil, map[string]any{"": 1}},
		{"m", map[string]string{"": "x"}, map[string]any{"a": 1}},
		{"m", map[string]string{"user": "alice"}, map[string]any{"user": "bob"}}, // a tag and a field of one name
		{"m", nil, map[string]any{"time": 1}},                                    // InfluxDB drops it
		{"m", map[string]string{"time": "x"}, map[string]any{"a": 1}},            // InfluxDB refuses the point
	} {
		if err := b.Add(bad.m, bad.tags, bad.f); !errors.Is(err, ErrEncode) {
			t.Errorf("Add(%q, %v, %v) = %v, want ErrEncode", bad.m, bad.tags, bad.f, err)
		}
	}
	ps := decode(t, w.bytes())
	if len(ps) != 1 {
		t.Fatalf("%d points, want 1 (bad metrics must add nothing)", len(ps))
	}
	want := map[string]any{"count": int64(3), "ratio": 0.5, "big": int64(1 << 40), "ok": true, "why": `rss\ngrew`}
	if !reflect.DeepEqual(ps[0].fields, want) || !reflect.DeepEqual(ps[0].tags, map[string]string{"rule": "grow fast"}) {
		t.Errorf("got %v %v, want fields %v and only the rule tag", ps[0].tags, ps[0].fields, want)
	}
}

func TestLineWriterCountsDroppedLines(t *testing.T) {
	var w lineWriter
	w.begin("good")
	w.intField("a", 1)
	w.end(t0)
	w.begin("bad")
	w.floatField("nan_only", nan())
	w.end(t0) // a line without fields is rejected, and must leave no trace
	w.begin("good")
	w.intField("a", 2)
	w.end(t0)
	if w.lines != 2 || w.dropped != 1 || w.err == nil {
		t.Fatalf("lines=%d dropped=%d err=%v, want 2, 1 and an error", w.lines, w.dropped, w.err)
	}
	if got := string(w.bytes()); strings.Count(got, "\n") != 2 || strings.Contains(got, "bad") {
		t.Errorf("batch = %q, want the two good lines only", got)
	}
	decode(t, w.bytes())
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestAppendActions(t *testing.T) {
	events := []kill.ActionEvent{{
		Time: t0, Requester: "rule:grow", Scope: "session tmux:build", Session: "tmux:build",
		PID: 42, StartTicks: 1234, Comm: "cc1", Args: "cc1 -O2\nx.c", Signals: []string{"TERM", "KILL"},
		Outcome: "killed", RSSBytes: 1 << 30, GoneSeconds: 5.5,
	}, {
		Time: t0.Add(time.Second), Requester: "cli", Scope: "tree 7@1", PID: 7, StartTicks: 1, Comm: "sleep",
		Outcome: "refused_protected", Reason: "pid 1's ancestor", DryRun: true,
	}}
	b, err := AppendActions([]byte("prefix\n"), events...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "prefix\n") {
		t.Fatalf("AppendActions did not append: %q", b)
	}
	ps := decode(t, b[len("prefix\n"):])
	if len(ps) != 2 {
		t.Fatalf("%d lines, want 2", len(ps))
	}
	if want := map[string]string{"requester": "rule:grow", "outcome": "killed", "kind": "tmux", "session": "build"}; !reflect.DeepEqual(ps[0].tags, want) {
		t.Errorf("tags = %v, want %v", ps[0].tags, want)
	}
	want := map[string]any{"pid": int64(42), "start_ticks": int64(1234), "comm": "cc1", "cmdline": `cc1 -O2\nx.c`,
		"signals": "TERM,KILL", "scope": "session tmux:build", "dry_run": false, "rss_bytes": int64(1 << 30), "gone_seconds": 5.5}
	if !reflect.DeepEqual(ps[0].fields, want) {
		t.Errorf("fields =\n%v\nwant\n%v", ps[0].fields, want)
	}
	if !ps[0].time.Equal(t0) || !ps[1].time.Equal(t0.Add(time.Second)) {
		t.Errorf("times %v %v, want each event's own", ps[0].time, ps[1].time)
	}
	if _, ok := ps[1].tags["session"]; ok || ps[1].fields["reason"] != "pid 1's ancestor" || ps[1].fields["dry_run"] != true {
		t.Errorf("second event = %+v", ps[1])
	}
}

// An agent session carries its status, model and session id as strings
// (never the status as a tag: its counters stay one series) and its token
// figures as integers; what the transcript does not say is left out.
func TestWriteAgentSession(t *testing.T) {
	s := session.Session{Kind: session.KindAgent, Name: "claude/app",
		Attrs: map[string]string{session.AttrAgent: "claude", session.AttrStatus: "blocked", session.AttrModel: "claude-sonnet-4-5",
			session.AttrSessionID: "5f2c9a1e"},
		Totals: session.Totals{Totals: procwalk.Totals{Procs: 2}},
		Agent: &session.AgentState{Status: "blocked", StatusSince: t0.Add(-5 * time.Minute), ContextWindowTokens: 200000, ContextPercent: 91.5,
			Transcript: &session.Transcript{ContextUsedTokens: 183000, InputTokens: 120, OutputTokens: 9000, CacheReadTokens: 800000,
				CacheCreationTokens: 40000, Turns: 4, PendingTools: 1, LastActivity: t0.Add(-5 * time.Minute), Bytes: 123456, SkippedBytes: 65536}},
	}
	p := encode(t, func(w metricWriter) { writeSession(w, &s, 0, t0, SessionFields()) })[0]
	if want := map[string]string{"kind": "agent", "session": "claude/app", "agent": "claude"}; !reflect.DeepEqual(p.tags, want) {
		t.Errorf("tags = %v, want %v", p.tags, want)
	}
	want := map[string]any{"status": "blocked", "model": "claude-sonnet-4-5", "session_id": "5f2c9a1e", "status_seconds": int64(300),
		"context_used_tokens": int64(183000), "context_window_tokens": int64(200000), "context_percent": 91.5,
		"input_tokens": int64(120), "output_tokens": int64(9000), "cache_read_tokens": int64(800000), "cache_creation_tokens": int64(40000),
		"turns": int64(4), "pending_tools": int64(1), "last_activity_unix_seconds": t0.Add(-5 * time.Minute).Unix(),
		"transcript_bytes": int64(123456), "transcript_skipped_bytes": int64(65536), "transcript_malformed_lines": int64(0)}
	for k, v := range want {
		if !reflect.DeepEqual(p.fields[k], v) {
			t.Errorf("%s = %#v, want %#v", k, p.fields[k], v)
		}
	}
	s.Agent = &session.AgentState{Status: "idle", StatusSince: t0}
	s.Attrs = map[string]string{session.AttrAgent: "aider", session.AttrStatus: "idle"}
	p = encode(t, func(w metricWriter) { writeSession(w, &s, 0, t0, SessionFields()) })[0]
	for _, absent := range []string{"model", "session_id", "context_percent", "input_tokens", "turns", "transcript_skipped_bytes"} {
		if v, ok := p.fields[absent]; ok {
			t.Errorf("no transcript, yet %s = %v", absent, v)
		}
	}
	if p.fields["status_seconds"] != int64(0) || p.fields["status"] != "idle" || p.tags["status"] != "" {
		t.Errorf("fields %v tags %v", p.fields, p.tags)
	}
}

// An agent's status is also a state set, as kube-state-metrics writes a
// pod's phase: a procwalk_agent_status line per status, 1 for the agent's
// own and 0 for the others, so that every (agent, status) series is
// written at every gather.
func TestWriteAgentStatus(t *testing.T) {
	s := session.Session{Kind: session.KindAgent, Name: "claude/app", Attrs: map[string]string{session.AttrAgent: "claude"},
		Agent: &session.AgentState{Status: session.AgentBlocked}}
	ps := encode(t, func(w metricWriter) { writeAgentStatus(w, &s, t0) })
	if len(ps) != len(session.AgentStatuses()) {
		t.Fatalf("%d lines, want one per status: %v", len(ps), ps)
	}
	for i, p := range ps {
		status := session.AgentStatuses()[i]
		want := int64(0)
		if status == session.AgentBlocked {
			want = 1
		}
		wantTags := map[string]string{"kind": "agent", "session": "claude/app", "agent": "claude", "status": status}
		if p.measurement != MeasurementAgent || !reflect.DeepEqual(p.tags, wantTags) || !reflect.DeepEqual(p.fields, map[string]any{"value": want}) || !p.time.Equal(t0) {
			t.Errorf("line %d: %+v, want %s tags %v value=%d", i, p, MeasurementAgent, wantTags, want)
		}
	}
}

// TestSelfLineIsSelfFields: the compiled-in input's procwalk line holds the
// fields of SelfFields (plugin/README.md's table), each of its type and
// added as its kind (a string untyped), and no other; source_note only
// when there is a note.
func TestSelfLineIsSelfFields(t *testing.T) {
	in := &Input{Proc: fixtureProc, Passwd: "testdata/passwd"}
	if err := in.Init(); err != nil {
		t.Fatal(err)
	}
	var acc fakeAcc
	if err := in.Gather(&acc); err != nil {
		t.Fatal(err)
	}
	var self map[string]any
	for _, p := range acc.points {
		if p.measurement == MeasurementSelf {
			self = maps.Clone(p.fields)
		}
	}
	if self == nil {
		t.Fatal("no procwalk line")
	}
	for _, f := range SelfFields() {
		v, ok := self[f.Name]
		if !ok {
			if f.Name != "source_note" {
				t.Errorf("the procwalk line has no %s", f.Name)
			}
			continue
		}
		delete(self, f.Name)
		typ := fmt.Sprintf("%T", v)
		if want := map[string]string{"int": "int64", "float": "float64", "bool": "bool", "string": "string"}[f.Type]; typ != want {
			t.Errorf("%s is a %s, want %s (%s)", f.Name, typ, want, f.Type)
		}
		kind := "untyped"
		if f.Kind != 0 {
			kind = f.Kind.String()
		}
		if got := acc.kinds[MeasurementSelf+" "+f.Name]; got != kind {
			t.Errorf("%s added as %s, want %s", f.Name, got, kind)
		}
	}
	for name := range self {
		t.Errorf("the procwalk line has %s, which SelfFields (plugin/README.md's table) lacks", name)
	}
}
