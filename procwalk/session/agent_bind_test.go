//go:build linux

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// agent_bind_test.go: which transcript is whose. The processes are the
// session fixture's (testdata/sessions/README.md) with clones of its
// claude (105); the transcripts are claudeConversation's and codexLines'
// (Claude Code's and Codex's line shapes: testdata/transcripts/README.md);
// Claude Code's record of its process, <config>/sessions/<pid>.json, is
// {"pid","sessionId","cwd","startedAt"} as sverrirsig/claude-control#10
// and `claude agents --json` (2.1.210, in public tools' fixtures) show it;
// CLAUDE_CODE_SESSION_ID in a tool's environment is anthropics/claude-code
// 2.1.132's (issue #56879).

// fiveAgents adds four clones of the fixture's claude (105), all in
// ~/work/app, started a second apart after it: pids 105, 1001..1004.
func fiveAgents(t testing.TB) (root, home string, pids []string, ticks []int) {
	t.Helper()
	root, home = agentFixture(t)
	pids, ticks = []string{"105"}, []int{3000}
	for i := 1; i <= 4; i++ {
		pid, tick := strconv.Itoa(1000+i), 3000+100*i
		addClone(t, root, "105", pid, strconv.Itoa(tick))
		pids, ticks = append(pids, pid), append(ticks, tick)
	}
	return root, home, pids, ticks
}

// writeRecord writes Claude Code's record of process pid (started at tick
// in the fixture's clock) naming session id.
func writeRecord(t testing.TB, home, pid string, tick int, id string) {
	t.Helper()
	dir := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	startedMs := (1700000000*100 + int64(tick)) * 10
	b := fmt.Sprintf(`{"pid":%s,"sessionId":%q,"cwd":"/home/dev/work/app","startedAt":%d,"kind":"interactive","entrypoint":"cli"}`, pid, id, startedMs+420)
	if err := os.WriteFile(filepath.Join(dir, pid+".json"), []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sessionIDOf(k int) string { return fmt.Sprintf("5f2c9a1e-0000-4000-8000-00000000000%d", k) }

// bindings lists each agent's transcript file name and how it was bound.
func bindings(t *testing.T, sessions []Session, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		a := agentOf(t, sessions, "agent:"+n)
		got := a.Binding
		if a.Transcript != nil {
			got = filepath.Base(a.Transcript.Path) + " by " + got
		}
		out = append(out, got)
	}
	return out
}

var fiveNames = []string{"claude/work/app", "claude/work/app#2", "claude/work/app#3", "claude/work/app#4", "claude/work/app#5"}

// Five agents started one after another in one folder, each then writing
// its own transcript, the newest for the oldest agent: with Claude Code
// 2.1's records each gets its own, and keeps it while new files appear
// (the execd rotation of before); without any evidence none is guessed:
// each is ambiguous, the note names the files, none is read.
func TestAgentBindingFiveAgentsOneFolder(t *testing.T) {
	root, home, pids, ticks := fiveAgents(t)
	for k := range pids {
		// Written after all started, in reverse: the oldest agent's last.
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-time.Duration(k+1)*time.Minute))
	}
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	sessions, notes := ag.gatherWithin(agentNow)
	if got := bindings(t, sessions, fiveNames...); !slices.Equal(got, []string{BindAmbiguous, BindAmbiguous, BindAmbiguous, BindAmbiguous, BindAmbiguous}) {
		t.Errorf("without evidence: %q", got)
	}
	a := agentOf(t, sessions, "agent:claude/work/app")
	if len(a.Candidates) != 5 || a.Status != AgentIdle || !strings.Contains(a.Why, "ambiguous") {
		t.Errorf("candidates %q, status %s (%s)", a.Candidates, a.Status, a.Why)
	}
	if !hasNote(notes, "agent claude/work/app: its transcript is one of ", sessionIDOf(0)+".jsonl", "(5 agents share its folder") {
		t.Errorf("notes %q", notes)
	}

	for k, pid := range pids {
		writeRecord(t, home, pid, ticks[k], sessionIDOf(k))
	}
	want := make([]string, 5)
	for k := range want {
		want[k] = sessionIDOf(k) + ".jsonl by " + BindSessionRecord
	}
	sessions, notes = ag.gatherWithin(agentNow.Add(time.Second))
	if got := bindings(t, sessions, fiveNames...); !slices.Equal(got, want) || hasNote(notes, "ambiguous") {
		t.Errorf("with records: %q, want %q; notes %q", got, want, notes)
	}
	// New files appear in the folder (other sessions, a /clear whose
	// agent nothing names): every agent keeps its own.
	for i := range 3 {
		writeTranscript(t, claudeFile(home, fmt.Sprintf("new-%d", i)), []string{claudeUserLine(agentNow, "new")}, agentNow.Add(time.Duration(i+2)*time.Second))
		sessions, _ = ag.gatherWithin(agentNow.Add(time.Duration(i+2) * time.Second))
		if got := bindings(t, sessions, fiveNames...); !slices.Equal(got, want) {
			t.Errorf("after new file %d: %q, want %q", i, got, want)
		}
	}
}

// A record of a reused pid (another start) or another folder names no
// transcript of this agent.
func TestAgentBindingStaleRecord(t *testing.T) {
	root, home, pids, ticks := fiveAgents(t)
	for k := range 2 {
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-time.Minute))
	}
	writeRecord(t, home, pids[0], ticks[0]-6100, sessionIDOf(0)) // a minute and a second before its start
	writeRecord(t, home, pids[1], ticks[1], sessionIDOf(1))
	b, _ := os.ReadFile(filepath.Join(home, ".claude", "sessions", pids[1]+".json"))
	os.WriteFile(filepath.Join(home, ".claude", "sessions", pids[1]+".json"), []byte(strings.Replace(string(b), "/home/dev/work/app", "/srv/other", 1)), 0o600)
	sessions, _ := newAgentGatherer(t, root, AgentStatusConfig{}).gatherWithin(agentNow)
	if got := bindings(t, sessions, fiveNames[:2]...); !slices.Equal(got, []string{BindAmbiguous, BindAmbiguous}) {
		t.Errorf("stale records: %q", got)
	}
}

// Mixed versions in one folder: four agents are named by their records
// and go on writing their transcripts; a file created while they did is
// the fifth's, the only agent left that could have created it.
func TestAgentBindingElimination(t *testing.T) {
	root, home, pids, ticks := fiveAgents(t)
	created := agentNow.Add(30 * time.Minute) // the fifth's file, on the tests' clock
	later := agentNow.Add(time.Hour)          // written after every file below was created
	for k := range 4 {
		writeRecord(t, home, pids[k], ticks[k], sessionIDOf(k))
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), later)
	}
	fifth := claudeFile(home, "fifth-0000-4000-8000-000000000099")
	writeTranscript(t, fifth, claudeConversation(agentNow.Add(-10*time.Minute)), created)
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	sessions, _ := ag.gatherWithin(agentNow)
	want := []string{sessionIDOf(0) + ".jsonl by " + BindSessionRecord, sessionIDOf(1) + ".jsonl by " + BindSessionRecord,
		sessionIDOf(2) + ".jsonl by " + BindSessionRecord, sessionIDOf(3) + ".jsonl by " + BindSessionRecord,
		filepath.Base(fifth) + " by " + BindElimination}
	if got := bindings(t, sessions, fiveNames...); !slices.Equal(got, want) {
		t.Errorf("bindings %q, want %q", got, want)
	}
	// Had the first stopped writing its own when the file was created, it
	// could be its /clear's: then nothing says which.
	root, home, pids, ticks = fiveAgents(t)
	for k := range 4 {
		writeRecord(t, home, pids[k], ticks[k], sessionIDOf(k))
		mod := later
		if k == 0 {
			mod = agentNow
		}
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), mod)
	}
	writeTranscript(t, claudeFile(home, "fifth-0000-4000-8000-000000000099"), claudeConversation(agentNow.Add(-10*time.Minute)), created)
	sessions, _ = newAgentGatherer(t, root, AgentStatusConfig{}).gatherWithin(agentNow)
	if got := bindings(t, sessions, fiveNames[4]); got[0] != BindAmbiguous {
		t.Errorf("a file the first agent's /clear may have made: %q", got)
	}
}

// The session the command line names: claude --session-id ID, and
// claude --resume ID when that file was written since the agent started;
// codex -C DIR makes DIR the folder its rollouts name.
func TestAgentBindingCommandLine(t *testing.T) {
	root, home, pids, _ := fiveAgents(t)
	setCmdline := func(pid string, args ...string) {
		if err := os.WriteFile(filepath.Join(root, pid, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setCmdline(pids[0], "claude", "--session-id", sessionIDOf(0))
	setCmdline(pids[1], "claude", "--resume", sessionIDOf(1), "--model", "opus")
	setCmdline(pids[2], "claude", "-r", sessionIDOf(2)) // resumed, but not written since it started
	for k := range 3 {
		mod := agentNow.Add(-time.Minute)
		if k == 2 {
			mod = agentStart.Add(-time.Hour)
		}
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), mod)
	}
	os.RemoveAll(filepath.Join(root, pids[3]))
	os.RemoveAll(filepath.Join(root, pids[4]))
	sessions, _ := newAgentGatherer(t, root, AgentStatusConfig{}).gatherWithin(agentNow)
	want := []string{sessionIDOf(0) + ".jsonl by " + BindCommandLine, sessionIDOf(1) + ".jsonl by " + BindCommandLine, ""}
	if got := bindings(t, sessions, fiveNames[:3]...); !slices.Equal(got, want) {
		t.Errorf("bindings %q, want %q", got, want)
	}
	// The third has no file: both others' are taken, and its own was not
	// written since it started.
	if a := agentOf(t, sessions, "agent:"+fiveNames[2]); len(a.Candidates) != 0 || a.Transcript != nil {
		t.Errorf("third's candidates %q", a.Candidates)
	}
}

// CLAUDE_CODE_SESSION_ID of the tools Claude Code 2.1.132 runs names the
// session, and after /clear the new one: the youngest tool's.
func TestAgentBindingToolEnvironment(t *testing.T) {
	root, home, pids, ticks := fiveAgents(t)
	os.RemoveAll(filepath.Join(root, pids[4]))
	for k := range 4 {
		writeTranscript(t, claudeFile(home, sessionIDOf(k)), claudeConversation(agentNow.Add(-10*time.Minute)), agentNow.Add(-time.Minute))
	}
	// 106 is 105's child (node): its tool. A clone of it for 1001.
	tool := func(pid, parent, tick, id string) {
		addClone(t, root, "106", pid, tick)
		b, _ := os.ReadFile(filepath.Join(root, pid, "stat"))
		f := strings.Fields(string(b))
		f[3] = parent
		os.WriteFile(filepath.Join(root, pid, "stat"), []byte(strings.Join(f, " ")+"\n"), 0o644)
		os.WriteFile(filepath.Join(root, pid, "environ"), []byte("PATH=/usr/bin\x00CLAUDECODE=1\x00CLAUDE_CODE_SESSION_ID="+id+"\x00"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "106", "environ"), []byte("CLAUDECODE=1\x00CLAUDE_CODE_SESSION_ID="+sessionIDOf(0)+"\x00"), 0o644)
	tool("2001", pids[1], strconv.Itoa(ticks[1]+50), sessionIDOf(1))
	for k := 2; k < 4; k++ {
		writeRecord(t, home, pids[k], ticks[k], sessionIDOf(k))
	}
	ag := newAgentGatherer(t, root, AgentStatusConfig{})
	sessions, _ := ag.gatherWithin(agentNow)
	want := []string{sessionIDOf(0) + ".jsonl by " + BindToolEnv, sessionIDOf(1) + ".jsonl by " + BindToolEnv,
		sessionIDOf(2) + ".jsonl by " + BindSessionRecord, sessionIDOf(3) + ".jsonl by " + BindSessionRecord}
	if got := bindings(t, sessions, fiveNames[:4]...); !slices.Equal(got, want) {
		t.Errorf("bindings %q, want %q", got, want)
	}
	// /clear in the second agent: a new session; its next tool says so.
	cleared := claudeFile(home, sessionIDOf(7))
	writeTranscript(t, cleared, []string{claudeUserLine(agentNow.Add(time.Second), "after clear")}, agentNow.Add(time.Second))
	sessions, _ = ag.gatherWithin(agentNow.Add(time.Second))
	if got := bindings(t, sessions, fiveNames[1]); got[0] != want[1] {
		t.Errorf("before its next tool: %q", got)
	}
	tool("2002", pids[1], strconv.Itoa(ticks[1]+90), sessionIDOf(7))
	sessions, _ = ag.gatherWithin(agentNow.Add(2 * time.Second))
	if got := bindings(t, sessions, fiveNames[:4]...); got[1] != sessionIDOf(7)+".jsonl by "+BindToolEnv || got[0] != want[0] || got[2] != want[2] {
		t.Errorf("after its next tool: %q", got)
	}
}

// Codex holds its rollout file open: two Codex agents of one folder each
// get the file they hold, of the day's several.
func TestAgentBindingOpenFile(t *testing.T) {
	root, home := agentFixture(t)
	addClone(t, root, "206", "1206", "9500") // started after 206 (8400)
	os.WriteFile(filepath.Join(root, "1206", "environ"), []byte("HOME="+home+"\x00"), 0o644)
	day := filepath.Join(home, ".codex", "sessions", agentNow.UTC().Format("2006/01/02"))
	var files []string
	for k := range 3 {
		p := filepath.Join(day, fmt.Sprintf("rollout-2023-11-14T22-0%d-00-%s.jsonl", k, sessionIDOf(k)))
		writeTranscript(t, p, codexLines(agentNow.Add(-time.Duration(10-k)*time.Minute), "/home/dev/work/app"), agentNow.Add(-time.Duration(3-k)*time.Minute))
		files = append(files, p)
	}
	for pid, file := range map[string]string{"206": files[0], "1206": files[1]} {
		fd := filepath.Join(root, pid, "fd")
		os.MkdirAll(fd, 0o755)
		for n, target := range []string{"/dev/null", "/dev/pts/3", file} {
			if err := os.Symlink(target, filepath.Join(fd, strconv.Itoa(n))); err != nil {
				t.Fatal(err)
			}
		}
	}
	sessions, _ := newAgentGatherer(t, root, AgentStatusConfig{}).gatherWithin(agentNow)
	want := []string{filepath.Base(files[0]) + " by " + BindOpenFile, filepath.Base(files[1]) + " by " + BindOpenFile}
	if got := bindings(t, sessions, "codex/work/app", "codex/work/app#2"); !slices.Equal(got, want) {
		t.Errorf("bindings %q, want %q", got, want)
	}
}
