//go:build linux

package main

import (
	"encoding/json"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// An agent's INFO starts with its status (for how long, when blocked or
// ended), model and context use; its JSON has its status and strings in
// "agent", its numbers in "metrics".
func TestAgentInfoAndJSON(t *testing.T) {
	now := time.Unix(1700003600, 0)
	s := session.Session{Kind: session.KindAgent, Name: "claude/app",
		Attrs: map[string]string{session.AttrStatus: "blocked", session.AttrModel: "claude-opus-4-1", session.AttrCwd: "/home/dev/app",
			session.AttrElapsed: "2 hr", session.AttrSessionID: "s-1"},
		Agent: &session.AgentState{Status: "blocked", StatusSince: now.Add(-3 * time.Minute), StatusFor: 3 * time.Minute, Why: "a tool use awaits its result, and nothing runs",
			ContextWindowTokens: 200000, ContextPercent: 90.4, Binding: session.BindSessionRecord,
			Transcript: &session.Transcript{ContextUsedTokens: 180800, OutputTokens: 12, Turns: 2, PendingTools: 1, LastActivity: now.Add(-3 * time.Minute),
				Bytes: 9000000, SkippedBytes: 600000}},
	}
	if got, want := s.Info(), "blocked 3 min, claude-opus-4-1, ctx 90%, /home/dev/app, 2 hr"; got != want {
		t.Errorf("INFO %q, want %q", got, want)
	}
	b, err := json.Marshal(render.NewJSONSession(now, 0, &s))
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Agent   map[string]any `json:"agent"`
		Metrics map[string]any `json:"metrics"`
		Members []any          `json:"members"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "blocked", "why": "a tool use awaits its result, and nothing runs", "status_since": "2023-11-14T23:10:20Z",
		"model": "claude-opus-4-1", "session_id": "s-1", "last_activity": "2023-11-14T23:10:20Z", "binding": "session record"}
	for k, v := range want {
		if j.Agent[k] != v {
			t.Errorf("agent.%s = %#v, want %#v", k, j.Agent[k], v)
		}
	}
	if len(j.Agent) != len(want) || j.Members == nil {
		t.Errorf("agent %v, members %v (an ended agent's row has [] members)", j.Agent, j.Members)
	}
	wantMetrics := map[string]any{"status_seconds": 180.0,
		"context_used_tokens": 180800.0, "context_window_tokens": 200000.0, "context_percent": 90.4, "input_tokens": 0.0, "output_tokens": 12.0,
		"cache_read_tokens": 0.0, "cache_creation_tokens": 0.0, "turns": 2.0, "pending_tools": 1.0, "last_activity_unix_seconds": 1700003420.0,
		"transcript_bytes": 9000000.0, "transcript_skipped_bytes": 600000.0, "transcript_malformed_lines": 0.0,
		"subagent_input_tokens": 0.0, "subagent_output_tokens": 0.0, "subagent_cache_read_tokens": 0.0, "subagent_cache_creation_tokens": 0.0,
		"subagents": 0.0, "subagents_working": 0.0, "cache_creation_5m_tokens": 0.0, "cache_creation_1h_tokens": 0.0,
		"compactions": 0.0, "api_errors": 0.0}
	for k, v := range wantMetrics {
		if j.Metrics[k] != v {
			t.Errorf("metrics.%s = %#v, want %#v", k, j.Metrics[k], v)
		}
	}
}

// Bad agent options are usage errors that say what was wrong.
func TestAgentFlagErrors(t *testing.T) {
	clearEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent-transcript", "goose=claude:/x"}, `--agent-transcript: bad session config: agent transcript "goose=claude:/x": no agent "goose"`},
		{[]string{"--agent-transcript", "claude=yaml:/x"}, `unknown parser "yaml": parsers are claude, codex`},
		{[]string{"--agent-context-window", "claude=lots"}, `--agent-context-window: bad session config: context window "claude=lots": want FAMILY=TOKENS`},
		{[]string{"--agent-first-read", "1k"}, `--agent-first-read "1k": 1k is less than 64 KiB`},
		{[]string{"--agent-first-read", "lots"}, `--agent-first-read "lots": bad size "lots"`},
		{[]string{"--agent-busy-cpu", "-1"}, `--agent-busy-cpu -1: must not be negative`},
		{[]string{"--agent-turn-timeout", "-1s"}, `--agent-turn-timeout -1s: must not be negative`},
		{[]string{"--agent-prices", "/nonexistent/prices.conf"}, `--agent-prices "/nonexistent/prices.conf": bad price table: /nonexistent/prices.conf: no such file or directory`},
	} {
		r := cli(t, fixture(append([]string{"sessions", "--no-rates", "--kind", "agent"}, tt.args...)...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if r := cli(t, "telegraf", "--proc", fixtureProc, "--agent-active-within", "soon"); r.code != exitUsage || !strings.Contains(r.stderr, `--agent-active-within "soon": want a duration`) {
		t.Errorf("telegraf --agent-active-within soon: exit %d, %q", r.code, r.stderr)
	}
}

// A list of agents alone keeps the agents' stable order (Group's: each
// agent keeps its place, new ones last), not the biggest first; --sort
// still sorts by a column.
func TestAgentListKeepsStableOrder(t *testing.T) {
	names := func(out string) []string {
		var n []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "agent" {
				n = append(n, f[1])
			}
		}
		return n
	}
	stable := cli(t, sessionsFixture("sessions", "--kind", "agent", "--no-rates", "--wide")...)
	byRSS := cli(t, sessionsFixture("sessions", "--kind", "agent", "--no-rates", "--wide", "--sort", "rss")...)
	if stable.code != 0 || byRSS.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", stable.code, byRSS.code, stable.stderr, byRSS.stderr)
	}
	fs, err := procwalk.NewFS(sessionsProc)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.FieldCmdline | procwalk.FieldCwd | procwalk.FieldStatus)
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindAgent}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sessions, _ := g.Group(snap)
	for _, s := range sessions {
		want = append(want, s.Name)
	}
	if got := names(stable.stdout); len(want) < 3 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sessions --kind agent: %v, want Group's order %v", got, want)
	}
	if got := names(byRSS.stdout); strings.Join(got, " ") == strings.Join(want, " ") {
		t.Errorf("--sort rss kept Group's order %v: the fixture no longer tells them apart", got)
	}
}
