//go:build linux

package main

import (
	"github.com/procwalk/procwalk/scripts"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The run and watch tests use the Lua runtime's fixture (see
// scripting/testdata): a tmux server with sessions work (claude -> bash ->
// node) and build (make -> cc1 and a zombie cc1), a pod (java and a zombie
// sh) whose cgroup is at 90% of 2 GiB, sshd and systemd. No tmux server
// answers: --tmux-socket names none.
const (
	scriptProc   = "../../scripting/testdata/proc"
	scriptPasswd = "../../scripting/testdata/passwd"
	scriptCgroup = "../../scripting/testdata/cgroup"
)

// scriptCLI runs "procwalk COMMAND" on the fixture with args after it.
func scriptCLI(t *testing.T, command string, args ...string) result {
	t.Helper()
	clearEnv(t)
	base := []string{command, "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux"}
	return cli(t, append(base, args...)...)
}

// writeScript writes a Lua script into a temporary directory.
func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// lineProtocol matches a line of line protocol with a nanosecond timestamp.
var lineProtocol = regexp.MustCompile(`^[a-z_]+(,[^ ]+)? [^ ].* \d{19}$`)

// checkLines returns the n lines of line protocol on stdout, after the
// script's print output (the report), failing the test when there are
// more or fewer, or when a report line follows them.
func checkLines(t *testing.T, stdout string, n int) []string {
	t.Helper()
	all := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if stdout == "" {
		all = nil
	}
	var lines []string
	for i, l := range all {
		if lineProtocol.MatchString(l) {
			lines = append(lines, l)
		} else if len(lines) > 0 {
			t.Errorf("line %d is no line protocol, after line protocol: %q", i+1, l)
		}
	}
	if len(lines) != n {
		t.Fatalf("%d lines of line protocol on stdout, want %d:\n%s", len(lines), n, stdout)
	}
	return lines
}

func TestRunList(t *testing.T) {
	r := cli(t, "run", "--list")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"agents          AI coding agent sessions",
		"memory-guard    kill the biggest process of a tmux or agent session whose memory stays over a limit for N ticks\n",
		"zombies         zombie processes and the parents that do not reap them, per session\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--list lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "\n"); n != 6 {
		t.Errorf("%d scripts listed, want 6", n)
	}
}

func TestRunBundledScript(t *testing.T) {
	r := scriptCLI(t, "run", "--no-rates", "zombies", "--", "alert=1")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"2 zombies under 2 parents\n",
		"  java 201 in cgroup:pod/1234abcd-5678-90ef-1234-567890abcdef: 1 not reaped:\n    sh 202",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report on stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if want := `level=WARN msg="zombies: make 120 has not reaped 1 children" script=zombies.lua alert=true kind=cgroup session=session-1.scope`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	lines := checkLines(t, r.stdout, 2)
	if !strings.HasPrefix(lines[0], `procwalk_alert,kind=cgroup,rule=zombies.lua,session=session-1.scope,severity=warning comm="make",message="zombies: make 120 has not reaped 1 children",pid=120i,threshold=1,value=1 `) {
		t.Errorf("alert line %q", lines[0])
	}
}

// Flags may follow the script's name; its arguments follow --.
func TestRunFlagsAfterName(t *testing.T) {
	r := scriptCLI(t, "run", "zombies", "--no-rates", "--", "alert=1")
	if r.code != exitOK || len(checkLines(t, r.stdout, 2)) != 2 {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	// Without --, a stray word (or a misplaced flag) is an error, never an
	// argument the script would ignore.
	r = scriptCLI(t, "run", "--no-rates", "memory-guard", "limit=1GiB")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unexpected "limit=1GiB" after the script name: script arguments go after --, as in procwalk run memory-guard -- limit=1GiB`) {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

func TestRunFileEmitsLineProtocol(t *testing.T) {
	path := writeScript(t, "rule.lua", `local pw = require "procwalk"
print("checking", #pw.processes(), "processes")
for _, s in ipairs(pw.sessions("user")) do
  assert(pw.emit("user_memory", {user = s.name}, {rss = s.rss, procs = s.procs}))
end
print(pw.emit("bad measurement\n", {}, {v = 1}))
pw.log("done", ...)`)
	r := scriptCLI(t, "run", "--no-rates", path, "--", "a", "b")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := checkLines(t, r.stdout, 3)
	if !strings.HasPrefix(lines[0], "user_memory,user=app procs=2,rss=1.932525568e+09 ") {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{"checking\t16\tprocesses\n", "nil\temit bad measurement\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if want := `msg="done a b" script=rule.lua`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

func TestRunErrors(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		code      int
		wantInErr string
	}{
		{"no script", []string{"run"}, exitUsage, "name a script: a file, or a bundled script (agents, growth-watch"},
		{"unknown name", []string{"run", "nope"}, exitUsage, `no script "nope": not a bundled script (agents, growth-watch, memory-guard, pod-pressure, session-report, zombies) and no such file`},
		{"missing file", []string{"run", "./nope.lua"}, exitUsage, "lua script not found: open ./nope.lua: no such file or directory"},
		{"syntax", []string{"run", writeScript(t, "bad.lua", "local x = = 1")}, exitUsage, "lua syntax error: bad.lua:1: syntax error near '='"},
		{"runtime", []string{"run", "--no-rates", writeScript(t, "boom.lua", "\nlocal t = nil\nprint(t.x)")}, exitError, "lua script error: boom.lua:3: attempt to index a non-table object(nil) with key 'x'"},
		{"timeout", []string{"run", "--no-rates", "--script-timeout", "100ms", writeScript(t, "loop.lua", "while true do end")}, exitError, "lua script timed out: loop.lua:1: ran past its 100ms deadline (raise --script-timeout, or do less per run)"},
		{"memory", []string{"run", "--no-rates", "--script-memory", "lots", "zombies"}, exitUsage, `--script-memory "lots": want a size of at least 1MiB`},
		{"retained", []string{"run", "--no-rates", "--script-retained", "1KiB", "zombies"}, exitUsage, `--script-retained "1KiB": want a size of at least 1MiB`},
		{"bad protect", []string{"run", "--protect", "[", "zombies"}, exitUsage, "--protect: bad protected pattern"},
		{"list with a script", []string{"run", "--list", "zombies"}, exitUsage, "--list takes no script"},
		{"sandbox", []string{"run", "--no-rates", writeScript(t, "evil.lua", `os.execute("echo pwned")`)}, exitError, "evil.lua:1: attempt to call a non-function object"},
	}
	for _, c := range cases {
		r := scriptCLI(t, c.args[0], c.args[1:]...)
		if r.code != c.code || !strings.Contains(r.stderr, c.wantInErr) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d with %q", c.name, r.code, r.stderr, c.code, c.wantInErr)
		}
		if r.stdout != "" {
			t.Errorf("%s: stdout %q", c.name, r.stdout)
		}
	}
}

// memory-guard with --dry-run on the fixture: the engine's Killer plans
// against the fixture and reports what it would send (a fixture's pids are
// never signalled: it is not this pid namespace's /proc).
func TestRunMemoryGuardDryRun(t *testing.T) {
	r := scriptCLI(t, "run", "--no-rates", "--pss", "--dry-run", "memory-guard", "--", "limit=1GiB", "ticks=1", "kinds=agent")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"would signal pid 110 (claude) signals TERM,KILL rss 1.5 GiB pss 1.1 GiB",
		"[rule:memory-guard.lua, process 110@160000]",
		"memory-guard: agent:claude/myproj used 1.6 GiB for 1 ticks (limit 1.0 GiB): would kill claude 110 (1.1 GiB)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if want := "agent:claude/myproj"; !strings.Contains(r.stdout, want) {
		t.Errorf("the report on stdout lacks %q:\n%s", want, r.stdout)
	}
	lines := checkLines(t, r.stdout, 2)
	if !strings.HasPrefix(lines[0], "procwalk_action,outcome=dry_run,requester=rule:memory-guard.lua ") || !strings.Contains(lines[0], "dry_run=true") || !strings.Contains(lines[0], "pid=110i") {
		t.Errorf("action line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "procwalk_alert,kind=agent,rule=memory-guard.lua,session=claude/myproj,severity=warning ") {
		t.Errorf("alert line %q", lines[1])
	}
}

// run --show NAME prints a bundled script as it is bundled, a template that
// runs as a file; a wrong name offers the closest.
func TestRunShow(t *testing.T) {
	clearEnv(t)
	for _, s := range scripts.List() {
		r := cli(t, "run", "--show", s.Name)
		if r.code != exitOK || r.stderr != "" || r.stdout != string(s.Source) {
			t.Errorf("--show %s: exit %d, stderr %q, %d bytes; want the script's %d", s.Name, r.code, r.stderr, len(r.stdout), len(s.Source))
		}
	}
	r := cli(t, "run", "--show", "zombie")
	if r.code != exitUsage || !strings.Contains(r.stderr, "did you mean zombies?") {
		t.Errorf("a wrong name: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := cli(t, "run", "--show", "zombies", "x.lua"); r.code != exitUsage {
		t.Errorf("--show with a script: exit %d", r.code)
	}
	// The template runs as a file.
	path := writeScript(t, "mine.lua", cli(t, "run", "--show", "zombies").stdout)
	if r := scriptCLI(t, "run", "--no-rates", path); r.code != exitOK {
		t.Errorf("the template does not run: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A replay's kills are rehearsed on recorded frames and send no signal:
// its options carry no sentinel, which a run on this host's frames has.
func TestScriptOptionsSentinel(t *testing.T) {
	e := newEnv(strings.NewReader(""), new(strings.Builder), new(strings.Builder))
	e.sentinel = testSentinelCommand()
	g := &globals{passwd: fixturePasswd}
	call := scriptCall{name: "zombies"}
	if o := (&scriptFlags{}).options(g, e, nil, "run", call, ""); o.Sentinel == nil {
		t.Error("run on this host: no sentinel")
	}
	for _, mode := range []string{"run", "watch"} {
		if o := (&scriptFlags{}).options(g, e, nil, mode, call, "frames.pwrec"); o.Sentinel != nil || o.Replay != "frames.pwrec" {
			t.Errorf("%s --replay: sentinel %v, replay %q; want none, frames.pwrec", mode, o.Sentinel != nil, o.Replay)
		}
	}
}
