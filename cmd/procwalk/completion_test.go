//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each shell's script is produced and asks procwalk itself; a wrong shell
// or count is a usage error.
func TestCompletionScripts(t *testing.T) {
	clearEnv(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := cli(t, "completion", shell)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", shell, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "command procwalk __complete ") || strings.Contains(r.stdout, "__COMPLETE__") {
			t.Errorf("%s script does not call the helper:\n%s", shell, r.stdout)
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

// What completes each word: the helper's "words" form, as zsh and fish
// call it, on the fixture's sessions (flags on the line reach the
// gather).
func TestCompleteWords(t *testing.T) {
	clearEnv(t)
	fx := sessionsFixture("sessions")[1:] // --proc ... --tmux-socket ...
	for _, tt := range []struct {
		words []string
		want  string // the output after the directive, words only, "|" between
		dir   string
	}{
		{[]string{"se"}, "sessions|session", ":words"},
		{[]string{"--proc", "/x", "tr"}, "tree", ":words"},
		{[]string{"help", "ki"}, "kill", ":words"},
		{[]string{"tree", "--ke"}, "--kernel", ":words"},
		{[]string{"--kin"}, "--kind", ":words"}, // the default command's flags
		{[]string{"ps", "--sort", "c"}, "cpu", ":words"},
		{[]string{"ps", "--sort=c"}, "--sort=cpu", ":words"},
		{[]string{"sessions", "--sort", "n"}, "name", ":words"},
		{[]string{"sessions", "--kind", "tmux,a"}, "tmux,agent|tmux,all", ":words,nospace"},
		{[]string{"sessions", "--kind", "tmux,t"}, "tmux,tty|tmux,tree", ":words,nospace"}, // tmux is given already
		{[]string{"top", "--view", ""}, "processes|sessions|agents", ":words"},
		{[]string{"--source", "b"}, "bpf", ":words"},
		{[]string{"telegraf", "--execd", "--signal", "n"}, "none", ":words"},
		{[]string{"kill", "--signal", "K"}, "KILL", ":words"},
		{[]string{"completion", "z"}, "zsh", ":words"},
		{[]string{"run", "session-"}, "session-report", ":words"},
		{[]string{"watch", "memory"}, "memory-guard", ":words"},
		{[]string{"run", "./my"}, "", ":words,files"},
		{[]string{"--proc", ""}, "", ":words,files"},
		{[]string{"sessions", "--agent-prices", ""}, "", ":words,files"}, // a file, as its Spec says
		{[]string{"guard", "--kill", ""}, "tree|biggest", ":words"},
		{[]string{"watch", "--script-isolation", "o"}, "off", ":words"},
		{[]string{"telegraf", "--schema", "p"}, "procwalk|procstat", ":words"},
		{[]string{"ps", "--columns", "pid,pp"}, "pid,ppid", ":words,nospace"},
		{[]string{"ps", "--view", ""}, "", ":words"},                             // top's flag: ps has none
		{[]string{"guard", "--max-rss", "1G", "make", "-j"}, "", ":words,files"}, // the command's flags are its own
		{[]string{"run", "zombies", "--", "--x"}, "", ":words,files"},
		{append(append([]string{"session"}, fx...), "agent:claude/o"), "agent:claude/other/app|agent:claude/other/app#2", ":words"},
		{append(append([]string{"kill"}, fx...), "--session=user:r"), "--session=user:root", ":words"},
		{append(append([]string{"kill"}, fx...), "--session", "user:n"), "user:nginx", ":words"},
		{append(append([]string{"top"}, fx...), "--cgroup", "cgroup:pod"), "cgroup:pod/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d|cgroup:pod/6b1e0f8e-3a5c-4f1d-9a7b-2c3d4e5f6a7b", ":words"},
		{[]string{"bogus", ""}, "", ":words"},
	} {
		r := cli(t, append([]string{completeCommand, "words", "--"}, tt.words...)...)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		var got []string
		for _, l := range lines[1:] {
			w, _, _ := strings.Cut(l, "\t")
			got = append(got, w)
		}
		if r.code != exitOK || r.stderr != "" || lines[0] != tt.dir || strings.Join(got, "|") != tt.want {
			t.Errorf("%q: exit %d, stderr %q, directive %q, words %q; want %q, %q", tt.words, r.code, r.stderr, lines[0], strings.Join(got, "|"), tt.dir, tt.want)
		}
	}
	// Commands and flags carry their help after a tab.
	r := cli(t, completeCommand, "words", "--", "tree", "--kern")
	if !strings.Contains(r.stdout, "--kernel\t") {
		t.Errorf("no description: %q", r.stdout)
	}
}

// The scripts complete in the real shells, interactive, in a tmux pane of
// the test's own server: a line is typed, then <Tab> and <Enter>, and a
// shell function standing in for procwalk (which leaves __complete to the
// binary) prints the arguments the shell ran it with. The sessions are
// tmux sessions of another server of the test's, named with a space, a
// backslash, a quote and CJK.
func TestIntegrationCompletionInShells(t *testing.T) {
	integration(t)
	clearEnv(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	bin := buildProcwalk(t)
	dir := filepath.Dir(bin)
	names := newTmux(t, fmt.Sprintf("procwalk-names-%d", os.Getpid()))
	names.run("new-session", "-d", "-s", "my proj", "sleep 100000")
	for _, n := range []string{`back\slash`, "it's", "名前"} {
		names.run("new-session", "-d", "-s", n, "sleep 100000")
	}
	// tmux names sessions its own way (a backslash doubled): complete what
	// it says they are.
	named := map[string]string{}
	for _, n := range strings.Split(strings.TrimSpace(names.out("list-sessions", "-F", "#{session_name}")), "\n") {
		named[string([]rune(n)[:1])] = n
	}
	cases := []struct {
		typed string
		args  []string
	}{
		{"procwalk session tmux:my", []string{"session", "tmux:my proj"}},
		{"procwalk session tmux:ba", []string{"session", "tmux:" + named["b"]}},
		{"procwalk kill --session=tmux:it", []string{"kill", "--session=tmux:it's"}},
		{"procwalk session 'tmux:my", []string{"session", "tmux:my proj"}},
		{"procwalk kill --session tmux:名", []string{"kill", "--session", "tmux:" + named["名"]}},
		{"procwalk ps --sort c", []string{"ps", "--sort", "cpu"}},
		{"procwalk sessions --kind tmux,ag", []string{"sessions", "--kind", "tmux,agent"}},
		{"procwalk top --view s", []string{"top", "--view", "sessions"}},
		{"procwalk telegraf --execd --signal no", []string{"telegraf", "--execd", "--signal", "none"}},
		{"procwalk run growth-", []string{"run", "growth-watch"}},
		{"procwalk completion fi", []string{"completion", "fish"}},
		{"procwalk --sour", []string{"--source"}},
	}
	home := t.TempDir()
	env := []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + home, "TERM=xterm", "LANG=C.UTF-8",
		"PROCWALK_TMUX_SOCKET=" + names.socket, "PROCWALK_SOURCE=proc"}
	const wrapper = `procwalk() { if [ "$1" = __complete ]; then command procwalk "$@"; else printf 'ARGS:'; printf '[%s]' "$@"; echo ':END'; fi; }`
	writeFile := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fish, _ := exec.Command(bin, "completion", "fish").Output()
	writeFile(filepath.Join(home, "bashrc"), "PS1='$ '\neval \"$(command procwalk completion bash)\"\n"+wrapper+"\n")
	writeFile(filepath.Join(home, ".zshrc"), "PS1='$ '\nautoload -Uz compinit && compinit -u -D\neval \"$(command procwalk completion zsh)\"\n"+wrapper+"\n")
	writeFile(filepath.Join(home, ".config/fish/completions/procwalk.fish"), string(fish))
	// A first fish in a HOME without generated_completions starts a
	// python job in the background, disowned, that writes completions
	// from every man page there: still writing when the test ends, it kept
	// the TempDir from being removed. With the directory present, fish
	// starts none.
	if err := os.MkdirAll(filepath.Join(home, ".local/share/fish/generated_completions"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(filepath.Join(home, ".config/fish/config.fish"), `function fish_prompt; echo '$ '; end
function procwalk
    if test "$argv[1]" = __complete
        command procwalk $argv
    else
        printf 'ARGS:'; printf '[%s]' $argv; echo ':END'
    end
end
`)
	for _, sh := range []struct{ name, cmd string }{
		{"bash", "bash --noprofile --rcfile " + filepath.Join(home, "bashrc") + " -i"},
		{"zsh", "zsh -i"},
		{"fish", "fish -i"},
	} {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := exec.LookPath(sh.name); err != nil {
				t.Skipf("no %s", sh.name)
			}
			pane := newTmux(t, fmt.Sprintf("procwalk-%s-%d", sh.name, os.Getpid()))
			pane.run("new-session", "-d", "-x", "200", "-y", "50", "env -i "+strings.Join(shellQuoteAll(append(env, "ZDOTDIR="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))), " ")+" "+sh.cmd)
			pane.run("set-option", "-g", "history-limit", "5000")
			for i, c := range cases {
				// Keys are read in order: the completion, run at <Tab>,
				// is done before the shell reads <Enter>.
				pane.run("send-keys", "-l", c.typed)
				pane.run("send-keys", "Tab", "Enter")
				lines := pane.waitLines("ARGS:", i+1)
				want := "ARGS:[" + strings.Join(c.args, "][") + "]:END"
				if got := lines[i]; got != want {
					t.Errorf("%q<Tab>: ran %s, want %s", c.typed, got, want)
				}
			}
		})
	}
}

// shellQuoteAll single-quotes each word for sh.
func shellQuoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return out
}
