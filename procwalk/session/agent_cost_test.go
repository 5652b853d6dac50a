//go:build linux

package session

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// agent_cost_test.go: what dashboards of agents also want, from the
// fixtures of testdata/transcripts (README there: Claude Code 2.1's
// title, permission-mode and usage shapes; Codex's token_count with
// reasoning tokens and rate limits), and the cost of an agent's tokens by
// a price table its user supplies.

// The session's title (custom-title over ai-title over summary), branch,
// version and permission mode as last stated; cache writes split by their
// lifetime; server tool requests; tokens by model.
func TestClaudeSessionFields(t *testing.T) {
	tr := readFixture(t, "claude-2.1-fields.jsonl", "claude", 0)
	if tr.Title != "lexer v2" || tr.GitBranch != "lexer-v2" || tr.Version != "2.1.42" || tr.PermissionMode != "acceptEdits" {
		t.Errorf("title %q, branch %q, version %q, mode %q", tr.Title, tr.GitBranch, tr.Version, tr.PermissionMode)
	}
	if tr.CacheCreationTokens != 60000 || tr.CacheCreation5mTokens != 20000 || tr.CacheCreation1hTokens != 40000 ||
		tr.WebSearchRequests != 3 || tr.WebFetchRequests != 1 || !tr.HaveServerTools || tr.HaveReasoning {
		t.Errorf("tokens %+v", tr.Tokens())
	}
	want := []ModelTokens{
		{"claude-opus-4-5-20251101", TokenCounts{InputTokens: 1000, OutputTokens: 2000, CacheReadTokens: 100000, CacheCreationTokens: 20000, CacheCreation5mTokens: 20000, WebSearchRequests: 3, WebFetchRequests: 1}},
		{"claude-haiku-4-5-20251001", TokenCounts{InputTokens: 500, OutputTokens: 1000, CacheReadTokens: 200000, CacheCreationTokens: 40000, CacheCreation1hTokens: 40000}},
	}
	if !slices.Equal(tr.ByModel, want) {
		t.Errorf("by model %+v, want %+v", tr.ByModel, want)
	}
	// Before the custom title and the second turn: the ai-title, the first
	// branch and mode.
	tr = readFixture(t, "claude-2.1-fields.jsonl", "claude", 5)
	if tr.Title != "Refactor the lexer" || tr.GitBranch != "main" || tr.PermissionMode != "default" {
		t.Errorf("first turn: title %q, branch %q, mode %q", tr.Title, tr.GitBranch, tr.PermissionMode)
	}
	if tr := readFixture(t, "claude-2.1-fields.jsonl", "claude", 2); tr.Title != "Lexer refactor" {
		t.Errorf("summary only: title %q", tr.Title)
	}
}

// Codex's reasoning tokens and rate limits; its tokens go to the model of
// their turn.
func TestCodexFields(t *testing.T) {
	tr := readFixture(t, "codex-context-exceeded.jsonl", "codex", 5)
	if !tr.HaveReasoning || tr.ReasoningTokens != 1200 || len(tr.ByModel) != 1 || tr.ByModel[0].Model != "gpt-5.3-codex" || tr.ByModel[0].InputTokens != 30000 {
		t.Errorf("reasoning %v %d, by model %+v", tr.HaveReasoning, tr.ReasoningTokens, tr.ByModel)
	}
}

const examplePrices = `# USD per million tokens, as read 2026-11-28 (see README, "Cost")
# FAMILY        INPUT  OUTPUT  CACHE-READ  CACHE-WRITE-5M  CACHE-WRITE-1H
claude-opus-4-5   5    25      0.50        6.25            10
claude-haiku-4-5  1     5      0.10        1.25             2
claude            3    15      0.30        3.75             6   # any other Claude
gpt-5             1.25 10      0.125       0
`

func TestPriceTable(t *testing.T) {
	p, err := ParsePriceTable("prices.conf", []byte(examplePrices))
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := p.price("claude-opus-4-5-20251101"); !ok || pr.Input != 5 || pr.CacheWrite1h != 10 || !pr.Has1h {
		t.Errorf("opus: %+v %v", pr, ok)
	}
	if pr, ok := p.price("claude-sonnet-4-5-20250929"); !ok || pr.Input != 3 {
		t.Errorf("sonnet, by the family claude: %+v %v", pr, ok)
	}
	if _, ok := p.price("gemini-2.5-pro"); ok {
		t.Error("gemini priced")
	}
	for _, bad := range []struct{ table, want string }{
		{"claude 3 15 0.3\n", "prices.conf line 1 \"claude 3 15 0.3\": 4 fields"},
		{"claude 3 15 0.3 3.75 6 9\n", "7 fields"},
		{"claude 3 fifteen 0.3 3.75\n", `"fifteen" is not a price`},
		{"claude 3 15 0.3 -1\n", `"-1" is not a price`},
		{"claude 3 15 0.3 3.75\nclaude 1 1 1 1\n", "line 2 \"claude 1 1 1 1\": the family is listed twice"},
		{"# nothing\n\n", "lists no model family"},
	} {
		if _, err := ParsePriceTable("prices.conf", []byte(bad.table)); !errors.Is(err, ErrBadPrices) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.table, err, bad.want)
		}
	}
	if _, err := LoadPriceTable(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrBadPrices) {
		t.Errorf("a missing file: %v", err)
	}
}

// cost_usd: each model's tokens at its family's prices, the subagents'
// included; absent without a price for a model the agent ran, which a note
// names.
func TestAgentCost(t *testing.T) {
	root, home := agentFixture(t)
	path := claudeFile(home, fixtureSession)
	writeTranscript(t, path, fixtureLines(t, "claude-2.1-fields.jsonl", 0), agentNow.Add(-time.Minute))
	// A subagent on Haiku: 10 input and 1000 5-minute cache writes.
	sub := filepath.Join(filepath.Dir(path), fixtureSession, "subagents", "agent-a1.jsonl")
	os.MkdirAll(filepath.Dir(sub), 0o755)
	writeTranscript(t, sub, []string{`{"isSidechain":true,"sessionId":"` + fixtureSession + `","agentId":"a1","type":"assistant","timestamp":"2026-02-12T17:00:30Z","message":{"id":"msg_sub","model":"claude-haiku-4-5-20251001","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":0}}}`}, agentNow.Add(-time.Minute))
	prices, err := ParsePriceTable("prices.conf", []byte(examplePrices))
	if err != nil {
		t.Fatal(err)
	}
	sessions, notes := newAgentGatherer(t, root, AgentStatusConfig{Prices: prices}).gatherWithin(agentNow)
	a := agentOf(t, sessions, "agent:claude/work/app")
	// Opus: 1000×5 + 2000×25 + 100000×0.5 + 20000×6.25; Haiku: 500×1 +
	// 1000×5 + 200000×0.1 + 40000×2 (one-hour writes); the subagent's Haiku:
	// 10×1 + 1000×1.25. Per million.
	want := (1000*5 + 2000*25 + 100000*0.5 + 20000*6.25 + 500*1 + 1000*5 + 200000*0.1 + 40000*2 + 10*1 + 1000*1.25) / 1e6
	if !a.HaveCost || math.Abs(a.CostUSD-want) > 1e-12 || len(notes) > 1 {
		t.Errorf("cost %v %v, want %v; notes %q", a.CostUSD, a.HaveCost, want, notes)
	}
	s := find(t, sessions, "agent:claude/work/app")
	for attr, v := range map[string]string{AttrTitle: "lexer v2", AttrGitBranch: "lexer-v2", AttrAgentVersion: "2.1.42", AttrPermissionMode: "acceptEdits"} {
		if s.Attrs[attr] != v {
			t.Errorf("attr %s = %q, want %q", attr, s.Attrs[attr], v)
		}
	}
	// Without a price for Haiku, or for its one-hour cache writes: no cost.
	for _, table := range []string{"claude-opus-4-5 5 25 0.5 6.25 10\n", strings.Replace(examplePrices, "1.25             2", "1.25", 1)} {
		prices, err := ParsePriceTable("prices.conf", []byte(table))
		if err != nil {
			t.Fatal(err)
		}
		sessions, notes := newAgentGatherer(t, root, AgentStatusConfig{Prices: prices}).gatherWithin(agentNow)
		a := agentOf(t, sessions, "agent:claude/work/app")
		if a.HaveCost || !slices.Equal(a.Unpriced, []string{"claude-haiku-4-5-20251001"}) ||
			!hasNote(notes, "agent claude/work/app: no price for claude-haiku-4-5-20251001 in prices.conf: cost_usd left out") {
			t.Errorf("table %q: cost %v %v, unpriced %q, notes %q", table, a.CostUSD, a.HaveCost, a.Unpriced, notes)
		}
	}
}
