//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fake Claude Code (a copy of sleep named claude, in a project folder,
// its HOME a temporary directory) whose transcript the test writes: its
// status, model and context follow in sessions --json, Telegraf's line
// protocol, Lua, procwalk session and the agents report as the transcript
// says it works, waits for a permission and ends its turn; a bounded first
// read of a long transcript says what it skipped.
func TestIntegrationAgentStatus(t *testing.T) {
	integration(t)
	clearEnv(t)
	dir, home, proj, claude := fakeAgentDirs(t, "agentproj", "claude")
	startFakeAgent(t, claude, proj, home)
	// Written after the agent started: its transcript.
	project := regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(proj, "-")
	path := filepath.Join(home, ".claude", "projects", project, "0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	name := "claude/" + filepath.Base(proj)
	line := func(at time.Time, typ, msg string) string {
		return fmt.Sprintf(`{"type":%q,"sessionId":"0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d","cwd":%q,"timestamp":%q,"message":%s}`,
			typ, proj, at.UTC().Format(time.RFC3339Nano), msg)
	}
	usage := `"usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":150000,"cache_creation_input_tokens":29995}`
	write := func(mod time.Time, lines ...string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(f, strings.Join(lines, "\n")+"\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	agentJSON := func(extra ...string) map[string]any {
		t.Helper()
		r := cli(t, append([]string{"sessions", "--kind", "agent", "--no-rates", "--json"}, extra...)...)
		if r.code != 0 {
			t.Fatalf("sessions --json: exit %d: %s", r.code, r.stderr)
		}
		var doc struct {
			Sessions []struct {
				Name    string         `json:"name"`
				Attrs   map[string]any `json:"attrs"`
				Agent   map[string]any `json:"agent"`
				Metrics map[string]any `json:"metrics"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		for _, s := range doc.Sessions {
			if s.Name == name {
				// The agent's strings and its numbers, in one map.
				for k, v := range s.Metrics {
					s.Agent[k] = v
				}
				return s.Agent
			}
		}
		t.Fatalf("no session %s in\n%s", name, r.stdout)
		return nil
	}
	// Transcript times must not be older than the agent (less 2 s), and
	// older than --agent-active-within 1s to count as not growing.
	time.Sleep(2500 * time.Millisecond)
	now := time.Now()

	// Working: the person asked, and the transcript grew just now.
	write(now, line(now, "user", `{"role":"user","content":"run the tests"}`))
	if a := agentJSON("--agent-active-within", "1h"); a["status"] != "working" || a["turns"] != 1.0 {
		t.Errorf("after the prompt: %v", a)
	}

	// Blocked: the model asked for a tool two seconds ago; nothing runs.
	past := now.Add(-2 * time.Second)
	write(past, line(past, "assistant", `{"id":"msg_1","model":"claude-opus-4-1","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"rm -rf build"}}],`+usage+`}`))
	a := agentJSON("--agent-active-within", "1s")
	if a["status"] != "blocked" || a["model"] != "claude-opus-4-1" || a["context_used_tokens"] != 180000.0 || a["context_percent"] != 90.0 || a["pending_tools"] != 1.0 {
		t.Errorf("waiting for a permission: %v", a)
	}
	r := cli(t, "telegraf", "--session-kinds", "agent", "--skip-self-metrics", "--agent-active-within", "1s")
	want := fmt.Sprintf("procwalk_session,agent=claude,kind=agent,session=%s ", name)
	var got string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, want) {
			got = l
		}
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("procwalk_agent_status,agent=claude,kind=agent,session=%s,status=blocked value=1i ", name)) {
		t.Errorf("no state set line of status blocked in\n%s", r.stdout)
	}
	for _, field := range []string{`status="blocked"`, `model="claude-opus-4-1"`, "context_used_tokens=180000i", "context_percent=90,", "cache_read_tokens=150000i", "turns=1i", "pending_tools=1i"} {
		if !strings.Contains(got, field) {
			t.Errorf("telegraf line lacks %s:\n%q\nin\n%s%s", field, got, r.stdout, r.stderr)
		}
	}
	// Its cost by a price table: Opus 4.1's prices, per million tokens.
	prices := filepath.Join(dir, "prices.conf")
	if err := os.WriteFile(prices, []byte("# FAMILY INPUT OUTPUT CACHE-READ CACHE-WRITE-5M CACHE-WRITE-1H\nclaude-opus-4-1 15 75 1.50 18.75 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "telegraf", "--session-kinds", "agent", "--skip-self-metrics", "--agent-active-within", "1s", "--agent-prices", prices)
	if !strings.Contains(r.stdout, ",cost_usd=0.79048125,") { // (5×15 + 40×75 + 150000×1.5 + 29995×18.75) / 1e6
		t.Errorf("telegraf --agent-prices: no cost_usd=0.79048125 in\n%s%s", r.stdout, r.stderr)
	}
	// procwalk session agent:NAME says all of it; the bundled agents report
	// has its row.
	r = cli(t, "session", "--no-rates", "--agent-active-within", "1s", "agent:"+name)
	for _, want := range []string{"status         blocked for ", "model          claude-opus-4-1\n", "context        180000 tokens of 200000 (90.0%)\n",
		"tokens         input 5, output 40, cache read 150000, cache creation 29995\n", "turns          1, last entry tool_use, tool uses awaiting results: 1\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("session agent:%s: exit %d, lacks %q:\n%s%s", name, r.code, want, r.stdout, r.stderr)
		}
	}
	r = cli(t, "run", "--no-rates", "--agent-active-within", "1s", "agents")
	if row := regexp.MustCompile(`(?m)^claude +` + regexp.QuoteMeta(filepath.Base(proj)) + ` +[0-9]+ .*\n +blocked [0-9]+ s, running .*, model claude-opus-4-1, context 90%,`); !row.MatchString(r.stdout + r.stderr) {
		t.Errorf("run agents: no row matching %s in\n%s%s", row, r.stdout, r.stderr)
	}
	// Lua's print goes to stderr under run (stdout carries metrics).
	script := filepath.Join(dir, "agent.lua")
	if err := os.WriteFile(script, []byte(`local pw = require "procwalk"
local s = pw.session("agent:`+name+`")
print(s.agent.status, s.agent.model, s.context_percent, s.pending_tools)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "run", "--no-rates", "--agent-active-within", "1s", script); !strings.Contains("\n"+r.stdout, "\nblocked\tclaude-opus-4-1\t90\t1\n") {
		t.Errorf("lua: %q %s", r.stdout, r.stderr)
	}

	// Idle: the tool ran, the model answered and ended its turn.
	write(past, line(past, "user", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}`),
		line(past, "assistant", `{"id":"msg_2","model":"claude-opus-4-1","stop_reason":"end_turn","content":[{"type":"text","text":"Removed."}],`+usage+`}`))
	if a := agentJSON("--agent-active-within", "1s"); a["status"] != "idle" || a["pending_tools"] != 0.0 || a["output_tokens"] != 80.0 {
		t.Errorf("after the turn: %v", a)
	}
	if r := cli(t, "run", "--no-rates", "--agent-active-within", "1s", script); !strings.Contains("\n"+r.stdout, "\nidle\tclaude-opus-4-1\t90\t0\n") {
		t.Errorf("lua after the turn: %q %s", r.stdout, r.stderr)
	}

	// 400 more prompts (160 KB), then a turn: a first read bounded to
	// 64 KiB takes status and context from the end, and says what it did
	// not read; a whole read counts every prompt.
	var more []string
	for i := range 400 {
		more = append(more, line(past, "user", fmt.Sprintf(`{"role":"user","content":"prompt %d %s"}`, i, strings.Repeat("x", 300))))
	}
	more = append(more, line(past, "assistant", `{"id":"msg_3","model":"claude-opus-4-1","stop_reason":"end_turn","content":[{"type":"text","text":"Done."}],`+usage+`}`))
	write(past, more...)
	a = agentJSON("--agent-active-within", "1s", "--agent-first-read", "64KiB")
	if skipped, _ := a["transcript_skipped_bytes"].(float64); a["status"] != "idle" || a["context_percent"] != 90.0 || skipped < 64<<10 || a["turns"] == 401.0 {
		t.Errorf("first read bounded to 64 KiB: %v", a)
	}
	if a := agentJSON("--agent-active-within", "1s", "--agent-first-read", "all"); a["transcript_skipped_bytes"] != 0.0 || a["turns"] != 401.0 {
		t.Errorf("whole first read: %v", a)
	}
	r = cli(t, "telegraf", "--session-kinds", "agent", "--skip-self-metrics", "--agent-first-read", "64KiB")
	if !regexp.MustCompile(`,transcript_skipped_bytes=[1-9][0-9]{4,}i`).MatchString(r.stdout) {
		t.Errorf("telegraf --agent-first-read 64KiB: no transcript_skipped_bytes in\n%s%s", r.stdout, r.stderr)
	}
}

// fakeAgentDirs makes a temporary HOME, a project folder named prefix-PID
// and a copy of sleep named name (an agent's command as /proc shows it).
func fakeAgentDirs(t *testing.T, prefix, name string) (dir, home, proj, exe string) {
	t.Helper()
	dir = t.TempDir()
	home, proj = filepath.Join(dir, "home"), filepath.Join(dir, "work", fmt.Sprintf("%s-%d", prefix, os.Getpid()))
	for _, d := range []string{home, proj, filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	exe = filepath.Join(dir, "bin", name)
	copyFile(t, sleep, exe)
	return dir, home, proj, exe
}

// startFakeAgent starts exe (a copy of sleep named as an agent) in dir with
// HOME home, holding open the files open (as its fds 3, 4 ...), in a
// process group of its own killed at the test's end, and returns its pid
// once it runs exe.
func startFakeAgent(t *testing.T, exe, dir, home string, open ...*os.File) int {
	t.Helper()
	cmd := exec.Command(exe, "600")
	cmd.Dir, cmd.Env, cmd.ExtraFiles = dir, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, open
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // unreaped, its pid (the group's id) is not reused
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	})
	waitExe(t, cmd.Process.Pid, exe)
	return cmd.Process.Pid
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitExe waits until pid runs exe (a started process is first a copy of
// the test binary), however slow the machine.
func waitExe(t *testing.T, pid int, exe string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && got == exe {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exec %s in 60s", pid, exe)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Three fake Claude Codes (copies of sleep named claude) started one after
// another in one project folder, each then writing its own transcript, in
// reverse: with nothing saying which is whose, each is ambiguous and
// reads none; with Claude Code 2.1's record of each process
// (~/.claude/sessions/<pid>.json: pid, sessionId, cwd, startedAt in ms, as
// sverrirsig/claude-control#10 shows it) each reads its own, also after a
// new file appears in the folder.
func TestIntegrationAgentBinding(t *testing.T) {
	integration(t)
	clearEnv(t)
	_, home, proj, claude := fakeAgentDirs(t, "bindproj", "claude")
	var pids []int
	for range 3 {
		pids = append(pids, startFakeAgent(t, claude, proj, home))
	}
	folder := filepath.Join(home, ".claude", "projects", regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(proj, "-"))
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	id := func(k int) string { return fmt.Sprintf("0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4%d", k) }
	for k := 2; k >= 0; k-- {
		line := fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":%q,"timestamp":%q,"message":{"role":"user","content":"task %d"}}`, id(k), proj, time.Now().UTC().Format(time.RFC3339Nano), k)
		if err := os.WriteFile(filepath.Join(folder, id(k)+".jsonl"), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"claude/" + filepath.Base(proj), "claude/" + filepath.Base(proj) + "#2", "claude/" + filepath.Base(proj) + "#3"}
	agents := func() (map[string]map[string]any, string) {
		t.Helper()
		r := cli(t, "sessions", "--kind", "agent", "--no-rates", "--json")
		if r.code != 0 {
			t.Fatalf("sessions --json: exit %d: %s", r.code, r.stderr)
		}
		var doc struct {
			Notes    []string `json:"notes"`
			Sessions []struct {
				Name  string         `json:"name"`
				Agent map[string]any `json:"agent"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, s := range doc.Sessions {
			out[s.Name] = s.Agent
		}
		return out, strings.Join(doc.Notes, "\n")
	}
	got, notes := agents()
	for _, n := range names {
		if a := got[n]; a == nil || a["binding"] != "ambiguous" || a["transcript"] != nil || len(a["candidates"].([]any)) != 3 {
			t.Errorf("%s without records: %v", n, a)
		}
	}
	if !strings.Contains(notes, "its transcript is one of ") {
		t.Errorf("notes:\n%s", notes)
	}
	// Claude Code 2.1 records each process: pid, session, cwd, start.
	btime := 0
	b, _ := os.ReadFile("/proc/stat")
	fmt.Sscanf(regexp.MustCompile(`(?m)^btime (\d+)$`).FindStringSubmatch(string(b))[1], "%d", &btime)
	sessions := filepath.Join(home, ".claude", "sessions")
	os.MkdirAll(sessions, 0o700)
	for k, pid := range pids {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
		var ticks int64
		fmt.Sscanf(f[19], "%d", &ticks) // starttime, at USER_HZ 100
		rec := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":%q,"startedAt":%d,"kind":"interactive","entrypoint":"cli"}`, pid, id(k), proj, int64(btime)*1000+ticks*10+350)
		if err := os.WriteFile(filepath.Join(sessions, fmt.Sprintf("%d.json", pid)), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 {
		got, notes = agents()
		for k, n := range names {
			if a := got[n]; a == nil || a["binding"] != "session record" || a["transcript"] != filepath.Join(folder, id(k)+".jsonl") {
				t.Errorf("round %d, %s with records: %v", round, n, a)
			}
		}
		if strings.Contains(notes, "its transcript is one of") {
			t.Errorf("round %d notes:\n%s", round, notes)
		}
		// Another session's file appears in the folder.
		os.WriteFile(filepath.Join(folder, "9f9e8d7c-0000-4000-8000-000000000001.jsonl"), []byte(`{"type":"summary","summary":"x"}`+"\n"), 0o600)
	}
}

// Two fake Codex CLIs (copies of sleep named codex) of one project folder,
// each holding its own rollout file open as Codex does (/proc/PID/fd), with
// a third rollout of the day that neither holds: each reads the file it
// holds ("open file"), whatever the files' times say. The rollout lines are
// Codex CLI 0.106's shapes (procwalk/session/testdata/transcripts/README.md).
func TestIntegrationAgentBindingOpenFile(t *testing.T) {
	integration(t)
	clearEnv(t)
	_, home, proj, codex := fakeAgentDirs(t, "openproj", "codex")
	day := filepath.Join(home, ".codex", "sessions", time.Now().Format("2006/01/02"))
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	id := func(k int) string { return fmt.Sprintf("019ca5e2-7b3d-7c10-9f4e-2d8b6a1c0e5%d", k) }
	rollout := func(k int) string {
		return filepath.Join(day, fmt.Sprintf("rollout-%s-%s.jsonl", time.Now().Format("2006-01-02T15-04-05"), id(k)))
	}
	// The files are written in the reverse order of the agents' starts:
	// by times alone the first agent would take the last file.
	var files []string
	var held []*os.File
	for k := range 3 {
		files = append(files, rollout(k))
		f, err := os.OpenFile(files[k], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		held = append(held, f)
	}
	pids := []int{startFakeAgent(t, codex, proj, home, held[1]), startFakeAgent(t, codex, proj, home, held[0])}
	for k := 2; k >= 0; k-- {
		ts := time.Now().UTC().Format(time.RFC3339Nano)
		lines := []string{
			fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":%q,"originator":"codex_cli_rs","cli_version":"0.106.0","source":"cli","model_provider":"openai","base_instructions":{"text":"You are Codex."}}}`, ts, id(k), ts, proj),
			fmt.Sprintf(`{"timestamp":%q,"type":"turn_context","payload":{"cwd":%q,"approval_policy":"on-request","model":"gpt-5.3-codex-%d","effort":"high","summary":"auto"}}`, ts, proj, k),
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"task %d","images":[]}}`, ts, k),
			fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"task_complete","turn_id":"1","last_agent_message":"Done."}}`, ts),
		}
		if _, err := held[k].WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	r := cli(t, "sessions", "--kind", "agent", "--no-rates", "--json")
	if r.code != 0 {
		t.Fatalf("sessions --json: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Sessions []struct {
			Name  string `json:"name"`
			Roots []struct {
				PID int `json:"pid"`
			} `json:"roots"`
			Agent map[string]any `json:"agent"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{pids[0]: files[1], pids[1]: files[0]}
	found := 0
	for _, s := range doc.Sessions {
		if len(s.Roots) != 1 || want[s.Roots[0].PID] == "" {
			continue
		}
		found++
		pid := s.Roots[0].PID
		if a := s.Agent; a["binding"] != "open file" || a["transcript"] != want[pid] {
			t.Errorf("%s (pid %d): %v, want %s by open file", s.Name, pid, a, want[pid])
		}
	}
	if found != 2 {
		t.Errorf("%d of the 2 codex agents found:\n%s", found, r.stdout)
	}
}
