//go:build linux

package scripting

import (
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk/session"
)

// An agent session's status and transcript strings, as s.agent, and its
// figures, being session metrics, as s.NAME; nil for other kinds and for
// what the transcript does not say.
func TestSessionAgent(t *testing.T) {
	w := newWorld(t)
	w.in.Sessions = withAgentState(w.in.Sessions, "agent:claude/myproj", &session.AgentState{Status: "blocked",
		Why: "a tool use awaits its result, and nothing runs", StatusSince: fixtureTime.Add(-7 * time.Minute),
		ContextWindowTokens: 200000, ContextPercent: 92.5,
		Transcript: &session.Transcript{Model: "claude-opus-4-1", ContextUsedTokens: 185000, OutputTokens: 1200, Turns: 3, PendingTools: 1}})
	got := w.eval(t, `local a = pw.session("agent:claude/myproj").agent
local s = pw.session("agent:claude/myproj")
print(a.status, a.model, s.status_seconds, s.context_percent, s.context_used_tokens, s.output_tokens, s.turns, s.pending_tools, a.session_id, a.why, a.status_seconds)
print(pw.session("tmux:work").agent, nil)
local s, tmux = pw.session("agent:claude/myproj"), pw.session("tmux:work")
print(s.context_percent, s.turns, tmux.context_percent)`)
	if want := "blocked\tclaude-opus-4-1\t420\t92.5\t185000\t1200\t3\t1\tnil\ta tool use awaits its result, and nothing runs\tnil\nnil\tnil\n92.5\t3\tnil"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// The agents report with a transcript: blocked for 7 minutes, its model
// whole and context use, the line wrapped to fit 80 columns.
func TestAgentsReportStatus(t *testing.T) {
	w := newWorld(t)
	w.in.Sessions = withAgentState(w.in.Sessions, "agent:claude/myproj", &session.AgentState{Status: "blocked",
		StatusSince: fixtureTime.Add(-7 * time.Minute), ContextWindowTokens: 200000, ContextPercent: 91.6,
		Transcript: &session.Transcript{Model: "claude-sonnet-4-5-20250929", ContextUsedTokens: 183200}})
	got := runBundled(t, w, "agents")
	if want := "\n         blocked 7 min, running 9 days 23 hr, model claude-sonnet-4-5-20250929,\n         context 92%, tmux work:0.0\n"; !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant the lines\n%s", got, want)
	}
}

// withAgentState gives the session ref of group's sessions the agent state
// a transcript would (its status and model attributes too).
func withAgentState(group func() ([]session.Session, error), ref string, a *session.AgentState) func() ([]session.Session, error) {
	return func() ([]session.Session, error) {
		sessions, err := group()
		for i := range sessions {
			if s := &sessions[i]; s.Ref() == ref {
				s.Attrs[session.AttrStatus], s.Agent = a.Status, a
				if a.Transcript != nil {
					s.Attrs[session.AttrModel] = a.Transcript.Model
				}
			}
		}
		return sessions, err
	}
}
