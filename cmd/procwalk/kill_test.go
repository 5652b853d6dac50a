//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Dry runs over the fixture /proc print exactly what would be signalled;
// nothing can be signalled there anyway (its pids are not this machine's).

func TestKillDryRunTree(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("kill", "--dry-run", "--tree", "101")...)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "would" || f[1] != "signal" || !strings.Contains(l, "signals TERM,KILL") {
			t.Errorf("line %q, want 'would signal pid N (comm) signals TERM,KILL ...'", l)
			continue
		}
		got = append(got, f[3]+" "+f[4])
	}
	if want := []string{"101 (bash)", "110 (make)", "111 (cc1)"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("would signal %v, want %v", got, want)
	}
}

func TestKillDryRunJSON(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("kill", "--dry-run", "--json", "--signal", "INT", "--grace", "2s", "110")...)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var e struct {
		PID        int      `json:"pid"`
		StartTicks uint64   `json:"start_ticks"`
		Comm       string   `json:"comm"`
		Signals    []string `json:"signals"`
		Outcome    string   `json:"outcome"`
		Requester  string   `json:"requester"`
		DryRun     bool     `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("%v in %q", err, r.stdout)
	}
	if e.PID != 110 || e.Comm != "make" || fmt.Sprint(e.Signals) != "[INT KILL]" || e.Outcome != "dry_run" || !e.DryRun || e.Requester != "cli" || e.StartTicks == 0 {
		t.Errorf("event %+v", e)
	}
}

func TestKillRefusals(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"pid 1 even forced", []string{"--force", "1"}, "pid 1 (init) is never signalled"},
		{"kernel thread", []string{"3"}, "kernel thread"},
		{"tmux server", []string{"100"}, `protected name "tmux: server"`},
		{"tmux server: the way out, in words", []string{"100"}, "kill --force overrides the protected list"},
		{"reused pid", []string{"110@1"}, "pid now belongs to another process"},
		{"the tree of pid 1", []string{"--force", "--tree", "1"}, "it runs under pid 1 (systemd), which is protected, in the tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, fixture(append([]string{"kill", "--dry-run"}, tt.args...)...)...)
			if r.code != exitError || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("exit %d, want 1 mentioning %q; stdout:\n%s\nstderr:\n%s", r.code, tt.want, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "would signal") {
				t.Errorf("a refused target is listed as to be signalled:\n%s", r.stdout)
			}
		})
	}
	// --force lifts the protected list, not the hard rules.
	r := cli(t, fixture("kill", "--dry-run", "--force", "100")...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "would signal pid 100 (tmux: server)") {
		t.Errorf("forced tmux server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestKillUsageErrors(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"kill"}, "exactly one target"},
		{[]string{"kill", "--tree", "101", "110"}, "exactly one target"},
		{[]string{"kill", "1", "2"}, "exactly one target"},
		{[]string{"kill", "abc"}, `PID "abc": want a positive pid`},
		{[]string{"kill", "--tree", "-3"}, `--tree "-3"`},
		{[]string{"kill", "--pgrp", "-3"}, "--pgrp -3"},
		{[]string{"kill", "--signal", "TERMINATE", "110"}, `--signal: bad signal "TERMINATE"`},
		{[]string{"kill", "--grace", "0s", "110"}, "--grace 0s"},
		{[]string{"kill", "--protect", "[", "110"}, "--protect: bad protected pattern"},
		{[]string{"kill", "--session", "nokind:x"}, "--session"},
		{[]string{"kill", "--session", "tree:x"}, "use --tree PID"},
		// Refused since --kill-tmux-session's check runs for every kind
		// (it was ignored for a process group, and the group killed).
		{[]string{"kill", "--session", "pgrp:81", "--kill-tmux-session"}, "--kill-tmux-session applies to tmux sessions, not pgrp:81"},
	}
	for _, tt := range tests {
		r := cli(t, fixture(tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 mentioning %q; stderr:\n%s", tt.args, r.code, tt.want, r.stderr)
		}
	}
	if r := cli(t, fixture("kill", "4000")...); r.code != exitError || !strings.Contains(r.stderr, "pid 4000 is not running") {
		t.Errorf("missing pid: exit %d\n%s", r.code, r.stderr)
	}
}

// Without a terminal, several targets need --yes: refused before anything
// is opened. The fixture's pids are not signalable anyway; the refusal
// must come first and say why.
func TestKillRefusesManyWithoutTerminal(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("kill", "--tree", "101")...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "refusing to signal 3 processes without confirmation: stdin is not a terminal") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "make") || !strings.Contains(r.stderr, "cc1") {
		t.Errorf("targets not listed:\n%s", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing done", r.stdout)
	}
}

// Real processes from here on: started by the test, in their own group.

func TestIntegrationKillTree(t *testing.T) {
	integration(t)
	clearEnv(t)
	// The shell ignores TERM; its children obey TERM (env resets the
	// disposition they would inherit). Once they are gone the shell becomes
	// a TERM-ignoring sleep, same pid, which only SIGKILL ends.
	cmd := startGroup(t, `trap "" TERM; env --default-signal=TERM sleep 300 & env --default-signal=TERM sleep 301 & wait; exec sleep 302`, "kill-tree-test")
	root := cmd.Process.Pid
	waitChildren(t, root, 2)
	// A generous grace: the sleeps must be seen gone within it to count as
	// exited; the TERM-ignoring shell makes the test wait all of it.
	r := cli(t, "kill", "--yes", "--grace", "2s", "--tree", strconv.Itoa(root))
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 outcome lines:\n%s", r.stdout)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		want := "exited"
		if f[2] == strconv.Itoa(root) {
			want = "killed"
		}
		if f[0] != want {
			t.Errorf("%q: want %s", l, want)
		}
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("shell ended with %v, want SIGKILL", err)
	}
}

// waitChildren waits until pid has n children.
func waitChildren(t *testing.T, pid, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(childrenOf(t, pid)) >= n {
			return
		}
	}
	t.Fatalf("pid %d never had %d children", pid, n)
}

// childrenOf lists the pids whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	return childrenByParent(t, false)[pid]
}

// childrenByParent maps each pid to its children's, from one pass over
// /proc's stat files; live leaves zombies out (their children have been
// handed to a reaper already).
func childrenByParent(t *testing.T, live bool) map[int][]int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := make(map[int][]int)
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || live && f[0] == "Z" {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], child)
		}
	}
	return children
}

// TestIntegrationKillConfirmOnTerminal answers the y/N question through a
// pseudo-terminal: "n" leaves the processes alone, "y" ends them.
func TestIntegrationKillConfirmOnTerminal(t *testing.T) {
	integration(t)
	clearEnv(t)
	cmd := startGroup(t, `sleep 300 & sleep 301 & wait`, "kill-confirm-test")
	waitChildren(t, cmd.Process.Pid, 2)
	pgrp := strconv.Itoa(cmd.Process.Pid)

	for _, tt := range []struct {
		answer string
		code   int
		alive  bool
	}{{"n\n", exitError, true}, {"y\n", exitOK, false}} {
		master, slave := openPTY(t)
		if _, err := master.WriteString(tt.answer); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		err := run(context.Background(), []string{"kill", "--grace", "2s", "--pgrp", pgrp}, slave, &stdout, &stderr)
		if code := exitCode(err); code != tt.code {
			t.Fatalf("answer %q: exit %d, want %d\n%s%s", tt.answer, code, tt.code, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), "Send TERM (then KILL after 2s) to these 3 processes? [y/N]") {
			t.Errorf("no question on stderr:\n%s", stderr.String())
		}
		alive := unix.Kill(cmd.Process.Pid, 0) == nil && len(childrenOf(t, cmd.Process.Pid)) == 2
		if alive != tt.alive {
			t.Errorf("answer %q: processes alive = %v, want %v\n%s", tt.answer, alive, tt.alive, stdout.String())
		}
		master.Close()
		slave.Close()
	}
}

// Ctrl-C at the y/N question (the context cancelled, as main's signal
// handler does) signals nothing and says so in words, not as "context
// canceled". The cancel comes from the prompt's own write: no timing.
func TestIntegrationKillConfirmInterrupted(t *testing.T) {
	integration(t)
	clearEnv(t)
	cmd := startGroup(t, `sleep 300 & sleep 301 & wait`, "kill-interrupt-test")
	waitChildren(t, cmd.Process.Pid, 2)
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout strings.Builder
	stderr := &cancelAtPrompt{marker: "[y/N] ", cancel: cancel}
	err := run(ctx, []string{"kill", "--grace", "2s", "--pgrp", strconv.Itoa(cmd.Process.Pid)}, slave, &stdout, stderr)
	if code := exitCode(err); code != exitError {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	if want := "procwalk: not confirmed (interrupted): nothing was signalled\n"; !strings.HasSuffix(stderr.String(), want) || strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("stderr ends %q, want %q", stderr.String(), want)
	}
	if stdout.String() != "" || len(childrenOf(t, cmd.Process.Pid)) != 2 {
		t.Errorf("something was signalled:\n%s", stdout.String())
	}
}

// cancelAtPrompt collects what is written and calls cancel once it holds
// marker.
type cancelAtPrompt struct {
	strings.Builder
	marker string
	cancel context.CancelFunc
}

func (w *cancelAtPrompt) Write(b []byte) (int, error) {
	n, err := w.Builder.Write(b)
	if strings.Contains(w.String(), w.marker) {
		w.cancel()
	}
	return n, err
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestIntegrationKillTmuxSession ends one session of a tmux server the test
// starts on its own socket, and leaves the other session alone.
func TestIntegrationKillTmuxSession(t *testing.T) {
	integration(t)
	clearEnv(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	socket := fmt.Sprintf("procwalk-kill-test-%d", os.Getpid())
	tmux := func(args ...string) error {
		return exec.Command("tmux", append([]string{"-L", socket}, args...)...).Run()
	}
	if err := tmux("new-session", "-d", "-s", "victim", "sleep 1000"); err != nil {
		t.Fatalf("tmux: %v", err)
	}
	socketPath, _ := exec.Command("tmux", "-L", socket, "display-message", "-p", "#{socket_path}").Output()
	t.Cleanup(func() {
		tmux("kill-server")
		if p := strings.TrimSpace(string(socketPath)); p != "" {
			os.Remove(p) // kill-server may leave it behind
		}
	})
	// A pane whose process ignores TERM: only SIGKILL ends it.
	if err := tmux("split-window", "-t", "victim", `trap "" TERM; exec sleep 1001`); err != nil {
		t.Fatal(err)
	}
	if err := tmux("new-session", "-d", "-s", "bystander", "sleep 1002"); err != nil {
		t.Fatal(err)
	}
	waitPanesRun(t, socket, "sleep 1000", "sleep 1001", "sleep 1002")
	// The grace is generous: the sleep obeying TERM must be seen gone within
	// it to count as exited, not killed.
	r := cli(t, "kill", "--json", "--yes", "--grace", "3s", "--session", "tmux:victim", "--tmux-sockets", socket, "--kill-tmux-session")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct{ Args, Outcome, Session string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if e.Session != "tmux:victim" {
			t.Errorf("event session %q", e.Session)
		}
		got[e.Args] = e.Outcome
	}
	if want := map[string]string{"sleep 1000": "exited", "sleep 1001": "killed"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v (the bystander's sleep 1002 untouched)", got, want)
	}
	// tmux ends it at once; a minute only bounds a hang.
	for deadline := time.Now().Add(60 * time.Second); tmux("has-session", "-t", "=victim") == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("session victim still exists 60 s after the kill")
		}
	}
	if err := tmux("has-session", "-t", "=bystander"); err != nil {
		t.Errorf("bystander session is gone: %v", err)
	}
}

// waitPanesRun waits until the panes of the tmux server on socket are
// exactly processes running the command lines want, however loaded the
// machine. It looks at each pane's process itself: tmux's
// pane_current_command is no sign that the pane has started, since tmux
// falls back to the pane's own command when it cannot name the terminal's
// foreground process, which is the case while the pane's process is still
// the server's fork, before its exec. Such a process is named "tmux: server"
// and refused by kill as protected (a kill test failed so under load).
func waitPanesRun(t *testing.T, socket string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, err := exec.Command("tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
		got = got[:0]
		for _, pid := range strings.Fields(string(out)) {
			b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			got = append(got, strings.ReplaceAll(strings.TrimSuffix(string(b), "\x00"), "\x00", " "))
		}
		slices.Sort(got)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the panes run %q (%v), want %q", got, err, want)
		}
	}
}

// kill --kill-tmux-session of a session whose one pane ends on TERM: tmux
// ends the session with its pane, before or while procwalk asks it to. That
// is the success asked for, said once, never a tmux error: with another
// session on the server ("can't find session") and without one (the server
// exits with its last session: "no server running").
func TestIntegrationKillTmuxSessionEndedWithItsPane(t *testing.T) {
	integration(t)
	clearEnv(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	for _, bystander := range []bool{true, false} {
		t.Run(fmt.Sprintf("bystander=%v", bystander), func(t *testing.T) {
			socket := fmt.Sprintf("procwalk-ended-test-%d-%v", os.Getpid(), bystander)
			tmux := func(args ...string) error {
				return exec.Command("tmux", append([]string{"-L", socket}, args...)...).Run()
			}
			if err := tmux("new-session", "-d", "-s", "lone", "sleep 1003"); err != nil {
				t.Fatalf("tmux: %v", err)
			}
			socketPath, _ := exec.Command("tmux", "-L", socket, "display-message", "-p", "#{socket_path}").Output()
			t.Cleanup(func() {
				tmux("kill-server")
				if p := strings.TrimSpace(string(socketPath)); p != "" {
					os.Remove(p) // a server that ended with its last pane leaves it
				}
			})
			want := []string{"sleep 1003"}
			if bystander {
				if err := tmux("new-session", "-d", "-s", "other", "sleep 1004"); err != nil {
					t.Fatal(err)
				}
				want = append(want, "sleep 1004")
			}
			waitPanesRun(t, socket, want...)
			r := cli(t, "kill", "--yes", "--grace", "5s", "--session", "tmux:lone", "--tmux-socket", socket, "--kill-tmux-session")
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// Either tmux had not yet noticed (kill-session did it) or the
			// session had ended: one line, no tmux error.
			ended := strings.Count(r.stderr, "procwalk: tmux session lone ended with its last pane\n")
			killed := strings.Count(r.stderr, "procwalk: tmux kill-session -t lone\n")
			if ended+killed != 1 || strings.Contains(r.stderr, "can't find") || strings.Contains(r.stderr, "no server") || strings.Contains(r.stderr, "exit status") {
				t.Errorf("stderr:\n%s\nwant one line saying the session ended, no tmux error", r.stderr)
			}
			if bystander {
				if err := tmux("has-session", "-t", "=other"); err != nil {
					t.Errorf("session other is gone: %v", err)
				}
			}
		})
	}
}

// A process name holding a tab and an escape sequence reaches the terminal
// escaped: in kill's summary on stderr and in a Lua script's print. The
// test starts the process under that name (a copy of sleep) and signals
// nothing: the kill is refused (--protect), the script only prints.
func TestIntegrationHostileNameIsEscaped(t *testing.T) {
	integration(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	const name = "a\tb\x1b[31mc" // comm: the file name, 15 bytes at most
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", sleep, bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cmd := exec.Command(bin, "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := strconv.Itoa(cmd.Process.Pid)

	r := cli(t, "kill", "--protect", "a*", "--yes", pid)
	if r.code != exitError || strings.ContainsRune(r.stderr, '\x1b') || !strings.Contains(r.stderr, `a\tb\x1b[31mc`) {
		t.Errorf("kill of a protected hostile name: exit %d, stderr %q; want 1 and the name escaped", r.code, r.stderr)
	}
	script := filepath.Join(t.TempDir(), "names.lua")
	if err := os.WriteFile(script, []byte("local p = require('procwalk').process("+pid+")\nprint('name', p.comm)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "run", "--no-rates", script)
	// print keeps tabs, its own separators; the escape sequence is escaped.
	if r.code != exitOK || strings.ContainsRune(r.stdout, '\x1b') || !strings.Contains(r.stdout, "name\ta\t"+`b\x1b[31mc`) {
		t.Errorf("Lua print of a hostile name: exit %d, stdout %q; want the escape sequence escaped", r.code, r.stdout)
	}

	// guard names the command it ends.
	g := guard(t, "--timeout", "300ms", "--grace", "2s", "--", bin, "30")
	if g.code != exitLimit || strings.ContainsRune(g.stderr, '\x1b') || !strings.Contains(g.stderr, `terminating the tree of `+bin[:len(bin)-len(name)]+`a\tb\x1b[31mc`) {
		t.Errorf("guard of a hostile name: exit %d, stderr %q; want %d and the name escaped", g.code, g.stderr, exitLimit)
	}

	// A bundled script prints a zombie's name: a copy of true under the
	// hostile name, exited and not yet reaped by this test.
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true")
	}
	zbin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", trueBin, zbin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	zombie := exec.Command(zbin)
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	for deadline := time.Now().Add(60 * time.Second); !isZombie(zombie.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the copy of true never became a zombie")
		}
	}
	// The bundled scripts escape the names they lay out, tabs included
	// (procwalk.printable): the zombie, and the sleep as the one member
	// of a tree session.
	r = cli(t, "run", "--no-rates", "zombies")
	if r.code != exitOK || strings.ContainsRune(r.stdout, '\x1b') || !strings.Contains(r.stdout, `a\tb\x1b[31mc `+strconv.Itoa(zombie.Process.Pid)) {
		t.Errorf("zombies with a hostile name: exit %d, stdout %q; want the name escaped", r.code, r.stdout)
	}
	r = cli(t, "run", "--no-rates", "--tree", "hostile="+pid, "session-report", "--", "kind=tree", "top=1")
	if r.code != exitOK || strings.ContainsRune(r.stdout, '\x1b') || strings.ContainsRune(r.stdout, '\t') || !strings.Contains(r.stdout, `biggest: a\tb\x1b[31mc `+pid+" ") {
		t.Errorf("session-report with a hostile name: exit %d, stdout %q; want the name escaped", r.code, r.stdout)
	}
}

// A comm holding a newline cannot forge a line of procwalk's own: in
// kill's events on stdout and its summary on stderr it stays escaped. The
// process (a copy of sleep under that name) is protected: nothing is
// signalled.
func TestIntegrationNewlineNameCannotForgeALine(t *testing.T) {
	integration(t)
	clearEnv(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	const name = "e\nprocwalk: ok"
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", sleep, bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cmd := exec.Command(bin, "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitExec(t, cmd.Process.Pid, name)
	for _, args := range [][]string{{"kill", "--protect", "e*", "--yes"}, {"kill", "--dry-run"}} {
		r := cli(t, append(args, strconv.Itoa(cmd.Process.Pid))...)
		for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
			if strings.HasPrefix(line, "procwalk: ok") {
				t.Errorf("%v: a forged line %q:\n%s%s", args, line, r.stdout, r.stderr)
			}
		}
		if !strings.Contains(r.stdout+r.stderr, `e\nprocwalk: ok`) {
			t.Errorf("%v: the name is not shown escaped:\n%s%s", args, r.stdout, r.stderr)
		}
	}
}

// waitExec waits until pid's comm is comm: until it has exec'd.
func waitExec(t *testing.T, pid int, comm string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && string(b) == comm+"\n" {
			return
		}
	}
	t.Fatalf("pid %d never became %q", pid, comm)
}

// kill --session KIND:NAME@ID acts only while NAME still names the session
// the ID was taken from (its leader, pid 101 started at tick 150050).
func TestKillSessionRefID(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("kill", "--dry-run", "--session", "sid:101@101.150050")...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "would signal pid 101 (bash)") {
		t.Errorf("matching ID: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, fixture("kill", "--dry-run", "--session", "sid:101@101.1")...)
	want := "procwalk: session changed: sid:101 now names sid:101@101.150050, not sid:101@101.1 (its leader changed); look again and use the new name\n"
	if r.code != exitError || r.stdout != "" || !strings.Contains(r.stderr, want) {
		t.Errorf("stale ID: exit %d, want 1 with %q; stdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// kill --session user:NAME finds the user by the name procwalk sessions
// shows (from --passwd); it knew only uids ("user sessions are 0, 1000").
func TestKillSessionUserByName(t *testing.T) {
	clearEnv(t)
	byName := cli(t, fixture("kill", "--dry-run", "--session", "user:dev")...)
	byUID := cli(t, "--proc", fixtureProc, "--passwd", "/nonexistent", "kill", "--dry-run", "--session", "user:1000")
	// 13 members; the tmux server among them is refused (protected): exit 1.
	if byName.code != exitError || !strings.Contains(byName.stdout, "would signal pid 111 (cc1) signals TERM,KILL rss 117.2 MiB: KILL after 5s if still alive [cli, session user:dev]\n") ||
		!strings.Contains(byName.stderr, "1 of 13 targets not terminated (pid 100 (tmux: server) refused_protected)") {
		t.Fatalf("user:dev: exit %d\n%s%s", byName.code, byName.stdout, byName.stderr)
	}
	if byUID.code != byName.code || byUID.stdout != strings.ReplaceAll(byName.stdout, "user:dev", "user:1000") {
		t.Errorf("user:1000 without a passwd file: exit %d, want user:dev's\n%s%s", byUID.code, byUID.stdout, byUID.stderr)
	}
	r := cli(t, fixture("kill", "--dry-run", "--session", "user:nobody")...)
	if want := "user sessions are dev, root"; r.code != exitError || !strings.Contains(r.stderr, want) {
		t.Errorf("user:nobody: exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
}

// As another user, a dry run of a root process says a real run would be
// refused, as the real run is, not "would signal".
func TestIntegrationDryRunOfAnotherUsersProcess(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs procwalk as uid 65534 against a root process")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	bin := buildProcwalk(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitExec(t, cmd.Process.Pid, "sleep")
	for _, dry := range []bool{true, false} {
		args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", bin, "kill", strconv.Itoa(cmd.Process.Pid)}
		if dry {
			args = append(args, "--dry-run")
		}
		out, err := exec.Command(setpriv, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitError || !strings.HasPrefix(string(out), "refused_permission pid ") {
			t.Errorf("dry run %v: %v, want exit 1 and refused_permission:\n%s", dry, err, out)
		}
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the root process was signalled: %v", err)
	}
}

// Under hidepid another user's process is not in /proc: kill says it is
// hidden, not that it is not running. A pid namespace and a mount
// namespace of the test's own, with /proc mounted hidepid=2, a root sleep
// and procwalk as uid 65534; nothing is signalled.
func TestIntegrationKillHiddenProcess(t *testing.T) {
	integration(t)
	clearEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts proc with hidepid in a namespace of its own")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	bin := buildProcwalk(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `mount -t proc -o hidepid=2 proc /proc || exit 99
sleep 300 & s=$!
setpriv --reuid=65534 --regid=65534 --clear-groups "$0" kill --dry-run "$s"; echo "exit $?"
setpriv --reuid=65534 --regid=65534 --clear-groups "$0" kill --dry-run 4000000; echo "exit $?"
kill "$s"`
	out, err := exec.Command("unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script, bin).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 || err != nil && !strings.Contains(string(out), "exit") {
		t.Skipf("cannot mount proc hidepid=2 in a namespace here (%v): %s", err, out)
	}
	o := string(out)
	if !strings.Contains(o, "is hidden: it runs") || strings.Count(o, "exit 1") != 2 || strings.Count(o, "is not running") != 1 {
		t.Errorf("want the root sleep reported hidden, pid 4000000 not running, both exit 1:\n%s", o)
	}
}
