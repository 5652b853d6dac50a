//go:build linux

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agent_subagents_test.go: subagents are part of their agent. Layouts and
// line shapes: Claude Code 2.1.39's <session>/subagents/agent-<id>.jsonl
// whose lines are isSidechain with an agentId (marot/spotter
// test/fixtures/transcripts/4d5611e5-…/subagents), its .meta.json
// (daaain/claude-code-log test/test_data/minimal_showcase), the main
// file's Task tool use; older versions' agent-<hash>.jsonl beside the
// session file, and the SDK's <uuid>.jsonl of isSidechain lines naming the
// session (anthropics/claude-code issues; public transcript readers).

const taskSession = "4d5611e5-241a-462a-8d15-5122611a9569"

// taskConversation is a main transcript whose last turn started a
// subagent (the Task tool) that has not answered.
func taskConversation(at time.Time) []string {
	ts := func(s int) string { return at.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339Nano) }
	env := `"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/work/app","sessionId":"` + taskSession + `","version":"2.1.39","gitBranch":"main"`
	return []string{
		`{` + env + `,"type":"user","message":{"role":"user","content":"explore the renderer"},"uuid":"u1","timestamp":"` + ts(0) + `","permissionMode":"default"}`,
		`{` + env + `,"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_01Task","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01Task","name":"Task","input":{"description":"Explore renderer","prompt":"Read the renderer","subagent_type":"Explore"},"caller":{"type":"direct"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":20000,"cache_creation":{"ephemeral_5m_input_tokens":500,"ephemeral_1h_input_tokens":0},"output_tokens":90,"service_tier":"standard"}},"uuid":"a1","timestamp":"` + ts(2) + `"}`,
	}
}

// subagentLines are a subagent's: its prompt and n model calls.
func subagentLines(at time.Time, agentID string, n int) []string {
	ts := func(s int) string { return at.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339Nano) }
	env := `"isSidechain":true,"userType":"external","cwd":"/home/dev/work/app","sessionId":"` + taskSession + `","version":"2.1.39","gitBranch":"main","agentId":"` + agentID + `"`
	out := []string{`{"parentUuid":null,` + env + `,"type":"user","message":{"role":"user","content":"Read the renderer"},"uuid":"s0","timestamp":"` + ts(0) + `"}`}
	for i := range n {
		out = append(out, fmt.Sprintf(`{"parentUuid":"s%d",%s,"type":"assistant","message":{"model":"claude-haiku-4-5-20251001","id":"msg_sub_%s_%d","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_sub_%d","name":"Read","input":{"file_path":"/home/dev/work/app/r.go"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":7,"service_tier":"standard"}},"uuid":"s%d","timestamp":%q}`,
			i, env, agentID, i, i, i+1, ts(i+1)))
	}
	return out
}

// The three places subagents write: while one works the agent is working,
// its tokens count as the agent's and as its subagents', and it never
// becomes the agent's transcript, even as the newest file of the folder.
func TestAgentSubagents(t *testing.T) {
	for _, layout := range []string{"current", "older", "sdk"} {
		t.Run(layout, func(t *testing.T) {
			root, home := agentFixture(t)
			main := claudeFile(home, taskSession)
			t0 := agentNow.Add(-4 * time.Minute)
			writeTranscript(t, main, taskConversation(t0), t0.Add(2*time.Second))
			var sub string
			switch layout {
			case "current":
				sub = filepath.Join(filepath.Dir(main), taskSession, "subagents", "agent-a2898e3.jsonl")
				os.MkdirAll(filepath.Dir(sub), 0o755)
				os.WriteFile(strings.TrimSuffix(sub, ".jsonl")+".meta.json", []byte(`{"agentType":"Explore","description":"Explore renderer","toolUseId":"toolu_01Task"}`), 0o600)
			case "older":
				sub = filepath.Join(filepath.Dir(main), "agent-a2898e3.jsonl")
			case "sdk":
				sub = filepath.Join(filepath.Dir(main), "9b1c2d3e-4f50-4a6b-8c7d-0e1f2a3b4c5d.jsonl")
			}
			writeTranscript(t, sub, subagentLines(t0.Add(3*time.Second), "a2898e3", 2), t0.Add(5*time.Second))
			ag := newAgentGatherer(t, root, AgentStatusConfig{})
			a := agentOf(t, ag.gather(agentNow), "agent:claude/work/app")
			if a.Transcript == nil || a.Transcript.Path != main {
				t.Fatalf("transcript %+v, want the session's", a.Transcript)
			}
			// Four minutes after the Task began, the subagent wrote within
			// the turn timeout: working, not blocked.
			if a.Status != AgentWorking || a.Why != "a subagent it started is working" || a.Subagents != 1 {
				t.Errorf("status %s (%s), subagents %d", a.Status, a.Why, a.Subagents)
			}
			if a.SubagentTokens.InputTokens != 20 || a.SubagentTokens.CacheCreationTokens != 2000 || a.Tokens().InputTokens != 3+20 ||
				a.Tokens().OutputTokens != 90+14 || a.Transcript.InputTokens != 3 || a.Transcript.Model != "claude-opus-4-6" {
				t.Errorf("tokens %+v, subagents' %+v, transcript's input %d, model %q", a.Tokens(), a.SubagentTokens, a.Transcript.InputTokens, a.Transcript.Model)
			}
			// It writes again: the agent works (its transcript grew), and
			// its counts follow.
			appendText(t, sub, subagentLines(t0.Add(3*time.Second), "a2898e3", 3)[3]+"\n")
			a = agentOf(t, ag.gather(agentNow.Add(time.Second)), "agent:claude/work/app")
			if a.Status != AgentWorking || !strings.Contains(a.Why, "a subagent's transcript grew") || a.SubagentsWorking != 1 || a.SubagentTokens.InputTokens != 30 {
				t.Errorf("after it wrote: %s (%s), working %d, subagents' input %d", a.Status, a.Why, a.SubagentsWorking, a.SubagentTokens.InputTokens)
			}
			// Quiet past the turn timeout with the Task unanswered: blocked.
			a = agentOf(t, ag.gather(agentNow.Add(15*time.Minute)), "agent:claude/work/app")
			if a.Status != AgentBlocked || a.Tokens().InputTokens != 33 {
				t.Errorf("quiet: %s (%s), input %d", a.Status, a.Why, a.Tokens().InputTokens)
			}
		})
	}
}
