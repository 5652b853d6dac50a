//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each shell's script is produced, names every command and a command's
// own flags, and asks procwalk for session names.
func TestCompletionScripts(t *testing.T) {
	clearEnv(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := cli(t, "completion", shell)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", shell, r.code, r.stderr)
		}
		for _, want := range []string{"procwalk __complete sessions", "sessions", "telegraf", "completion", "kill-tmux-session", "lines-only", "script-timeout"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s script lacks %q", shell, want)
			}
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if r := cli(t, args...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2", args, r.code, r.stdout)
		}
	}
}

// fixtureSessionRefs are the sessions of procwalk/session/testdata/sessions that
// complete: the default kinds, in Group's order.
const fixtureSessionRefs = `cgroup:/batch/job42
cgroup:/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service
cgroup:/user.slice/user-1001.slice/user@1001.service/app.slice/foo.service
cgroup:daemon.service
cgroup:docker-d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4.scope
cgroup:init.scope
cgroup:pod/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d
cgroup:pod/6b1e0f8e-3a5c-4f1d-9a7b-2c3d4e5f6a7b
cgroup:session-2.scope
cgroup:session-5.scope
cgroup:ssh.service
user:999
user:1001
user:65535
user:dev
user:nginx
user:root
agent:claude/work/app
agent:claude/other/app
agent:codex/work/app
agent:claude/other/app#2
`

// The hidden helper lists the fixture's sessions, one KIND:NAME a line,
// and nothing on stderr (a <Tab> must not print into the command line).
func TestCompleteSessionRefs(t *testing.T) {
	clearEnv(t)
	r := cli(t, append([]string{completeCommand}, sessionsFixture("sessions")...)...)
	if r.code != exitOK || r.stderr != "" || r.stdout != fixtureSessionRefs {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, fixtureSessionRefs)
	}
	if r := cli(t, completeCommand, "sessions", "--proc", "/nope"); r.code != exitError || r.stderr != "" || r.stdout != "" {
		t.Errorf("missing root: exit %d, stderr %q, stdout %q; want 1 and silence", r.code, r.stderr, r.stdout)
	}
	if r := cli(t, "--help"); strings.Contains(r.stdout, completeCommand) {
		t.Errorf("--help lists the hidden %s", completeCommand)
	}
}

// The scripts complete in the real shells: bash through its completion
// function, zsh with compadd and _describe standing in for its completion
// system, fish through complete -C. Session names come from the fixture
// (PROCWALK_* variables, as a user's would be read).
func TestIntegrationCompletionInShells(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	dir := filepath.Dir(bin)
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"PROCWALK_PROC=" + abs(sessionsProc), "PROCWALK_PASSWD=" + abs(sessionsPasswd), "PROCWALK_CGROUP_ROOT=" + abs(sessionsCgroups),
		"PROCWALK_TMUX_SOCKET=/nonexistent/procwalk-test.sock"}
	shell := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("no %s", name)
		}
		cmd := exec.Command(name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	// Each case: the command line up to the cursor, and the completions.
	cases := []struct{ line, bash, words string }{
		{"procwalk se", "sessions session", "sessions session"},
		{"procwalk --proc /x tr", "tree", "tree"},
		{"procwalk help ki", "kill", "kill"},
		{"procwalk tree --ke", "--kernel", "--kernel"},
		// bash completes the part after the colon: it split the word there.
		{"procwalk session agent:cl", "claude/work/app claude/other/app claude/other/app#2",
			"agent:claude/work/app agent:claude/other/app agent:claude/other/app#2"},
		{"procwalk kill --yes --session user:", "999 1001 65535 dev nginx root",
			"user:999 user:1001 user:65535 user:dev user:nginx user:root"},
	}
	t.Run("bash", func(t *testing.T) {
		for _, c := range cases {
			script := `eval "$(procwalk completion bash)"
COMP_LINE="$1"; COMP_POINT=${#1}; _procwalk; echo "${COMPREPLY[*]}"`
			if got := strings.TrimSpace(shell(t, "bash", "-c", script, "bash", c.line)); got != c.bash {
				t.Errorf("%q: %q, want %q", c.line, got, c.bash)
			}
		}
	})
	t.Run("zsh", func(t *testing.T) {
		for _, c := range cases {
			// compadd -a NAME and _describe TAG NAME print their array; the
			// test then filters by the word's prefix as zsh would.
			script := `compdef() { :; }
compadd() { [[ $1 == -a ]] && print -rl -- ${(P)2}; }
_describe() { local x; for x in ${(P)2}; do print -r -- ${x%%:*}; done; }
_files() { :; }
eval "$(procwalk completion zsh)"
words=(${(z)1}); [[ $1 == *' ' ]] && words+=('')
CURRENT=${#words}
_procwalk | while read -r w; do [[ $w == ${words[CURRENT]}* ]] && print -r -- $w; done; true`
			got := strings.Join(strings.Fields(shell(t, "zsh", "-f", "-c", script, "zsh", c.line)), " ")
			if got != c.words {
				t.Errorf("%q: %q, want %q", c.line, got, c.words)
			}
		}
	})
	t.Run("fish", func(t *testing.T) {
		for _, c := range cases {
			script := `procwalk completion fish | source; complete -C "$argv[1]" | string replace -r '\t.*' ''; true`
			got := strings.Fields(shell(t, "fish", "--no-config", "-c", script, c.line))
			// fish sorts and may add fuzzy matches: every wanted word is there.
			for _, w := range strings.Fields(c.words) {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("%q: %q lacks %q", c.line, got, w)
				}
			}
		}
	})
}
