//go:build linux

package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agent_lookup_test.go: where an agent's transcripts are. Claude Code's
// folder names follow its sanitizePath (JavaScript's
// replace(/[^a-zA-Z0-9]/g, "-") over UTF-16 code units; past 200, the first
// 200 and '-' and a hash), as Digital-Process-Tools/claude-remember#157
// and Michaelliv/claude-quest#15 read it from the shipped CLI;
// CLAUDE_CONFIG_DIR and CODEX_HOME as Claude Code and Codex document them;
// Codex's session_meta with base_instructions of tens of KiB as its
// rollouts hold them (daaain/claude-code-log test data, public readers'
// fixtures). Transcript lines: testdata/transcripts/README.md.

func TestClaudeProjectDir(t *testing.T) {
	long := "/home/dev/" + strings.Repeat("deep/", 45) + "app" // 238 characters
	for _, tc := range []struct {
		cwd, want string
		long      bool
	}{
		{"/home/dev/my_app.v2", "-home-dev-my-app-v2", false},
		{"/home/dev/café 🚀/app", "-home-dev-caf-----app", false}, // é one code unit, 🚀 two
		{"/srv/日本語", "-srv----", false},
		{long, strings.ReplaceAll(long, "/", "-")[:200] + "-", true},
	} {
		got, isLong := claudeProjectDir(tc.cwd)
		if got != tc.want || isLong != tc.long {
			t.Errorf("%q: %q %v, want %q %v", tc.cwd, got, isLong, tc.want, tc.long)
		}
	}
}

// setCwd points a fixture process's cwd at dir.
func setCwd(t *testing.T, root, pid, dir string) {
	t.Helper()
	link := filepath.Join(root, pid, "cwd")
	os.Remove(link)
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
}

func setEnviron(t *testing.T, root, pid string, kv ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, pid, "environ"), []byte(strings.Join(kv, "\x00")+"\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A working directory with characters that are not ASCII letters or digits.
func TestAgentLookupNonASCII(t *testing.T) {
	root, home := agentFixture(t)
	setCwd(t, root, "105", "/home/dev/café 🚀/app")
	path := filepath.Join(home, ".claude", "projects", "-home-dev-caf-----app", "s.jsonl")
	writeTranscript(t, path, claudeConversation(agentNow.Add(-5*time.Minute)), agentNow.Add(-5*time.Minute))
	a := agentOf(t, newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow), "agent:claude/café 🚀/app")
	if a.Transcript == nil || a.Transcript.Path != path {
		t.Errorf("transcript %+v", a.Transcript)
	}
}

// A working directory whose folder name is longer than 200: found by its
// prefix; of two folders sharing it (two long paths), the one whose files
// name the agent's working directory.
func TestAgentLookupLongPath(t *testing.T) {
	root, home := agentFixture(t)
	cwd := "/home/dev/" + strings.Repeat("deep/", 45) + "app"
	other := "/home/dev/" + strings.Repeat("deep/", 45) + "api"
	setCwd(t, root, "105", cwd)
	prefix := strings.ReplaceAll(cwd, "/", "-")[:200] + "-"
	projects := filepath.Join(home, ".claude", "projects")
	line := func(dir string) string {
		return strings.Replace(claudeUserLine(agentNow.Add(-time.Minute), "go"), `"cwd":"/home/dev/work/app"`, `"cwd":"`+dir+`"`, 1)
	}
	ours := filepath.Join(projects, prefix+"1l5ypxm", "a.jsonl")
	theirs := filepath.Join(projects, prefix+"k8w2q0", "b.jsonl")
	writeTranscript(t, ours, []string{line(cwd)}, agentNow.Add(-time.Minute))
	writeTranscript(t, theirs, []string{line(other)}, agentNow.Add(-30*time.Second)) // newer, of the other path
	a := agentOf(t, newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow), "agent:claude/deep/app")
	if a.Transcript == nil || a.Transcript.Path != ours {
		t.Errorf("transcript %+v, want %s", a.Transcript, ours)
	}
}

// CLAUDE_CONFIG_DIR and CODEX_HOME of the agent's environment; codex -C DIR,
// whose rollouts name DIR, not the process's working directory.
func TestAgentLookupConfigDirsAndCodexCd(t *testing.T) {
	root, home := agentFixture(t)
	conf, codexHome := filepath.Join(home, "claude-work"), filepath.Join(home, "codex-work")
	setEnviron(t, root, "105", "HOME="+home, "CLAUDE_CONFIG_DIR="+conf)
	setEnviron(t, root, "206", "HOME="+home, "CODEX_HOME="+codexHome)
	if err := os.WriteFile(filepath.Join(root, "206", "cmdline"), []byte("node\x00/usr/local/lib/node_modules/@openai/codex/bin/codex.js\x00-C\x00../other/proj\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(conf, "projects", "-home-dev-work-app", "s.jsonl")
	writeTranscript(t, claude, claudeConversation(agentNow.Add(-5*time.Minute)), agentNow.Add(-5*time.Minute))
	// A default-place transcript is no longer the agent's.
	writeTranscript(t, claudeFile(home, "default"), claudeConversation(agentNow.Add(-time.Minute)), agentNow.Add(-time.Minute))
	codex := filepath.Join(codexHome, "sessions", agentNow.UTC().Format("2006/01/02"), "rollout-2023-11-14T22-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
	writeTranscript(t, codex, codexLines(agentNow.Add(-5*time.Minute), "/home/dev/work/other/proj"), agentNow.Add(-5*time.Minute))
	sessions := newAgentGatherer(t, root, AgentStatusConfig{}).gather(agentNow)
	if a := agentOf(t, sessions, "agent:claude/work/app"); a.Transcript == nil || a.Transcript.Path != claude {
		t.Errorf("claude: %+v", a.Transcript)
	}
	if a := agentOf(t, sessions, "agent:codex/work/app"); a.Transcript == nil || a.Transcript.Path != codex {
		t.Errorf("codex -C: %+v", a.Transcript)
	}
}

// Codex's first line carries base_instructions of tens of KiB: the file is
// its agent's, and its first line is read once, not at every gather.
func TestAgentLookupLongFirstLine(t *testing.T) {
	root, home := agentFixture(t)
	lines := codexLines(agentNow.Add(-5*time.Minute), "/home/dev/work/app")
	lines[0] = strings.Replace(lines[0], `"instructions":null`, `"base_instructions":{"text":"`+strings.Repeat("You are Codex, a coding agent. ", 3200)+`"}`, 1)
	if len(lines[0]) < 96<<10 {
		t.Fatalf("first line %d bytes", len(lines[0]))
	}
	path := filepath.Join(home, ".codex", "sessions", agentNow.UTC().Format("2006/01/02"), "rollout-2023-11-14T22-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
	writeTranscript(t, path, lines, agentNow.Add(-5*time.Minute))
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	opens := 0
	ag.g.kind(KindAgent).(*agentKind).tracker.beforeOpen = func(p string) {
		if p == path {
			opens++
		}
	}
	for i := range 3 {
		a := agentOf(t, ag.gather(agentNow.Add(time.Duration(i)*time.Second)), "agent:codex/work/app")
		if a.Transcript == nil || a.Transcript.Path != path || a.Transcript.Malformed != 0 || a.Transcript.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" {
			t.Fatalf("gather %d: transcript %+v", i, a.Transcript)
		}
	}
	if opens != 1+3 { // its first line once, its reads three times
		t.Errorf("%d opens in 3 gathers, want 4", opens)
	}
}
