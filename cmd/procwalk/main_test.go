//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// The tests run the command on the engine's fixture /proc (see
// procwalk/testdata and its description in procwalk/snapshot_test.go):
//
//	1 systemd (root)
//	├─ 100 tmux: server ─┬─ 101 bash ─ 110 make ─ 111 cc1
//	│                    └─ 102 bash ─ 120 python3 ─ 121 zombie
//	├─ 200..205 adversarial comms, 303 badfiles (malformed status and io)
//	2 kthreadd ─ 3 kworker;  400 orphan (parent 300 gone mid-scan)
//
// and a passwd naming uid 0 root and uid 1000 dev.
const (
	fixtureProc   = "../../procwalk/testdata/proc"
	fixturePasswd = "testdata/passwd"
)

// fixtureNote is the stderr line for a scan of the fixture without status
// (301 and 302 are dropped as malformed, 300 is gone).
const fixtureNote = "procwalk: partial data: 1 process exited mid-scan; 2 processes with malformed /proc files (2 left out: bad stat or statm)\n"

// fixtureNoteStatus adds 303, whose status and io are malformed.
const fixtureNoteStatus = "procwalk: partial data: 1 process exited mid-scan; 3 processes with malformed /proc files (2 left out: bad stat or statm)\n"

type result struct {
	stdout, stderr string
	code           int
}

// cli runs the command as main would, with no PROCWALK_* variable from the
// test's own environment leaking in.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return cliContext(t, context.Background(), args...)
}

func cliContext(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	return cliClock(t, ctx, procwalk.SystemClock{}, args...)
}

// cliAt runs the command on a clock that reads now when it starts: ages in
// the fixture's output then read the same whatever today's date.
func cliAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	return cliClock(t, context.Background(), procwalk.NewOffsetClock(now), args...)
}

func cliClock(t *testing.T, ctx context.Context, clock procwalk.Clock, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, clock: utcClock{clock}, sentinel: testSentinelCommand()}
	err := runEnv(ctx, e, args)
	return result{stdout.String(), stderr.String(), exitCode(err)}
}

// utcClock reads c in UTC: the times commands print are in the clock's zone
// (the machine's, from the system clock), and goldens must not depend on
// the zone of the machine running the tests.
type utcClock struct{ c procwalk.Clock }

func (u utcClock) Now() time.Time { return u.c.Now().UTC() }

// fixtureBoot is the fixture's btime (procwalk/testdata/*/proc/stat): its
// processes started a few seconds after it.
func fixtureBoot() time.Time { return time.Unix(1700000000, 0) }

// clearEnv blanks every PROCWALK_* variable for the test (ff ignores empty
// values), so a developer's own settings cannot change results.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "PROCWALK_") {
			t.Setenv(name, "")
		}
	}
}

// fixture prefixes args with the fixture's --proc and --passwd.
func fixture(args ...string) []string {
	return append([]string{"--proc", fixtureProc, "--passwd", fixturePasswd}, args...)
}

// needPages4K skips tests whose literal byte sizes assume 4 KiB pages (the
// fixture's statm counts pages; amd64 and most arm64 kernels use 4 KiB).
func needPages4K(t *testing.T) {
	if os.Getpagesize() != 4096 {
		t.Skipf("fixture sizes assume 4096-byte pages, this host has %d", os.Getpagesize())
	}
}

func TestExitCodes(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring of stderr
	}{
		{"unknown global flag", []string{"--bogus"}, exitUsage, "unknown flag --bogus"},
		{"unknown ps flag", fixture("ps", "--bogus"), exitUsage, "unknown flag --bogus"},
		{"unknown tree flag", fixture("tree", "-x"), exitUsage, "unknown flag --x"},
		{"a typo in a flag", fixture("ps", "--srot", "cpu"), exitUsage, "unknown flag --srot: did you mean --sort?"},
		{"a typo in a global flag", []string{"--kinds", "tmux"}, exitUsage, "unknown flag --kinds: did you mean --kind?"},
		{"a typo in a command", []string{"sesions"}, exitUsage, `unknown command "sesions": did you mean sessions, session?`},
		{"unknown command", []string{"nope"}, exitUsage, `unknown command "nope": run 'procwalk --help' for the list`},
		{"bad duration", fixture("ps", "--interval", "soon"), exitUsage, `--interval "soon": want a duration such as 10s, 500ms or 2m`},
		{"zero interval with rates", fixture("ps", "--interval", "0s"), exitUsage, "--interval 0s: rates need two samples a positive time apart"},
		{"ps argument", fixture("ps", "bash"), exitUsage, `ps takes no arguments, got "bash"`},
		{"missing root", []string{"--proc", "/nope", "ps"}, exitError, "/nope has no stat file"},
		{"missing root after command", []string{"tree", "--proc", "/nope/proc"}, exitError, "/nope/proc has no stat file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr does not mention %q:\n%s", tt.stderr, r.stderr)
			}
			if r.code != exitOK && r.stdout != "" {
				t.Errorf("a failed run wrote to stdout:\n%s", r.stdout)
			}
		})
	}
}

// Help asked for goes to stdout with exit 0 (procwalk --help | less); a
// parse error is one line on stderr, without the help.
func TestHelpAndVersion(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{{"--help"}, {"ps", "-h"}, {"tree", "--help"}, {"help", "tree"}, {"help"}, {"help", "help"}, {"kill", "42", "--help"}} {
		r := cli(t, args...)
		if r.code != exitOK || r.stderr != "" || !strings.Contains(r.stdout, "EXIT CODES") {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want 0, help on stdout", args, r.code, r.stderr, len(r.stdout))
		}
	}
	if r := cli(t, "watch", "--help"); !strings.Contains(r.stdout, "-interval 10s") || !strings.Contains(r.stdout, "refused: watch measures rates between its ticks") {
		t.Errorf("watch --help does not show its 10 s default tick, or offers --no-rates:\n%s", r.stdout)
	}
	if r := cli(t, "help", "tree"); !strings.Contains(r.stdout, "procwalk tree [flags] [PID]") {
		t.Errorf("help tree is not tree's help:\n%s", r.stdout)
	}
	r := cli(t, "--version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "procwalk ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("--version: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, args := range [][]string{{"--bogus"}, fixture("ps", "--bogus"), fixture("sessions", "--limit", "x"), {"help", "ps", "tree"}} {
		r := cli(t, args...)
		if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
}

// A missing root is one line naming the path and the fix, nothing else.
func TestMissingRootIsOneLine(t *testing.T) {
	clearEnv(t)
	r := cli(t, "--proc", "/nope", "ps", "--no-rates")
	want := "procwalk: not a proc filesystem: /nope has no stat file; mount procfs there (mount -t proc proc /nope) or pass --proc with the right root\n"
	if r.stderr != want || r.code != exitError {
		t.Errorf("exit %d, stderr %q; want exit 1, %q", r.code, r.stderr, want)
	}
}

// firstLine is the header of a table.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Plain "procwalk" runs the default command, needing no config.
func TestNoArgumentsRunsDefaultCommand(t *testing.T) {
	clearEnv(t)
	t.Setenv("PROCWALK_PROC", fixtureProc)
	t.Setenv("PROCWALK_PASSWD", fixturePasswd)
	t.Setenv("PROCWALK_INTERVAL", "10ms")
	plain := cli(t)
	named := cli(t, defaultCommand)
	if plain.code != exitOK || named.code != exitOK {
		t.Fatalf("exit %d and %d: %s%s", plain.code, named.code, plain.stderr, named.stderr)
	}
	if firstLine(plain.stdout) != firstLine(named.stdout) || plain.stdout == "" {
		t.Errorf("procwalk printed\n%q\nprocwalk %s printed\n%q", firstLine(plain.stdout), defaultCommand, firstLine(named.stdout))
	}
	// The default command takes its own flags without its name.
	for _, args := range [][]string{{"--kind", "user", "--no-rates"}, {"--no-rates", "--kind", "sid"}} {
		plain, named := cli(t, args...), cli(t, append([]string{defaultCommand}, args...)...)
		if plain.code != exitOK || plain.stdout != named.stdout {
			t.Errorf("procwalk %v: exit %d, stderr %q; want what procwalk %s %v prints", args, plain.code, plain.stderr, defaultCommand, args)
		}
	}
	if r := cli(t, "--json", "--no-rates"); r.code != exitOK || !strings.HasPrefix(r.stdout, "{") || !strings.Contains(r.stdout, `"sessions": [`) {
		t.Errorf("procwalk --json: exit %d, stderr %q", r.code, r.stderr)
	}
	// A flag's value that is also a command's name is a value: tree is a
	// kind and a command.
	plain, named = cli(t, "--kind", "tree", "--tree", "build=110", "--no-rates"), cli(t, defaultCommand, "--kind", "tree", "--tree", "build=110", "--no-rates")
	if plain.code != exitOK || plain.stdout != named.stdout || !strings.HasPrefix(withoutHeader(plain.stdout), "tree  build ") {
		t.Errorf("procwalk --kind tree: exit %d, stderr %q\n%s", plain.code, plain.stderr, plain.stdout)
	}
	// A command's flag written before its name: one line saying where it
	// goes.
	r := cli(t, "--kind", "tmux", "sessions")
	if want := "procwalk: --kind is a flag of sessions: write it after the command's name (procwalk sessions --kind ...)\n"; r.code != exitUsage || r.stderr != want {
		t.Errorf("procwalk --kind tmux sessions: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
}

// withoutHeader is out without its header line.
func withoutHeader(out string) string {
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}

// Global flags with no command name go to the default command, and beat
// the environment there.
func TestGlobalFlagsWithoutCommand(t *testing.T) {
	clearEnv(t)
	t.Setenv("PROCWALK_PROC", "/nope/from-env")
	plain := cli(t, fixture("--pss", "--interval", "5ms")...)
	named := cli(t, fixture(defaultCommand, "--pss", "--interval", "5ms")...)
	if plain.code != exitOK || named.code != exitOK {
		t.Fatalf("exit %d and %d: %s%s", plain.code, named.code, plain.stderr, named.stderr)
	}
	if h := firstLine(plain.stdout); h != firstLine(named.stdout) || !strings.Contains(h, "PSS") {
		t.Errorf("header %q, want %q with PSS", h, firstLine(named.stdout))
	}
}

// An interrupt says what interrupted, as main's context does ("interrupt
// signal received"), not Go's "context canceled".
func TestInterruptedWhileSampling(t *testing.T) {
	clearEnv(t)
	for _, command := range []string{"ps", "sessions", "telegraf"} {
		ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errors.New("interrupt signal received"))
		start := time.Now()
		args := fixture(command, "--interval", "1m")
		if command == "telegraf" {
			args = append(args, "--rates")
		}
		r := cliContext(t, ctx, args...)
		cancel()
		if want := "procwalk: interrupted while sampling rates over --interval 1m0s: interrupt signal received\n"; r.code != exitError || r.stderr != want {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", command, r.code, r.stderr, want)
		}
		if time.Since(start) > 30*time.Second {
			t.Errorf("%s: cancelling took %v: the interval wait ignores the context", command, time.Since(start))
		}
	}
}

// At a terminal the interrupted message starts a line of its own: the
// terminal echoed ^C where it would have started.
func TestInterruptedAtTerminalStartsALine(t *testing.T) {
	clearEnv(t)
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout strings.Builder
	err := run(ctx, fixture("ps", "--interval", "1m"), strings.NewReader(""), &stdout, slave)
	if code := exitCode(err); code != exitError {
		t.Fatalf("exit %d, want 1", code)
	}
	// The tty layer may hand the output to the master in pieces (a loaded
	// machine saw "\r\n" alone first): read until the message is in. The
	// deadline only keeps a broken test from hanging.
	master.SetReadDeadline(time.Now().Add(time.Minute))
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(out, []byte("sampling rates")) {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out = append(out, buf[:n]...)
	}
	// The terminal turns "\n" into "\r\n".
	if got := string(out); !strings.HasPrefix(got, "\r\nprocwalk: interrupted while sampling rates") {
		t.Errorf("terminal got %q; want a line break before the message", got)
	}
}

// pidColumn returns the first field of each line after the header.
func pidColumn(out string) string {
	var pids []string
	for _, l := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			pids = append(pids, f[0])
		}
	}
	return strings.Join(pids, " ")
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "procwalk.conf")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Flags beat env, env beats the config file, for global flags written
// before or after the command name and for command flags alike.
func TestFlagEnvConfigPrecedence(t *testing.T) {
	conf := writeConfig(t, "# procwalk defaults\n"+
		"proc /nope/from-file\n"+
		"passwd "+fixturePasswd+"\n"+
		"--sort pid   # leading dashes are fine\n"+
		"columns pid\n"+
		"no-rates\n")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		pids string
	}{
		{"file alone: its bad proc root fails", nil, []string{"--config", conf, "ps"}, exitError, ""},
		{"env beats file", map[string]string{"PROCWALK_PROC": fixtureProc}, []string{"--config", conf, "ps"},
			exitOK, "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"config file named by env", map[string]string{"PROCWALK_PROC": fixtureProc, "PROCWALK_CONFIG": conf}, []string{"ps"},
			exitOK, "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"env sort beats file sort", map[string]string{"PROCWALK_PROC": fixtureProc, "PROCWALK_SORT": "age"}, []string{"ps", "--config", conf},
			exitOK, "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"flag sort beats env sort", map[string]string{"PROCWALK_PROC": fixtureProc, "PROCWALK_SORT": "age"}, []string{"ps", "--config", conf, "--sort", "rss"},
			exitOK, "111 120 1 110 100 102 101 400 303 205 204 203 202 201 200 121"},
		{"flag before the command beats env", map[string]string{"PROCWALK_PROC": "/nope/from-env"}, []string{"--proc", fixtureProc, "--config", conf, "ps"},
			exitOK, "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"flag after the command beats env", map[string]string{"PROCWALK_PROC": "/nope/from-env"}, []string{"--config", conf, "ps", "--proc", fixtureProc},
			exitOK, "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"env beats file, file's other lines still apply", map[string]string{"PROCWALK_PROC": fixtureProc, "PROCWALK_USER": "root"}, []string{"--config", conf, "ps"},
			exitOK, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			r := cli(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, tt.code, r.stderr)
			}
			if tt.code != exitOK {
				if !strings.Contains(r.stderr, "/nope/from-file") {
					t.Errorf("stderr does not name the config file's root: %s", r.stderr)
				}
				return
			}
			if got := pidColumn(r.stdout); got != tt.pids {
				t.Errorf("pids %s\nwant %s", got, tt.pids)
			}
			if !strings.HasPrefix(r.stdout, "PID\n") {
				t.Errorf("--columns from the file not applied:\n%s", r.stdout)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	clearEnv(t)
	long := "filter " + strings.Repeat("x", 70<<10) + "\n"
	tests := []struct {
		name   string
		text   string
		stderr string
	}{
		{"unknown flag", "sortt rss\n", `unknown flag "sortt": no procwalk command has it`},
		// ff's PlainParser would stop reading at this line without an
		// error, silently dropping "proc /nope" below it.
		{"line over 64 KiB", long + "proc /nope\n", "line 1 is 71688 bytes, over the 16384-byte limit"},
		{"line over 16 KiB", "# ok\n" + "filter " + strings.Repeat("y", 17<<10) + "\n", "line 2 is 17416 bytes"},
		{"nested config", "config /etc/other.conf\n", "cannot name another one"},
		{"bad value", "# c\ninterval soon\n", `line 2: interval "soon": want a duration such as 10s, 500ms or 2m`},
		// A shared file must not switch off every kill's safety.
		{"force", "force true\n", "sets force, which is taken from the command line only"},
		{"yes", "yes\n", "sets yes, which is taken from the command line only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := writeConfig(t, tt.text)
			r := cli(t, fixture("--config", conf, "ps", "--no-rates")...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d", r.code, exitUsage)
			}
			if !strings.Contains(r.stderr, tt.stderr) || !strings.Contains(r.stderr, conf) {
				t.Errorf("stderr should name %s and say %q:\n%s", conf, tt.stderr, r.stderr)
			}
		})
	}

	r := cli(t, fixture("--config", "/nope/procwalk.conf", "ps")...)
	want := "procwalk: cannot read config file /nope/procwalk.conf: no such file or directory; fix --config or PROCWALK_CONFIG\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("missing config file: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
}

// --yes and --force switch off a kill's safety: never from env. The test
// names a pid of the fixture; nothing is signalled (exit 2 before any scan).
func TestKillSafetyFlagsFromCommandLineOnly(t *testing.T) {
	clearEnv(t)
	for _, env := range []string{"PROCWALK_YES", "PROCWALK_FORCE"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "true")
			r := cli(t, fixture("kill", "--dry-run", "111")...)
			if r.code != exitUsage || !strings.Contains(r.stderr, env+`="true" is not read`) {
				t.Errorf("exit %d, stderr %q; want 2 and the variable named", r.code, r.stderr)
			}
		})
	}
}

// One config file serves every command: tree skips ps's lines.
func TestConfigFileSharedByCommands(t *testing.T) {
	clearEnv(t)
	conf := writeConfig(t, "sort pid\nregex ^bash$\nproc "+fixtureProc+"\n")
	r := cli(t, "--config", conf, "tree", "101")
	if r.code != exitOK || !strings.Contains(r.stdout, "└─ make") {
		t.Errorf("tree with a ps config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestBadEnvVar(t *testing.T) {
	clearEnv(t)
	t.Setenv("PROCWALK_INTERVAL", "fast")
	r := cli(t, fixture("ps")...)
	want := "procwalk: PROCWALK_INTERVAL=\"fast\": --interval wants a duration such as 10s, 500ms or 2m; fix or unset PROCWALK_INTERVAL\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	// The command line's value wins: the variable is not read.
	if r := cli(t, fixture("ps", "--interval", "1ms")...); r.code != exitOK {
		t.Errorf("--interval given: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A value that parses but is wrong (an unknown kind) is named by where it
// came from: the config file and line, or the env var, never a --kind that
// was not typed. Exit 2 wherever it came from.
func TestBadValueNamesItsSource(t *testing.T) {
	clearEnv(t)
	conf := writeConfig(t, "# defaults\npss\nkind bogus\n")
	r := cli(t, fixture("--config", conf)...)
	want := "procwalk: config file " + conf + " line 3: kind \"bogus\": unknown session kind: kinds are "
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("config: exit %d, stderr %q; want 2, %q...", r.code, r.stderr, want)
	}
	t.Setenv("PROCWALK_KIND", "bogus")
	r = cli(t, fixture("sessions")...)
	want = "procwalk: PROCWALK_KIND: kind \"bogus\": unknown session kind: kinds are "
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("env: exit %d, stderr %q; want 2, %q...", r.code, r.stderr, want)
	}
	r = cli(t, fixture("sessions", "--kind", "nope")...)
	want = "procwalk: --kind \"nope\": unknown session kind: kinds are "
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("flag: exit %d, stderr %q; want 2, %q...", r.code, r.stderr, want)
	}
	// A flag watch refuses, from a config file shared with sessions.
	conf = writeConfig(t, "no-rates\n")
	r = cli(t, fixture("watch", "--config", conf, "zombies")...)
	want = "procwalk: config file " + conf + " line 1: no-rates does not apply to watch: rates are measured between ticks\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("watch with no-rates in the config: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	// ps's sort and columns that need rates, beside --no-rates: the text
	// names the env var or the config line that set them.
	t.Setenv("PROCWALK_SORT", "read")
	r = cli(t, fixture("ps", "--no-rates")...)
	want = "procwalk: PROCWALK_SORT: sort read needs rates, which --no-rates turns off: drop one of them\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("env sort needing rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	os.Unsetenv("PROCWALK_SORT")
	conf = writeConfig(t, "columns pid,read\n")
	r = cli(t, fixture("ps", "--config", conf, "--no-rates")...)
	want = "procwalk: config file " + conf + " line 1: columns read needs rates, which --no-rates turns off: drop one of them\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("config columns needing rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
}

// The other side of a conflict, --no-rates beside a sort that needs rates
// (or telegraf's --signal none, --rates, beside --interval 0), is named
// where it was set: an env var or a config line is what to drop.
func TestConflictNamesItsSource(t *testing.T) {
	clearEnv(t)
	t.Setenv("PROCWALK_NO_RATES", "1")
	r := cli(t, fixture("ps", "--sort", "cpu")...)
	want := "procwalk: --sort cpu needs rates, which PROCWALK_NO_RATES turns off: drop one of them\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("ps sort needing rates beside env no-rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	os.Unsetenv("PROCWALK_NO_RATES")
	conf := writeConfig(t, "# sessions\nno-rates\n")
	r = cli(t, fixture("sessions", "--config", conf, "--sort", "cpu")...)
	want = "procwalk: --sort cpu needs rates, which no-rates (config file " + conf + " line 2) turns off: drop one of them\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("sessions sort needing rates beside config no-rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	r = cli(t, fixture("sessions", "--no-rates", "--sort", "cpu")...)
	want = "procwalk: --sort cpu needs rates, which --no-rates turns off: drop one of them\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("sessions sort needing rates beside --no-rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	t.Setenv("PROCWALK_RATES", "true")
	r = cli(t, fixture("telegraf", "--interval", "0s")...)
	want = "procwalk: --interval 0s: PROCWALK_RATES needs two samples a positive time apart, such as 1s\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("telegraf with env rates: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
	os.Unsetenv("PROCWALK_RATES")
	conf = writeConfig(t, "signal none\n")
	r = cli(t, fixture("telegraf", "--execd", "--config", conf, "--interval", "0s")...)
	want = "E! --interval 0s: signal none (config file " + conf + " line 1) gathers every --interval, which must be positive, such as 10s\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("telegraf --execd with config signal none: exit %d, stderr %q; want 2, %q", r.code, r.stderr, want)
	}
}

// run is the command line on the given streams, the way tests drive it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := newEnv(stdin, stdout, stderr)
	e.sentinel = testSentinelCommand()
	return runEnv(ctx, e, args)
}

// sentinelProcessEnv makes the test binary a sentinel (TestSentinelProcess).
const sentinelProcessEnv = "GO_PROCWALK_SENTINEL"

// testSentinelCommand starts the test binary as the sentinel of the kills
// that tests run in-process: the procwalk binary's own is itself.
func testSentinelCommand() kill.SentinelCommand {
	return kill.SentinelCommand{Path: os.Args[0], Args: []string{"-test.run=^TestSentinelProcess$"},
		Env: append(os.Environ(), sentinelProcessEnv+"=1")}
}

func TestSentinelProcess(t *testing.T) {
	if os.Getenv(sentinelProcessEnv) != "1" {
		t.Skip("the sentinel process of in-process kills")
	}
	if err := runSentinel(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
