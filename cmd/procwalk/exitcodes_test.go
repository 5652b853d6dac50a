//go:build linux

package main

import (
	"strings"
	"testing"
)

// scriptFixture prefixes a run or watch command's args with the Lua
// fixture's roots (run_test.go), no tmux server answering.
func scriptFixture(command string, args ...string) []string {
	return append([]string{command, "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux"}, args...)
}

// The README's exit-code table, row by row, for each command: every
// failure is one line on stderr, nothing on stdout, and the documented
// code (kill adds its events on stdout: what it did to each target). The
// codes that need a process of the test's own are in guard_test.go
// (TestIntegrationGuardExitCodes: CMD's status, 124, 126, 127, 128+N),
// main_test.go (interrupted: 1) and stdout_test.go (stdout closed: 0).
func TestExitCodeTable(t *testing.T) {
	clearEnv(t)
	conf := writeConfig(t, "kind bogus\n")
	failing := writeScript(t, "fails.lua", `error("no luck")`)
	broken := writeScript(t, "broken.lua", `x = = 1`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // the start of the one line on stderr
		stdout string // what stdout starts with: "" for nothing at all
	}{
		// 0: success, partial data included (a line on stderr may say
		// what is missing); help asked for.
		{"ps", fixture("ps", "--no-rates"), exitOK, "", "PID"},
		{"tree", fixture("tree", "101"), exitOK, "", "PID"},
		{"sessions", sessionsFixture("sessions", "--no-rates"), exitOK, "", "KIND"},
		{"default command", sessionsFixture("--no-rates"), exitOK, "", "KIND"},
		{"session", sessionsFixture("session", "--no-rates", "user:dev"), exitOK, "", "user:dev\n"},
		{"kill dry run", fixture("kill", "--dry-run", "110"), exitOK, "", "would signal pid 110 (make)"},
		{"run", scriptFixture("run", "--no-rates", writeScript(t, "hi.lua", `print("hi")`)), exitOK, "", "hi\n"},
		{"watch --count", scriptFixture("watch", "--count", "1", writeScript(t, "hi.lua", `print("hi")`)), exitOK, "", "hi\n"},
		{"telegraf", fixture("telegraf", "--session-kinds", "user", "--skip-self-metrics"), exitOK, "", "procwalk_session,"},
		{"top --once", sessionsFixture("top", "--once", "--no-rates"), exitOK, "", "procwalk top"},
		{"completion", []string{"completion", "fish"}, exitOK, "", "# fish completion for procwalk"},
		{"--help", []string{"--help"}, exitOK, "", "USAGE"},
		{"help CMD", []string{"help", "kill"}, exitOK, "", "DESCRIPTION"},
		{"--version", []string{"--version"}, exitOK, "", "procwalk "},

		// 1: run-time failure.
		{"ps, missing root", fixture("ps", "--proc", "/nope"), exitError, "procwalk: not a proc filesystem: /nope has no stat file", ""},
		{"ps, root that holds files: no mount advice", fixture("ps", "--proc", "testdata"), exitError,
			"procwalk: not a proc filesystem: testdata has no stat file and holds other files: pass --proc with the root procfs is mounted on", ""},
		{"tree, pid not found", fixture("tree", "99999"), exitError, "procwalk: pid 99999 is not in", ""},
		{"sessions, missing root", []string{"sessions", "--proc", "/nope"}, exitError, "procwalk: not a proc filesystem: /nope", ""},
		{"session not found", sessionsFixture("session", "--no-rates", "tree:nonexistent"), exitError, "procwalk: no such session tree:nonexistent", ""},
		{"kill, pid not found", fixture("kill", "--dry-run", "99999"), exitError, "procwalk: pid 99999 is not running", ""},
		{"kill refused", fixture("kill", "--dry-run", "1"), exitError, "procwalk: 1 of 1 targets not terminated (pid 1 (systemd) refused_protected)", "refused_protected pid 1 (systemd)"},
		{"run, script fails", scriptFixture("run", "--no-rates", failing), exitError, "procwalk: lua script error: fails.lua:1: no luck", ""},
		{"run, missing root", []string{"run", "--no-rates", "--proc", "/nope", failing}, exitError, "procwalk: not a proc filesystem: /nope", ""},
		{"watch, missing root", []string{"watch", "--count", "1", "--proc", "/nope", failing}, exitError, "procwalk: not a proc filesystem: /nope", ""},
		{"telegraf, missing root", []string{"telegraf", "--proc", "/nope"}, exitError, "procwalk: bad procwalk plugin option: proc (--proc): not a proc filesystem", ""},
		{"top, missing root", []string{"top", "--once", "--proc", "/nope"}, exitError, "procwalk: not a proc filesystem: /nope", ""},
		{"completion without a root", []string{completeCommand, "sessions", "--proc", "/nope"}, exitError, "", ""},

		// 2: usage: the command, a flag, a value or an argument.
		{"unknown command", []string{"nope"}, exitUsage, `procwalk: unknown command "nope"`, ""},
		{"help, unknown command", []string{"help", "nope"}, exitUsage, `procwalk: unknown command "nope"`, ""},
		{"ps, unknown flag", fixture("ps", "--nope"), exitUsage, "procwalk: unknown flag --nope", ""},
		{"ps --limit -1", fixture("ps", "--limit", "-1"), exitUsage, "procwalk: --limit -1: want 0 (all) or a positive count", ""},
		{"tree, bad pid", fixture("tree", "x"), exitUsage, `procwalk: tree: "x" is not a PID`, ""},
		{"tree, unknown flag after the pid", fixture("tree", "1", "--nope"), exitUsage, "procwalk: unknown flag --nope", ""},
		{"sessions, bad kind", sessionsFixture("sessions", "--kind", "bogus"), exitUsage, `procwalk: --kind "bogus": unknown session kind`, ""},
		{"sessions --limit -1", sessionsFixture("sessions", "--limit", "-1"), exitUsage, "procwalk: --limit -1: want 0 (all) or a positive count", ""},
		{"default command, bad kind", fixture("--kind", "bogus"), exitUsage, `procwalk: --kind "bogus": unknown session kind`, ""},
		{"bad kind in the config file", fixture("--config", conf), exitUsage, "procwalk: config file " + conf + ` line 1: kind "bogus"`, ""},
		{"session, bad reference", sessionsFixture("session", "--no-rates", "bogus"), exitUsage, `procwalk: bad session reference "bogus"`, ""},
		{"session, no reference", sessionsFixture("session"), exitUsage, "procwalk: session takes one KIND:NAME", ""},
		{"kill, bad signal", fixture("kill", "--signal", "bogus", "1"), exitUsage, `procwalk: --signal: bad signal "bogus"`, ""},
		{"kill, two targets", fixture("kill", "--dry-run", "1", "100"), exitUsage, "procwalk: kill takes exactly one target", ""},
		{"guard without a command", fixture("guard"), exitUsage, "procwalk: guard needs a command", ""},
		{"guard, bad limit", fixture("guard", "--max-rss", "12X", "--", "true"), exitUsage, `procwalk: --max-rss "12X": want a positive size`, ""},
		{"run, no such script", fixture("run", "nope"), exitUsage, `procwalk: no script "nope"`, ""},
		{"run, syntax error", scriptFixture("run", "--no-rates", broken), exitUsage, "procwalk: lua syntax error: broken.lua:1:", ""},
		{"watch, bad count", fixture("watch", "--count", "-1", "zombies"), exitUsage, "procwalk: --count -1", ""},
		{"watch, syntax error", scriptFixture("watch", "--count", "1", broken), exitUsage, "procwalk: lua syntax error: broken.lua:1:", ""},
		{"telegraf, bad kinds", fixture("telegraf", "--session-kinds", "bogus"), exitUsage, `procwalk: bad procwalk plugin option: session_kinds (--kind) "bogus"`, ""},
		{"telegraf, bad signal", fixture("telegraf", "--signal", "bogus"), exitUsage, `procwalk: bad procwalk plugin option: signal (--signal) "bogus"`, ""},
		{"top without a terminal", fixture("top"), exitUsage, "procwalk: top needs a terminal", ""},
		{"top, bad kind", sessionsFixture("top", "--once", "--kind", "bogus"), exitUsage, `procwalk: --kind "bogus": unknown session kind`, ""},
		{"completion, unknown shell", []string{"completion", "tcsh"}, exitUsage, `procwalk: completion "tcsh": want bash, zsh or fish`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if tt.code != exitOK {
				if !strings.HasPrefix(r.stderr, tt.stderr) || tt.stderr != "" && strings.Count(r.stderr, "\n") != 1 || tt.stderr == "" && r.stderr != "" {
					t.Errorf("stderr %q; want one line starting %q", r.stderr, tt.stderr)
				}
			}
			if tt.stdout == "" && r.stdout != "" || !strings.HasPrefix(r.stdout, tt.stdout) {
				t.Errorf("stdout:\n%s\nwant it to start with %q", r.stdout, tt.stdout)
			}
		})
	}
	if r := cli(t, fixture("ps", "--no-rates")...); r.stderr != fixtureNoteStatus {
		t.Errorf("partial data: stderr %q, want %q", r.stderr, fixtureNoteStatus)
	}
}
