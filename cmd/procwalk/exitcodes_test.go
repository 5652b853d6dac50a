package main

import (
	"strings"
	"testing"
)

// The README's exit-code table, row by row, with a case for each command
// the first-time user's report (issue 12) tripped on: every failure is one
// line on stderr, nothing on stdout, and the documented code. Codes that
// need a real process (guard's 124, interrupts, a closed stdout) are in
// guard_test.go, main_test.go and stdout_test.go.
func TestExitCodeTable(t *testing.T) {
	clearEnv(t)
	conf := writeConfig(t, "kind bogus\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // the start of the one line on stderr
	}{
		// 1: run-time failure.
		{"missing root", fixture("ps", "--proc", "/nope"), exitError, "procwalk: not a proc filesystem: /nope has no stat file"},
		{"root that holds files: no mount advice", fixture("ps", "--proc", "testdata"), exitError,
			"procwalk: not a proc filesystem: testdata has no stat file and holds other files: pass --proc with the root procfs is mounted on"},
		{"telegraf missing root", []string{"telegraf", "--proc", "/nope"}, exitError, "procwalk: bad procwalk plugin option: proc (--proc): not a proc filesystem"},
		{"pid not found", fixture("tree", "99999"), exitError, "procwalk: pid 99999 is not in"},
		{"session not found", sessionsFixture("session", "--no-rates", "tree:nonexistent"), exitError, "procwalk: no such session tree:nonexistent"},
		{"completion without a root", []string{completeCommand, "sessions", "--proc", "/nope"}, exitError, ""},
		// 2: usage.
		{"unknown command", []string{"nope"}, exitUsage, `procwalk: unknown command "nope"`},
		{"unknown flag", fixture("ps", "--nope"), exitUsage, "procwalk: flag provided but not defined: -nope"},
		{"bad kind", sessionsFixture("sessions", "--kind", "bogus"), exitUsage, `procwalk: --kind "bogus": unknown session kind`},
		{"bad kind, default command", fixture("--kind", "bogus"), exitUsage, `procwalk: --kind "bogus": unknown session kind`},
		{"bad kind in the config file", fixture("--config", conf), exitUsage, "procwalk: config file " + conf + ` line 1: kind "bogus"`},
		{"bad telegraf kinds", fixture("telegraf", "--session-kinds", "bogus"), exitUsage, `procwalk: bad procwalk plugin option: session_kinds (--session-kinds) "bogus"`},
		{"bad telegraf signal", fixture("telegraf", "--signal", "bogus"), exitUsage, `procwalk: bad procwalk plugin option: signal (--signal) "bogus"`},
		{"ps --limit -1", fixture("ps", "--limit", "-1"), exitUsage, "procwalk: --limit -1: want 0 (all) or a positive count"},
		{"sessions --limit -1", sessionsFixture("sessions", "--limit", "-1"), exitUsage, "procwalk: --limit -1: want 0 (all) or a positive count"},
		{"bad tree pid", fixture("tree", "x"), exitUsage, `procwalk: tree: "x" is not a PID`},
		{"bad kill signal", fixture("kill", "--signal", "bogus", "1"), exitUsage, `procwalk: --signal: bad signal "bogus"`},
		{"guard without a command", fixture("guard"), exitUsage, "procwalk: guard needs a command"},
		{"top without a terminal", fixture("top"), exitUsage, "procwalk: top needs a terminal"},
		{"no such script", fixture("run", "nope"), exitUsage, `procwalk: no script "nope"`},
		{"bad watch count", fixture("watch", "--count", "-1", "zombies"), exitUsage, "procwalk: --count -1"},
		{"unknown shell", []string{"completion", "tcsh"}, exitUsage, `procwalk: completion "tcsh": want bash, zsh or fish`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, tt.stderr) || tt.stderr != "" && strings.Count(r.stderr, "\n") != 1 || tt.stderr == "" && r.stderr != "" {
				t.Errorf("stderr %q; want one line starting %q", r.stderr, tt.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a failed run wrote to stdout:\n%s", r.stdout)
			}
		})
	}
	// 0: success, partial data included (a line on stderr says what is
	// missing); help asked for.
	for _, args := range [][]string{fixture("ps", "--no-rates"), {"--help"}, {"help", "kill"}, {"--version"}, {"completion", "fish"}} {
		if r := cli(t, args...); r.code != exitOK || r.stdout == "" {
			t.Errorf("%v: exit %d, stdout %d bytes; want 0 and output", args, r.code, len(r.stdout))
		}
	}
	if r := cli(t, fixture("ps", "--no-rates")...); r.stderr != fixtureNoteStatus {
		t.Errorf("partial data: stderr %q, want %q", r.stderr, fixtureNoteStatus)
	}
}
