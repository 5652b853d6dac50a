//go:build linux

// Package rules holds example Lua rules; this test runs the tutorial rule
// against the Lua runtime's fixture /proc.
package rules

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
)

const fixture = "../../scripting/testdata/"

// emitted records what the rule emits.
type emitted struct{ lines []string }

func (e *emitted) Emit(m string, tags map[string]string, fields map[string]any, _ time.Time) error {
	e.lines = append(e.lines, fmt.Sprintf("%s %s/%s %v", m, tags["kind"], tags["session"], fields))
	return nil
}

// killer records kills; it signals nothing.
type killer struct{ calls []string }

func (k *killer) Kill(_ context.Context, scope kill.Scope, opts scripting.KillOptions) (*kill.Report, error) {
	k.calls = append(k.calls, fmt.Sprintf("%s dry=%v", scope, opts.DryRun))
	return &kill.Report{Scope: scope.String(), DryRun: opts.DryRun, Outcomes: []kill.Outcome{{Result: kill.ResultDryRun}}}, nil
}

func TestCPUHog(t *testing.T) {
	src, err := os.ReadFile("cpu-hog.lua")
	if err != nil {
		t.Fatal(err)
	}
	script, err := scripting.Compile("cpu-hog.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := procwalk.NewFS(fixture + "proc")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.AllFields)
	if err != nil {
		t.Fatal(err)
	}
	// cc1 in tmux session build is busy: 190 % of a CPU.
	snap.Process(121).Rates = procwalk.Rates{Measured: true, CPUPercent: 190}
	panes, err := os.ReadFile(fixture + "tmux.txt")
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		Kinds:      []string{session.KindTmux},
		Tmux:       session.TmuxConfig{Sockets: []string{"fixture"}, ListPanes: func(string) ([]byte, error) { return panes, nil }},
		CgroupRoot: fixture + "cgroup",
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := g.Group(snap)

	var logs bytes.Buffer
	out, k := &emitted{}, &killer{}
	rt := scripting.New(scripting.Config{
		Emitter: out, Killer: k, DryRun: true, Mode: "watch",
		Logger: slogTo(&logs), Args: []string{"percent=150", "ticks=2", "kill=1"},
	})
	defer rt.Close()
	in := scripting.Input{Snapshot: snap, Sessions: func() ([]session.Session, error) { return sessions, nil }}
	for tick := 1; tick <= 3; tick++ {
		if err := rt.Run(context.Background(), script, in); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
	}
	// A metric per tick for the sessions with a CPU rate; one alert at
	// tick 2 (held for ticks=2), none at tick 3 (same episode).
	want := []string{
		"session_cpu tmux/build map[percent:190 procs:4]",
		"session_cpu tmux/build map[percent:190 procs:4]",
		"procwalk_alert tmux/build map[comm:cc1 message:cpu-hog: tmux:build used 190% CPU for 2 ticks; busiest: cc1 121 pid:121 threshold:150 value:190]",
		"session_cpu tmux/build map[percent:190 procs:4]",
	}
	if got := strings.Join(out.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("emitted\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if got := strings.Join(k.calls, "\n"); got != "process 121@180100 dry=true" {
		t.Errorf("kills %q", got)
	}
	if !strings.Contains(logs.String(), "cpu-hog: would stop cc1 121") {
		t.Errorf("logs:\n%s", logs.String())
	}

	// A bad argument ends the run with the rule's file and line.
	rt2 := scripting.New(scripting.Config{Args: []string{"percent=lots"}})
	defer rt2.Close()
	if err := rt2.Run(context.Background(), script, in); err == nil || !strings.Contains(err.Error(), "cpu-hog.lua:20: percent must be a number") {
		t.Errorf("percent=lots: %v", err)
	}
	rt3 := scripting.New(scripting.Config{Args: []string{"ticks=0"}})
	defer rt3.Close()
	if err := rt3.Run(context.Background(), script, in); err == nil || !strings.Contains(err.Error(), "cpu-hog.lua:24: ticks must be a whole number >= 1, got 0") {
		t.Errorf("ticks=0: %v", err)
	}
}

func slogTo(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// agent-watch alerts once per episode: when an agent has been blocked
// longer than blocked_minutes, when its context passes context_percent, and
// when its turn ended on a failed model call.
func TestAgentWatch(t *testing.T) {
	src, err := os.ReadFile("agent-watch.lua")
	if err != nil {
		t.Fatal(err)
	}
	script, err := scripting.Compile("agent-watch.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700864000, 0)
	agent := func(name, status string, since time.Duration, ctx float64) session.Session {
		a := &session.AgentState{Status: status, StatusSince: now.Add(-since), ContextWindowTokens: 200000, ContextPercent: ctx,
			Transcript: &session.Transcript{Model: "claude-opus-4-1", ContextUsedTokens: int64(ctx * 2000)}}
		return session.Session{Kind: session.KindAgent, Name: name, Agent: a,
			Attrs: map[string]string{session.AttrStatus: status, session.AttrModel: "claude-opus-4-1", session.AttrTmuxTarget: "work:1.0"}}
	}
	ticks := [][]session.Session{
		{agent("claude/app", "blocked", 11*time.Minute, 50), agent("codex/api", "working", time.Minute, 95)},
		{agent("claude/app", "blocked", 12*time.Minute, 50), agent("codex/api", "working", time.Minute, 96)},
		{agent("claude/app", "working", 0, 50), agent("codex/api", "idle", time.Minute, 20)},
		{agent("claude/app", "blocked", 2*time.Minute, 50), agent("codex/api", "idle", time.Minute, 91)},
		{agent("claude/app", "rate_limited", 0, 50), agent("codex/api", "idle", time.Minute, 91)},
		{agent("claude/app", "rate_limited", time.Minute, 50), agent("codex/api", "idle", time.Minute, 91)},
	}
	ticks[4][0].Attrs[session.AttrLastError], ticks[5][0].Attrs[session.AttrLastError] = "rate_limit", "rate_limit"
	var logs bytes.Buffer
	out := &emitted{}
	rt := scripting.New(scripting.Config{Emitter: out, Logger: slogTo(&logs), Mode: "watch", Args: []string{"blocked_minutes=10"}})
	defer rt.Close()
	snap := &procwalk.Snapshot{Time: now}
	for i, sessions := range ticks {
		in := scripting.Input{Snapshot: snap, Sessions: func() ([]session.Session, error) { return sessions, nil }}
		if err := rt.Run(context.Background(), script, in); err != nil {
			t.Fatalf("tick %d: %v", i+1, err)
		}
	}
	want := []string{
		"procwalk_alert agent/claude/app map[message:agent-watch: agent:claude/app in tmux work:1.0 has waited for you for 11 min threshold:600 value:660]",
		"procwalk_alert agent/codex/api map[message:agent-watch: agent:codex/api in tmux work:1.0 has used 95% of its context (claude-opus-4-1) threshold:90 value:95]",
		"procwalk_alert agent/codex/api map[message:agent-watch: agent:codex/api in tmux work:1.0 has used 91% of its context (claude-opus-4-1) threshold:90 value:91]",
		"procwalk_alert agent/claude/app map[message:agent-watch: agent:claude/app in tmux work:1.0 stopped: its last model call failed (rate_limit)]",
	}
	if got := strings.Join(out.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("emitted\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
