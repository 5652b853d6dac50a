//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// flagLimits are the flags' defaults.
func flagLimits() Limits {
	d := scripting.DefaultLimits()
	return Limits{Timeout: d.Timeout, GraceBudget: d.GraceBudget, KillsPerRun: d.KillsPerRun, KillsPerHour: d.KillsPerHour,
		MemoryBytes: 1 << 28, RetainedBytes: 1 << 26, PrintBytes: 1 << 24, EmitLines: d.MaxEmitLines, EmitBytes: 1 << 23}
}

// Each bad limit is an OptionError naming its flag and value, in the
// words the CLI has always printed; good limits pass through unchanged.
func TestLimitsCheck(t *testing.T) {
	for _, tt := range []struct {
		change func(*Limits)
		flag   string
		want   string
	}{
		{func(l *Limits) { l.Timeout = 0 }, "script-timeout", "--script-timeout 0s: want a positive duration such as 2s"},
		{func(l *Limits) { l.Timeout = -time.Second }, "script-timeout", "--script-timeout -1s: want a positive duration such as 2s"},
		{func(l *Limits) { l.GraceBudget = 0 }, "script-grace-budget", "--script-grace-budget 0s: want a positive duration such as 30s"},
		{func(l *Limits) { l.KillsPerRun = 0 }, "script-kills-per-run", "--script-kills-per-run 0: want 1 or more (--dry-run turns every kill into a report)"},
		{func(l *Limits) { l.KillsPerRun, l.KillsPerHour = 6, 5 }, "script-kills-per-hour", "--script-kills-per-hour 5: want at least --script-kills-per-run (6)"},
		{func(l *Limits) { l.EmitLines = 0 }, "script-emit-lines", "--script-emit-lines 0: want 1 to 10000000"},
		{func(l *Limits) { l.EmitLines = MaxEmitLines + 1 }, "script-emit-lines", "--script-emit-lines 10000001: want 1 to 10000000"},
		// The first bad one in the order of the fields.
		{func(l *Limits) { l.Timeout, l.EmitLines = 0, 0 }, "script-timeout", "--script-timeout 0s: want a positive duration such as 2s"},
	} {
		l := flagLimits()
		tt.change(&l)
		_, err := l.Check()
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Flag != tt.flag || err.Error() != tt.want {
			t.Errorf("Check() = %v; want the OptionError of %s %q", err, tt.flag, tt.want)
		}
	}
	l := flagLimits()
	l.EmitLines = MaxEmitLines
	got, err := l.Check()
	want := scripting.Limits{Timeout: l.Timeout, GraceBudget: l.GraceBudget, KillsPerRun: l.KillsPerRun, KillsPerHour: l.KillsPerHour,
		HeapBudgetBytes: 1 << 28, RetainedBytes: 1 << 26, MaxPrintBytes: 1 << 24, MaxEmitLines: MaxEmitLines, MaxEmitBytes: 1 << 23}
	if err != nil || got != want {
		t.Errorf("Check() = %+v, %v; want %+v", got, err, want)
	}
}

// --protect adds to kill's default list; a bad glob is its OptionError.
func TestProtected(t *testing.T) {
	if p, err := Protected(nil); p != nil || err != nil {
		t.Errorf("Protected(nil) = %v, %v; want the default (nil)", p, err)
	}
	p, err := Protected([]string{"mydb*"})
	if err != nil || !slices.Equal(p, append(kill.DefaultProtected(), "mydb*")) {
		t.Errorf("Protected([mydb*]) = %v, %v", p, err)
	}
	_, err = Protected([]string{"["})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Flag != "protect" || !strings.HasPrefix(err.Error(), `--protect: bad protected pattern "["`) {
		t.Errorf("Protected([) = %v; want --protect's error", err)
	}
}

// A limit's error says which flag raises it; any other is unchanged.
func TestHint(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{scripting.ErrTimeout, "(raise --script-timeout, or do less per run)"},
		{scripting.ErrRetained, "(raise --script-retained, or keep less in procwalk.state and globals)"},
		{scripting.ErrMemory, "(raise --script-memory, or keep less per run)"},
	} {
		err := Hint(fmt.Errorf("run: %w", tt.err))
		if !errors.Is(err, tt.err) || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("Hint(%v) = %v; want it to end %q", tt.err, err, tt.want)
		}
	}
	other := errors.New("other")
	if err := Hint(other); err != other {
		t.Errorf("Hint(other) = %v", err)
	}
}

// writeRule writes a rule file and returns its path.
func writeRule(t *testing.T, source string) string {
	path := filepath.Join(t.TempDir(), "rule.lua")
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// options are Options of source on the fixture /proc, in this process.
func options(t *testing.T, source, mode string, stderr, print *bytes.Buffer) Options {
	return Options{Script: writeRule(t, source), Args: []string{"a=1"}, Mode: mode, Limits: flagLimits(), Proc: "../testdata/proc",
		Encoder: textEncoder{}, Stderr: stderr, Print: print}
}

// New refuses what the CLI calls usage errors, each its own way: a
// script it cannot load (ErrBadScript), a bad limit or --protect, and a
// recording it cannot open, named as --replay's.
func TestNewErrors(t *testing.T) {
	var stderr, print bytes.Buffer
	for _, tt := range []struct {
		name   string
		change func(*Options)
		flag   string
		want   string
	}{
		{"no script", func(o *Options) { o.Script = "no-such-script" }, "", `no script "no-such-script": not a bundled script`},
		{"syntax", func(o *Options) { o.Script = writeRule(t, "x = = 1") }, "", "lua syntax error"},
		{"limit", func(o *Options) { o.Limits.Timeout = 0 }, "script-timeout", "--script-timeout 0s"},
		{"protect", func(o *Options) { o.Protect = []string{"["} }, "protect", "--protect: bad protected pattern"},
		{"replay", func(o *Options) { o.Replay = filepath.Join(t.TempDir(), "none.pwr") }, "replay", "--replay: open "},
	} {
		o := options(t, `print("hi")`, "run", &stderr, &print)
		tt.change(&o)
		s, err := New(o)
		var oe *OptionError
		switch {
		case s != nil:
			t.Errorf("%s: New() = %v, %v; want no Script with its error", tt.name, s, err)
		case err == nil || !strings.HasPrefix(err.Error(), tt.want):
			t.Errorf("%s: New() = %v; want an error starting %q", tt.name, err, tt.want)
		case tt.flag == "" && !errors.Is(err, ErrBadScript):
			t.Errorf("%s: %v is no ErrBadScript", tt.name, err)
		case tt.flag != "" && (!errors.As(err, &oe) || oe.Flag != tt.flag):
			t.Errorf("%s: %v is no OptionError of %s", tt.name, err, tt.flag)
		}
	}
}

// A bad --protect is refused by New in every mode, in a worker too (where
// the worker alone would read it, failing every run).
func TestNewRefusesBadProtectEverywhere(t *testing.T) {
	var stderr, print bytes.Buffer
	for _, mode := range []string{"run", "watch", "telegraf"} {
		for _, isolate := range []bool{false, true} {
			o := options(t, `print("hi")`, mode, &stderr, &print)
			o.Protect = []string{"["}
			o.Isolate, o.Worker.Path = isolate, "/nonexistent/procwalk" // never started: New refuses first
			s, err := New(o)
			var oe *OptionError
			if s != nil || !errors.As(err, &oe) || oe.Flag != "protect" {
				t.Errorf("%s, isolated %v: New() = %v, %v; want --protect's OptionError", mode, isolate, s, err)
			}
		}
	}
}

// New builds a Run for run and watch: the script's print, args, mode and
// dry run as given, its metrics and kills' outcomes lines of the host's
// encoder once the run ends, its kills audited on the log; the pipeline
// asked of the host keeps process objects only for watch in this process.
func TestNewRun(t *testing.T) {
	const rule = `local pw = require "procwalk"
print(pw.mode, pw.dry_run, pw.args.a)
local r, err = pw.kill(2, {dry_run = true})
pw.emit("m", {}, {n = 1})`
	for _, tt := range []struct {
		mode     string
		isolate  bool
		dryRun   bool
		pss      bool
		wantKeep bool
	}{
		{"run", false, false, false, false},
		{"watch", false, true, true, true},
		{"watch", true, false, false, false}, // the worker keeps them
	} {
		var stderr, print, stdout bytes.Buffer
		o := options(t, rule, tt.mode, &stderr, &print)
		o.DryRun, o.Isolate, o.PSS = tt.dryRun, tt.isolate, tt.pss
		o.Worker.Path = "/nonexistent/procwalk" // never started: no tick goes to it
		var keep []bool
		o.Pipeline = func(cfg frame.Config) (*frame.Pipeline, error) {
			keep = append(keep, cfg.Memory.Retention == frame.KeepAll)
			want := procwalk.FieldIO
			if tt.pss {
				want |= procwalk.FieldSmaps
			}
			if cfg.Fields != want {
				t.Errorf("%s: the pipeline reads %v; want %v", tt.mode, cfg.Fields, want)
			}
			return nil, nil
		}
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if s.Run == nil || s.Hook != nil || s.Isolated() != tt.isolate || !slices.Equal(keep, []bool{tt.wantKeep}) {
			t.Errorf("%s: Run %v, Hook %v, isolated %v, pipeline keep %v; want keep %v", tt.mode, s.Run != nil, s.Hook != nil, s.Isolated(), keep, tt.wantKeep)
		}
		if _, err := s.Run.Frame(context.Background(), fixtureFrame(t), &stdout); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s\t%v\t1\n", tt.mode, tt.dryRun); print.String() != want {
			t.Errorf("%s: printed %q; want %q", tt.mode, print.String(), want)
		}
		if want := "action pid=2\nm n=1\n"; stdout.String() != want {
			t.Errorf("%s: lines %q; want %q", tt.mode, stdout.String(), want)
		}
		if !strings.Contains(stderr.String(), "level=WARN") || !strings.Contains(stderr.String(), "script=rule.lua") {
			t.Errorf("%s: no audit line on stderr: %q", tt.mode, stderr.String())
		}
		if err := s.Serve(context.Background(), nil); !errors.Is(err, errNoConn) {
			t.Errorf("%s: Serve outside a worker: %v", tt.mode, err)
		}
		s.Close()
	}
}

// Under telegraf New builds a Hook: the script's metrics and kills'
// outcomes join the batch, each outcome logged by Warn; no pipeline is
// asked for (the host gathers).
func TestNewHook(t *testing.T) {
	var stderr, print bytes.Buffer
	o := options(t, `local pw = require "procwalk"
print(pw.mode)
pw.kill(2, {dry_run = true})
pw.emit("m", {}, {n = 7})`, "telegraf", &stderr, &print)
	var warned []string
	o.Warn = func(msg string) { warned = append(warned, msg) }
	o.Pipeline = func(frame.Config) (*frame.Pipeline, error) { t.Error("telegraf asked for a pipeline"); return nil, nil }
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Hook == nil || s.Run != nil || s.Isolated() {
		t.Fatalf("Hook %v, Run %v, isolated %v", s.Hook != nil, s.Run != nil, s.Isolated())
	}
	b := &testBatch{}
	if err := s.Hook.Run(context.Background(), fixtureFrame(t), b); err != nil {
		t.Fatal(err)
	}
	if want := []string{"action 2", "m 7"}; !slices.Equal(b.lines, want) || print.String() != "telegraf\n" || len(warned) != 1 {
		t.Errorf("batch %q, printed %q, warned %q; want %q", b.lines, print.String(), warned, want)
	}
}

// Options.Users (the host's passwd) is asked for only by a runtime here
// that has no other names: not by the parent of a telegraf worker, not by
// a replay whose recording names its host's users.
func TestUsersAskedWhenNeeded(t *testing.T) {
	var stderr, print bytes.Buffer
	for _, tt := range []struct {
		name    string
		mode    string
		isolate bool
		replay  bool
		want    int
	}{
		{"telegraf here", "telegraf", false, false, 1},
		{"telegraf's worker parent", "telegraf", true, false, 0},
		{"run", "run", false, false, 1},
		{"run replay", "run", false, true, 0},
		{"watch replay", "watch", false, true, 0},
	} {
		o := options(t, `print("hi")`, tt.mode, &stderr, &print)
		o.Isolate = tt.isolate
		o.Worker.Path = "/nonexistent/procwalk" // never started: nothing ticks it
		if tt.replay {
			o.Replay = recordingFixture // it names its host's users
		}
		asked := 0
		o.Users = func() *procwalk.Users { asked++; return nil }
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if asked != tt.want {
			t.Errorf("%s: Users asked %d times; want %d", tt.name, asked, tt.want)
		}
	}
}

// A worker is started only when asked for, possible (a binary) and this
// is no worker itself; the parent writes what it prints through the one
// escaping function: a control character a subverted worker sends is
// escaped, and text the worker escaped already passes unchanged (never
// escaped twice).
func TestWorkerOutputEscaped(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want bool
	}{
		{Options{Isolate: true, Worker: scripting.WorkerConfig{Path: "/proc/self/exe"}}, true},
		{Options{Isolate: false, Worker: scripting.WorkerConfig{Path: "/proc/self/exe"}}, false},
		{Options{Isolate: true}, false},
		{Options{Isolate: true, Worker: scripting.WorkerConfig{Path: "/proc/self/exe"}, Conn: &scripting.WorkerConn{}}, false},
	} {
		if got := (&Script{o: tt.o}).Isolated(); got != tt.want {
			t.Errorf("Isolated() of %+v = %v; want %v", tt.o, got, tt.want)
		}
	}
	var stdout, stderr bytes.Buffer
	s := &Script{o: Options{Stderr: &stderr, Worker: scripting.WorkerConfig{Path: "/proc/self/exe", Name: "procwalk"}}, Limits: scripting.Limits{Timeout: time.Second}}
	cfg := s.workerConfig(&stdout)
	if cfg.Path != "/proc/self/exe" || cfg.Name != "procwalk" || cfg.Limits.Timeout != time.Second {
		t.Errorf("worker config %+v: not the host's command and the script's limits", cfg)
	}
	tests := []struct{ in, want string }{
		{"evil\x1b[2Jname\n", `evil\x1b[2Jname` + "\n"},
		{`evil\x1b[2Jname` + "\n", `evil\x1b[2Jname` + "\n"},
		{"a\tb\nc\n", "a\tb\nc\n"},
		{"W! line\r\n", `W! line\x0d` + "\n"},
		{"bad utf-8 \xff\n", `bad utf-8 \xff` + "\n"},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			w   interface{ Write([]byte) (int, error) }
			buf *bytes.Buffer
		}{{cfg.Stdout, &stdout}, {cfg.Stderr, &stderr}} {
			c.buf.Reset()
			c.w.Write([]byte(tt.in))
			if got := c.buf.String(); got != tt.want {
				t.Errorf("%q: wrote %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

// Once in this process is a Run.Frame: the run's lines written, the
// frame's note on stderr, the run's error returned, not logged.
func TestScriptOnce(t *testing.T) {
	var stderr, print, stdout bytes.Buffer
	o := options(t, `local pw = require "procwalk"
pw.emit("m", {}, {n = 1})
if pw.state.ran then error("second run") end
pw.state.ran = true`, "watch", &stderr, &print)
	o.Note = func(s *procwalk.Snapshot) string { return fmt.Sprintf("%d processes", len(s.Procs)) }
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := fixtureFrame(t)
	ctx, out, stop := WatchStdout(context.Background(), &stdout, false)
	defer stop()
	note := fmt.Sprintf("procwalk: %d processes\n", len(f.Snapshot.Procs))
	if err := s.Once(ctx, f, out); err != nil || stdout.String() != "m n=1\n" || stderr.String() != note {
		t.Errorf("Once: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if err := s.Once(ctx, f, out); err == nil || !strings.Contains(err.Error(), "second run") || stdout.Len() != 0 || stderr.String() != note {
		t.Errorf("failed run: %v, stdout %q, stderr %q; want the error returned, no lines, nothing logged", err, stdout.String(), stderr.String())
	}
}
