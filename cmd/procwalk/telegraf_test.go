//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk/session"
)

// The telegraf tests read the plugin's fixture /proc: systemd (1, root),
// kthreadd (2), and alice's bash (100) with two children, 101 whose comm
// and command line hold newlines, quotes, NULs and invalid UTF-8, and the
// zombie 102.
const (
	telegrafProc   = "../../plugin/testdata/proc"
	telegrafPasswd = "../../plugin/testdata/passwd"
)

func telegrafRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	clearEnv(t)
	var stdout, stderr bytes.Buffer
	base := []string{"telegraf", "--proc", telegrafProc, "--passwd", telegrafPasswd}
	err := run(context.Background(), append(base, args...), strings.NewReader(stdin), &stdout, &stderr)
	return result{stdout.String(), stderr.String(), exitCode(err)}
}

// measurements decodes line protocol strictly and returns each line's
// measurement and, for lines that have one, its session tag.
func measurements(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	dec := lineprotocol.NewDecoderWithBytes([]byte(out))
	for dec.Next() {
		m, err := dec.Measurement()
		if err != nil {
			t.Fatalf("bad line protocol: %v\n%s", err, out)
		}
		entry := string(m)
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatalf("bad tag: %v\n%s", err, out)
			}
			if k == nil {
				break
			}
			if string(k) == "session" || string(k) == "process_name" {
				entry += " " + string(v)
			}
		}
		for {
			k, _, err := dec.NextField()
			if err != nil {
				t.Fatalf("bad field: %v\n%s", err, out)
			}
			if k == nil {
				break
			}
		}
		got = append(got, entry)
	}
	if err := dec.Err(); err != nil {
		t.Fatalf("bad line protocol: %v\n%s", err, out)
	}
	if lines := strings.Count(out, "\n"); lines != len(got) {
		t.Fatalf("%d metrics on %d lines:\n%s", len(got), lines, out)
	}
	return got
}

func TestTelegrafExecMode(t *testing.T) {
	r := telegrafRun(t, "", "--session-kinds", "user", "--process-top", "1")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := []string{
		"procwalk_session alice", "procwalk_session root",
		"procwalk_process alice", "procwalk_process root",
		"procwalk",
	}
	if got := measurements(t, r.stdout); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
	// Escaped as the tables show it (evil\n), then as line protocol escapes
	// a string field (\\ and \").
	if !strings.Contains(r.stdout, `comm="evil\\n) x=1,y \"\\"`) {
		t.Errorf("the hostile comm is not sanitized and escaped as expected:\n%s", r.stdout)
	}
}

func TestTelegrafProcstatSchema(t *testing.T) {
	r := telegrafRun(t, "", "--schema", "procstat", "--procstat-exe", "^bash$", "--skip-self-metrics")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := []string{"procstat bash", "procstat_lookup"}
	if got := measurements(t, r.stdout); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
	if !strings.Contains(r.stdout, `user="alice"`) || !strings.Contains(r.stdout, "pid_count=1i") {
		t.Errorf("procstat output lacks the user or the lookup count:\n%s", r.stdout)
	}
}

func TestTelegrafRatesFlag(t *testing.T) {
	r := telegrafRun(t, "", "--session-kinds", "user", "--rates", "--interval", "10ms")
	if r.code != 0 || !strings.Contains(r.stdout, "cpu_percent=0,") {
		t.Errorf("exit %d, want cpu_percent measured over --interval:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := telegrafRun(t, ""); strings.Contains(r.stdout, "cpu_percent") {
		t.Errorf("one scan without --rates wrote cpu_percent:\n%s", r.stdout)
	}
}

func TestTelegrafExecdUntilStdinEOF(t *testing.T) {
	r := telegrafRun(t, "\n\n", "--execd", "--session-kinds", "user")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// Both lines are queued at once: one batch may answer both, the other
	// gather counted as skipped.
	got := measurements(t, r.stdout)
	n := strings.Count(strings.Join(got, "|"), "procwalk_session alice")
	skipped := regexp.MustCompile(`gathers_skipped=(\d+)i`).FindAllStringSubmatch(r.stdout, -1)
	if n == 0 || len(skipped) != n || skipped[n-1][1] != strconv.Itoa(2-n) {
		t.Errorf("%d batches for two stdin lines, skipped %v; want the two answered:\n%s", n, skipped, r.stdout)
	}
}

func TestTelegrafErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"option out of range", []string{"--process-top", "500"}, exitUsage, "process_top (--process-top) 500"},
		{"unknown kind", []string{"--session-kinds", "tmux,pods"}, exitUsage, `session_kinds (--kind) "pods"`},
		{"bad transcript source", []string{"--agent-transcript", "bogus"}, exitUsage, "agent_transcripts (--agent-transcript)"},
		{"procstat option without the schema", []string{"--procstat-user", "root"}, exitUsage, "schema (--schema)"},
		{"unsupported signal", []string{"--execd", "--signal", "SIGTERM"}, exitUsage, `signal (--signal) "SIGTERM"`},
		{"no interval for signal none", []string{"--execd", "--signal", "none", "--interval", "0s"}, exitUsage, "--interval 0s"},
		{"arguments", []string{"extra"}, exitUsage, "takes no arguments"},
		{"missing proc", []string{"--proc", "/nonexistent/proc"}, exitError, "/nonexistent/proc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := telegrafRun(t, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d stderr %q, want exit %d naming %q", r.code, r.stderr, tt.code, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("wrote metrics on error: %q", r.stdout)
			}
		})
	}
}

// failingWriter fails every write, as a full disk would.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestTelegrafExecdWriteErrorIsLoggedWithItsMarker(t *testing.T) {
	clearEnv(t)
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"telegraf", "--proc", telegrafProc, "--execd", "--session-kinds", "user"},
		strings.NewReader("\n"), failingWriter{}, &stderr)
	if code := exitCode(err); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if got := stderr.String(); got != "E! writing metrics: no space left on device\n" {
		t.Errorf("stderr = %q, want one E! line", got)
	}
}

// buildProcwalk builds this command into a temporary directory.
// buildProcwalk builds the binary as the README says to install it: static,
// CGO_ENABLED=0. With cgo on (gcc present), a terminal-UI dependency's use
// of os/user links the C library in, and its pages add some 1.7 MiB to
// every process's resident size; procwalk itself needs no C.
func buildProcwalk(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "procwalk")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestIntegrationTelegrafExecdProcess runs the real binary as Telegraf's
// execd would: a batch per stdin line, then exit 0 on stdin EOF and on
// SIGTERM, and exit 0 without a word when its stdout (fd 1) is closed,
// rather than dying of SIGPIPE.
func TestIntegrationTelegrafExecdProcess(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	start := func(t *testing.T, extra ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *bytes.Buffer) {
		args := append([]string{"telegraf", "--execd", "--proc", telegrafProc, "--passwd", telegrafPasswd, "--session-kinds", "user"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, stdin, stdout, &stderr
	}
	// firstBatch asks for a batch and checks its first line: procwalk is
	// then up, its signal handler too.
	firstBatch := func(t *testing.T, stdin io.Writer, stdout io.Reader) {
		io.WriteString(stdin, "\n")
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "procwalk_session,kind=user,session=alice") {
			t.Fatalf("first line %q, %v", line, err)
		}
	}
	wait := func(t *testing.T, cmd *exec.Cmd) error {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(time.Minute): // it exits at once; a minute only bounds a hang
			t.Fatal("procwalk telegraf --execd did not exit within a minute")
			return nil
		}
	}

	t.Run("stdin EOF", func(t *testing.T) {
		cmd, stdin, stdout, stderr := start(t)
		firstBatch(t, stdin, stdout)
		stdin.Close()
		if err := wait(t, cmd); err != nil {
			t.Errorf("after stdin EOF: %v (stderr %q), want exit 0", err, stderr)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		cmd, stdin, stdout, stderr := start(t)
		firstBatch(t, stdin, stdout)
		cmd.Process.Signal(syscall.SIGTERM)
		if err := wait(t, cmd); err != nil {
			t.Errorf("after SIGTERM: %v (stderr %q), want exit 0", err, stderr)
		}
	})
	// Telegraf's signal = "SIGHUP" mode: a batch per SIGHUP, and stdin
	// EOF still ends it with exit 0. Go's default for SIGHUP is to exit.
	t.Run("SIGHUP", func(t *testing.T) {
		cmd, stdin, stdout, stderr := start(t, "--signal", "SIGHUP")
		out := bufio.NewReader(stdout)
		batch := func(what string) {
			t.Helper()
			sessions := 0
			for {
				line, err := out.ReadString('\n')
				if err != nil {
					t.Fatalf("%s: reading a batch: %v (stderr %q)", what, err, stderr)
				}
				if strings.HasPrefix(line, "procwalk_session,kind=user,session=alice") {
					sessions++
				}
				if strings.HasPrefix(line, plugin.MeasurementSelf+",") {
					break
				}
			}
			if sessions != 1 {
				t.Errorf("%s: %d alice sessions in the batch, want 1", what, sessions)
			}
		}
		io.WriteString(stdin, "\n") // once this batch is out, the handler is in place
		batch("stdin line")
		for _, what := range []string{"first SIGHUP", "second SIGHUP"} {
			if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			batch(what)
		}
		stdin.Close()
		if err := wait(t, cmd); err != nil {
			t.Errorf("after SIGHUPs and stdin EOF: %v (stderr %q), want exit 0", err, stderr)
		}
	})
	t.Run("closed stdout", func(t *testing.T) {
		cmd, stdin, stdout, stderr := start(t)
		stdout.Close() // nobody reads fd 1 any more: its next write gets EPIPE
		io.WriteString(stdin, "\n")
		if err := wait(t, cmd); err != nil {
			t.Errorf("with stdout closed: %v (stderr %q), want exit 0", err, stderr)
		}
		if stderr.Len() != 0 {
			t.Errorf("stderr %q, want nothing", stderr)
		}
	})
}

// TestIntegrationTelegrafProcstatLeavesItselfOut: procwalk's own command
// line holds the pattern, and pgrep, which procstat mirrors, never reports
// itself: only the sleeper the test started matches.
func TestIntegrationTelegrafProcstatLeavesItselfOut(t *testing.T) {
	integration(t)
	bin := buildProcwalk(t)
	seconds := fmt.Sprintf("60.%06d", time.Now().UnixNano()%1e6) // a unique command line
	sleeper := exec.Command("sleep", seconds)
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	out, err := exec.Command(bin, "telegraf", "--schema", "procstat", "--procstat-pattern", seconds, "--skip-self-metrics").Output()
	if err != nil {
		t.Fatalf("procwalk telegraf: %v", err)
	}
	want := fmt.Sprintf("pid=%di,", sleeper.Process.Pid)
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "pid_count=1i") {
		t.Errorf("want the sleeper (%s) and pid_count=1i, got:\n%s", want, out)
	}
}

// exampleCommands returns the procwalk command lines of an example Telegraf
// config, the alternatives in its comments too: exec's `commands =
// ["..."]` (split into words as exec's shell-style split does for a line
// without quotes) and execd's `command = ["...", ...]`.
func exampleCommands(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimLeft(line, "# \t")
		key, value, ok := strings.Cut(line, " = ")
		if !ok || (key != "commands" && key != "command") {
			continue
		}
		var list []string
		if err := json.Unmarshal([]byte(value), &list); err != nil {
			t.Fatalf("%s: %q is not a list of strings: %v", path, value, err)
		}
		if key == "commands" {
			for _, c := range list {
				if strings.ContainsAny(c, `"'\`) {
					t.Fatalf("%s: %q has quotes: split it as exec would", path, c)
				}
				out = append(out, strings.Fields(c))
			}
		} else {
			out = append(out, list)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no command", path)
	}
	return out
}

// The example configs' command lines, commented alternatives included, are
// valid procwalk invocations: run on the fixture, each writes a batch and
// exits 0. One that keeps its own interval (--signal none) runs in exec
// mode, as it would write nothing before stdin's EOF; a script's kills are
// always dry runs here, as the fixture's pids are not the host's. (The
// end-to-end tests in plugin/telegraf run the configs under a real
// Telegraf.)
func TestTelegrafExampleCommands(t *testing.T) {
	for _, path := range []string{"../../examples/telegraf-exec.conf", "../../examples/telegraf-execd.conf"} {
		for _, argv := range exampleCommands(t, path) {
			if len(argv) < 2 || argv[0] != "procwalk" || argv[1] != "telegraf" {
				t.Fatalf("%s runs %q, want procwalk telegraf", path, argv)
			}
			args := slices.Clone(argv[2:])
			if i := slices.Index(args, "--signal"); i >= 0 && i+1 < len(args) && args[i+1] == "none" {
				args = slices.Delete(args, i, i+2)
				args = slices.DeleteFunc(args, func(a string) bool { return a == "--execd" })
			}
			if slices.Contains(args, "--script") {
				args = append(args, "--dry-run")
			}
			r := telegrafRun(t, "\n", args...)
			if r.code != 0 {
				t.Errorf("%s: %q exited %d: %s", path, argv, r.code, r.stderr)
				continue
			}
			if got := measurements(t, r.stdout); len(got) == 0 || got[len(got)-1] != "procwalk" {
				t.Errorf("%s: %q wrote %q, want a batch ending in the self line", path, argv, got)
			}
		}
	}
}

// Every [[inputs.procwalk]] option has its procwalk telegraf flag, named as
// the plugin's errors name it: the TOML key with dashes, singular for the
// repeatable list flags.
func TestTelegrafFlagsMatchPluginOptions(t *testing.T) {
	cmd := newTelegrafCommand(&globals{}, &env{stderr: io.Discard})
	singular := map[string]string{"trees": "tree", "agents": "agent", "agent_transcripts": "agent-transcript", "agent_context_windows": "agent-context-window"}
	typ := reflect.TypeOf(plugin.Input{})
	for i := 0; i < typ.NumField(); i++ {
		key := typ.Field(i).Tag.Get("toml")
		if key == "" || key == "-" {
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		if s, ok := singular[key]; ok {
			name = s
		}
		if cmd.FlagSet.Lookup(name) == nil {
			t.Errorf("option %s has no --%s flag", key, name)
		}
		if got := session.OptionFlag(key); got != name && key != "session_kinds" { // session_kinds is --kind, its alias
			t.Errorf("errors name option %s --%s, want --%s", key, got, name)
		}
	}
}

func TestTelegrafTreeAndGroupSessions(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "groups")
	if err := os.WriteFile(rules, []byte("shells comm ^bash$\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := telegrafRun(t, "", "--session-kinds", "tree,group", "--tree", "init=1", "--groups", rules, "--skip-self-metrics")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := measurements(t, r.stdout)
	want := []string{"procwalk_session init", "procwalk_session shells"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sessions %q, want %q", got, want)
	}
}

// A bad --signal is a usage error in exec mode too, where it is not used:
// a config file shared with execd must not hide it.
func TestTelegrafBadSignalInExecMode(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("telegraf", "--signal", "bogus")...)
	if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, `signal (--signal) "bogus"`) {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want 2 and nothing written", r.code, len(r.stdout), r.stderr)
	}
}

// Under --execd a failure to start is an E! line, as Telegraf reads
// execd's stderr, with the documented exit code; nothing else is printed.
func TestTelegrafExecdStartErrors(t *testing.T) {
	clearEnv(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"telegraf", "--execd", "--proc", "/nope"}, exitError, "E! bad procwalk plugin option: proc (--proc): not a proc filesystem: /nope"},
		{[]string{"telegraf", "--execd", "--signal", "bogus"}, exitUsage, `E! bad procwalk plugin option: signal (--signal) "bogus"`},
	} {
		r := cli(t, c.args...)
		if r.code != c.code || !strings.HasPrefix(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line %q...", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// telegraf takes --tmux-socket (repeated) as sessions does, beside
// --tmux-sockets: both reach the plugin's tmux_sockets, checked there.
func TestTelegrafTmuxSocketSpellings(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{{"--tmux-socket", " "}, {"--tmux-socket", "a", "--tmux-socket", " "}} {
		r := cli(t, fixture(append([]string{"telegraf"}, args...)...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "tmux_sockets (--tmux-sockets) has an empty entry") {
			t.Errorf("%q: exit %d, stderr %q; want the empty socket refused", args, r.code, r.stderr)
		}
	}
	// Each server named either way is asked (--debug says none answered).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tmux-socket", "/nonexistent/a"}, "/nonexistent/a"},
		{[]string{"--tmux-sockets", "/nonexistent/b,/nonexistent/c"}, "/nonexistent/b, /nonexistent/c"},
		{[]string{"--tmux-socket", "/nonexistent/a", "--tmux-sockets", "/nonexistent/b"}, "/nonexistent/a, /nonexistent/b"},
	} {
		r := cli(t, fixture(append([]string{"telegraf", "--debug", "--session-kinds", "tmux", "--skip-self-metrics"}, c.args...)...)...)
		if want := "D! sessions: tmux: no server on " + c.want + "\n"; r.code != exitOK || !strings.Contains(r.stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", c.args, r.code, r.stderr, want)
		}
	}
}

// A bad option from the environment or the config file is named there,
// in exec mode and as execd's E! line alike, with exit 2 (1 for a missing
// root).
func TestTelegrafBadValueNamesItsSource(t *testing.T) {
	conf := writeConfig(t, "# telegraf\nsession-kinds bogus\n")
	for _, c := range []struct {
		env, args []string
		code      int
		want      string
	}{
		{[]string{"PROCWALK_SESSION_KINDS", "bogus"}, nil, exitUsage, `PROCWALK_SESSION_KINDS: bad procwalk plugin option: session_kinds (--kind) "bogus": want any of`},
		{[]string{"PROCWALK_SIGNAL", "bogus"}, nil, exitUsage, `PROCWALK_SIGNAL: bad procwalk plugin option: signal (--signal) "bogus"`},
		{[]string{"PROCWALK_PROC", "/nope"}, nil, exitError, `PROCWALK_PROC: bad procwalk plugin option: proc (--proc): not a proc filesystem: /nope has no stat file`},
		{nil, []string{"--config", conf}, exitUsage, "config file " + conf + ` line 2: bad procwalk plugin option: session_kinds (--kind) "bogus"`},
		{[]string{"PROCWALK_SESSION_KINDS", "tmux"}, []string{"--session-kinds", "bogus"}, exitUsage, `bad procwalk plugin option: session_kinds (--kind) "bogus"`},
		// --kind, whose alias is --session-kinds: the error names the source.
		{[]string{"PROCWALK_SESSION_KINDS", "tmux"}, []string{"--kind", "bogus"}, exitUsage, `bad procwalk plugin option: session_kinds (--kind) "bogus"`},
		{[]string{"PROCWALK_KIND", "bogus"}, nil, exitUsage, `PROCWALK_KIND: bad procwalk plugin option: session_kinds (--kind) "bogus"`},
	} {
		clearEnv(t)
		if c.env != nil {
			t.Setenv(c.env[0], c.env[1])
		}
		for _, mode := range [][]string{{"telegraf"}, {"telegraf", "--execd"}} {
			prefix := "procwalk: "
			if len(mode) > 1 {
				prefix = "E! "
			}
			r := cli(t, append(mode, c.args...)...)
			if r.code != c.code || !strings.HasPrefix(r.stderr, prefix+c.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("%v %v: exit %d, stderr %q; want %d and one line %q...", c.env, append(mode, c.args...), r.code, r.stderr, c.code, prefix+c.want)
			}
		}
	}
}

// Every command that asks tmux takes both spellings, --tmux-socket
// (repeated) and --tmux-sockets (comma-separated).
func TestTmuxSocketSpellingsEverywhere(t *testing.T) {
	clearEnv(t)
	for _, command := range []string{"sessions", "session", "kill", "top", "run", "watch", "telegraf"} {
		r := cli(t, "help", command)
		if r.code != exitOK || !strings.Contains(r.stdout, "\n  --tmux-socket SOCKET ") || !strings.Contains(r.stdout, "\n  --tmux-sockets SOCKET ") {
			t.Errorf("%s: exit %d; want --tmux-socket and --tmux-sockets among its flags:\n%s", command, r.code, r.stdout)
		}
	}
}

// --session-kinds is --kind: either on the command line wins over the
// other's env var (ff applies each name's env var on its own).
func TestTelegrafKindAlias(t *testing.T) {
	for _, c := range []struct{ env, flag string }{
		{"PROCWALK_SESSION_KINDS", "--kind"},
		{"PROCWALK_KIND", "--session-kinds"},
	} {
		clearEnv(t)
		t.Setenv(c.env, "bogus")
		r := telegrafRun(t, "", c.flag, "user", "--skip-self-metrics")
		if r.code != exitOK || !strings.Contains(r.stdout, "procwalk_session,kind=user,") || strings.Contains(r.stdout, "kind=tmux") {
			t.Errorf("%s=bogus %s user: exit %d, want user sessions only:\n%s%s", c.env, c.flag, r.code, r.stdout, r.stderr)
		}
	}
}
