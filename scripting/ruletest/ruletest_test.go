//go:build linux

package ruletest

import (
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
	"github.com/procwalk/procwalk/procwalk/recording"
	procsession "github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripts"
)

func bundled(name string) ([]byte, bool) {
	s, ok := scripts.Lookup(name)
	return s.Source, ok
}

// TestEveryRuleHasATest runs the test of every bundled script and every
// example rule: each must exist, check something, and pass.
func TestEveryRuleHasATest(t *testing.T) {
	var rules []string
	for _, dir := range []string{"../../scripts", "../../examples/rules"} {
		found, err := filepath.Glob(filepath.Join(dir, "*.lua"))
		if err != nil || len(found) == 0 {
			t.Fatalf("%s: %v %v", dir, found, err)
		}
		rules = append(rules, found...)
	}
	for _, rule := range rules {
		test := strings.TrimSuffix(rule, ".lua") + ".ruletest"
		t.Run(filepath.Base(test), func(t *testing.T) {
			r, err := RunFile(context.Background(), test, Options{Bundled: bundled})
			if err != nil {
				t.Fatalf("%s has no working test: %v", rule, err)
			}
			if !r.Pass() || r.Checked == 0 {
				t.Errorf("%s: %d expectations held; errors %q\n%s", test, r.Checked, r.Errors, r.Diff)
			}
		})
	}
}

// writeTest writes a test file (and more files beside it) into a folder
// of the test's.
func writeTest(t *testing.T, src string, more map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range more {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "rule.ruletest")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFailingDiff: a test whose rule fires a tick late and kills another
// process says, time by time, what was expected and not got (-, with the
// line) and what was got and not expected (+), keys in a fixed order.
func TestFailingDiff(t *testing.T) {
	path := writeTest(t, `rule memory-guard -- limit=1GiB ticks=2
at 0s
  session tmux:build
    100 bash rss=1MiB
      101 cc1 rss=2GiB
every 10s until 20s
expect 0s alert session=build
expect 10s kill pid=100 outcome=dry_run
expect 20s emit nothing
`, nil)
	r, err := RunFile(context.Background(), path, Options{Bundled: bundled})
	if err != nil {
		t.Fatal(err)
	}
	want := `  at 0s:
    - alert session=build (line 7)
  at 10s:
    - kill pid=100 outcome=dry_run (line 8)
    + alert message="memory-guard: tmux:build used 2.0 GiB for 2 ticks (limit 1.0 GiB): would kill cc1 101 (2.0 GiB)" severity=warning kind=tmux session=build pid=101 comm=cc1 dry_run=true result=dry_run threshold=1073741824 value=2148532224
    + kill pid=101 comm=cc1 outcome=dry_run signals=TERM,KILL cmdline=cc1 dry_run=true reason="KILL after 10s if still alive" rss_bytes=2147483648 scope="process 101@8640000"
  at 20s:
    - emit nothing (line 9)
`
	if r.Pass() || r.Diff != want {
		t.Errorf("diff:\n%s\nwant:\n%s", r.Diff, want)
	}
}

// TestDebounceFiveMinutes: a rule alerting once its condition has held
// for 5 minutes (pw.debounce with "5m") fires at 5m of frames 30 seconds
// apart, not at the tenth frame (4m30s), and a test expecting it at 4m30s
// fails.
func TestDebounceFiveMinutes(t *testing.T) {
	rule := `local pw = require "procwalk"
for _, s in ipairs(pw.sessions("tmux")) do
  if pw.debounce(s.ref, s.rss > pw.GiB, "5m") then pw.alert{message = "held", session = s} end
end`
	for _, c := range []struct {
		at   string
		pass bool
	}{{"5m", true}, {"4m30s", false}} {
		path := writeTest(t, `rule held.lua
at 0s
  session tmux:build
    100 cc1 rss=2GiB
every 30s until 5m
expect `+c.at+` alert session=build message=held
`, map[string]string{"held.lua": rule})
		r, err := RunFile(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Pass() != c.pass || r.Frames != 11 {
			t.Errorf("expected at %s: pass %v (%d frames), want %v\n%s", c.at, r.Pass(), r.Frames, c.pass, r.Diff)
		}
	}
}

// TestReplayInput: a test's frames may be a recording's, times counted
// from its first frame; the rule sees its processes and clock.
func TestReplayInput(t *testing.T) {
	frames := framesOf(t, `rule x
at 0s
  session tmux:build
    100 bash
      101 cc1 rss=3GiB
every 1m until 3m
`)
	dir := t.TempDir()
	file, err := os.Create(filepath.Join(dir, "host.pwrec"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := recording.NewWriter(file, recording.Header{Procwalk: "test"}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		f.Snapshot.Time = f.Snapshot.Time.Add(1000 * time.Hour) // another day: times count from the first frame
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	file.Close()
	path := writeTest(t, `rule big.lua
replay host.pwrec
expect 2m alert message="cc1 at 2m"
`, map[string]string{"big.lua": `local pw = require "procwalk"
if pw.debounce("big", #pw.processes{comm = "cc1"} == 1, "2m") and not pw.state.done then
  pw.state.done = true
  pw.alert{message = "cc1 at " .. math.floor((pw.now() - (pw.state.first or pw.now())) / 60) .. "m"}
end
pw.state.first = pw.state.first or pw.now()`})
	os.Rename(filepath.Join(dir, "host.pwrec"), filepath.Join(filepath.Dir(path), "host.pwrec"))
	r, err := RunFile(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Frames != 4 || !r.Pass() {
		t.Errorf("%d frames, pass %v:\n%s%q", r.Frames, r.Pass(), r.Diff, r.Errors)
	}
}

// TestSyntaxErrors: a malformed test says where and what.
func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"at 0s\n  1 init\n", "no rule line"},
		{"rule x\n", "no frames"},
		{"rule x limit=1\nat 0s\n  1 init\n", "t.ruletest:1: the rule's arguments go after --"},
		{"rule x\n  1 init\n", "t.ruletest:2: an indented line belongs to an 'at' block"},
		{"rule x\nat 1m\n  1 init\nat 30s\n", "t.ruletest:4: at 30s: frames go forward in time; the last was at 1m0s"},
		{"rule x\nat 0s\n  1 init\nevery 0s until 1m\n", "every needs a step above 0"},
		{"rule x\nat 0s\n  1 init\nevery 1s until 100000h\n", "at most 100000"},
		{"rule x\nat 0s\n  1 init rss=lots\n", "t.ruletest:3: process 1 rss=lots"},
		{"rule x\nat 0s\n  1 init colour=red\n", "unknown key; a process takes ppid"},
		{"rule x\nat 0s\n  7 rss=1\n", "process 7 is new: give its name"},
		{"rule x\nat 0s\n  exit 7\n", "exit 7: no such process"},
		{"rule x\nat 0s\n  session pods:x\n", `unknown kind "pods"`},
		{"rule x\nat 0s\n  1 init user=bob\n", "no such user: add a line 'user bob UID'"},
		{"rule x\nat 0s\n  1 init\nexpect 5s alert\n", "t.ruletest:4: expect 5s: no frame at 5s"},
		{"rule x\nat 0s\n  1 init\nexpect 0s page\n", "want alert, kill, emit, print or log"},
		{"rule x\nat 0s\n  1 init\nexpect 0s print two words\n", "one text, quoted when it has spaces"},
		{"rule x\nat 0s\n  1 init\nexpect 0s alert message=\"open\n", "a quote is not closed"},
		{"rule x\nreplay a.pwrec\nat 0s\n  1 init\n", "from 'replay' or from 'at' blocks, not both"},
		{"nonsense\n", `unknown statement "nonsense"`},
	} {
		path := writeTest(t, c.src, map[string]string{"x": "print(1)"})
		_, err := RunFile(context.Background(), path, Options{})
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), strings.Replace(c.want, "t.ruletest", "rule.ruletest", 1)) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}

// TestFramesDescribed: the frames a test describes are what a Grouper and
// Sampler would have made of such a host: rates measured between frames,
// members with their descendants, totals and cumulative counters, an
// agent's status time, a cgroup's usage against its limit.
func TestFramesDescribed(t *testing.T) {
	frames := framesOf(t, `rule x
user alice 1000
at 0s
  session tmux:build tmux_target=build:0.0
    100 bash user=alice cpu_time=10
      101 make cpu_time=20 rss=100MiB
  session agent:claude/p status=blocked
    200 claude
  session cgroup:pod/a memory_limit=1GiB
    300 java rss=900MiB
at 1m
  101 cpu_time=50 rss=160MiB
    102 cc1 cpu_time=5
at 2m
  exit 102
`)
	f := frames[1]
	make101 := f.Snapshot.Process(101)
	if r := make101.Rates; !r.Measured || r.CPUPercent != 50 || r.RSSGrowthBytesPerMinute != 60<<20 || r.IntervalSeconds != 60 {
		t.Errorf("make's rates at 1m: %+v", r)
	}
	if p := f.Snapshot.Process(102); p.PPID != 101 || p.EffectiveUID != 1000 || p.Rates.Measured {
		t.Errorf("cc1: %+v", p)
	}
	build := sessionOf(t, f, "tmux:build")
	if len(build.Members) != 3 || build.Totals.Procs != 3 || build.Attrs["tmux_target"] != "build:0.0" || len(build.Roots) != 1 ||
		build.Totals.CumulativeCPUSeconds != 65 {
		t.Errorf("tmux:build at 1m: %+v", build)
	}
	build2 := sessionOf(t, frames[2], "tmux:build")
	if len(build2.Members) != 2 || build2.Totals.CumulativeCPUSeconds != 65 {
		t.Errorf("tmux:build at 2m, cc1 gone: members %v, cumulative CPU %v (never goes back)", build2.Members, build2.Totals.CumulativeCPUSeconds)
	}
	agent := sessionOf(t, frames[2], "agent:claude/p")
	if agent.Agent == nil || agent.Agent.Status != "blocked" || agent.Agent.StatusFor != 2*time.Minute {
		t.Errorf("agent at 2m: %+v", agent.Agent)
	}
	pod := sessionOf(t, f, "cgroup:pod/a")
	if c := pod.Totals.Cgroup; c == nil || c.MemoryUsageBytes != 900<<20 || c.MemoryPercent < 87.8 || c.MemoryPercent > 87.9 || !c.Danger {
		t.Errorf("pod: %+v", c)
	}
}

// framesOf parses a test's source and builds its frames.
func framesOf(t *testing.T, src string) []frame.Frame {
	t.Helper()
	test, err := Parse("frames.ruletest", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := buildFrames(test)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

func sessionOf(t *testing.T, f frame.Frame, ref string) procsession.Session {
	t.Helper()
	for _, s := range f.Sessions {
		if s.Ref() == ref {
			return s
		}
	}
	t.Fatalf("no session %s", ref)
	return procsession.Session{}
}

// A recording's frames, gathered a few microseconds off their ticks, are
// named by the second; faster ones by the millisecond; times that would
// fall together stay as they are.
func TestFrameTimes(t *testing.T) {
	at := func(offsets ...time.Duration) []frame.Frame {
		var out []frame.Frame
		for _, o := range offsets {
			snap := procwalk.NewSnapshot(procwalk.Host{}, 0, 0, nil, procwalk.Visibility{})
			snap.Time = start().Add(o)
			out = append(out, frame.Frame{Snapshot: snap})
		}
		return out
	}
	for _, c := range []struct {
		in, want []time.Duration
	}{
		{[]time.Duration{0, time.Second + 77*time.Microsecond, 2*time.Second - 3*time.Millisecond}, []time.Duration{0, time.Second, 2 * time.Second}},
		{[]time.Duration{0, 200*time.Millisecond + 5*time.Microsecond, 400 * time.Millisecond}, []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond}},
		{[]time.Duration{0, 100 * time.Microsecond, 200 * time.Microsecond}, []time.Duration{0, 100 * time.Microsecond, 200 * time.Microsecond}},
		{[]time.Duration{0, 0}, []time.Duration{0, 0}},
	} {
		if got := frameTimes(at(c.in...)); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}

// A process whose parent exits is init's child, as the kernel makes it;
// written under its session, it stays a member (as tmux's grouping finds
// an escaped process by its TMUX variable), its parent gone.
func TestOrphansGoToInit(t *testing.T) {
	frames := framesOf(t, `rule x
at 0s
  1 init
  session tmux:build
    100 bash
      101 make
        102 cc1
at 1m
  exit 101
`)
	if p := frames[1].Snapshot.Process(102); p == nil || p.PPID != 1 {
		t.Errorf("cc1 after make exited: %+v", p)
	}
	if s := sessionOf(t, frames[1], "tmux:build"); len(s.Members) != 2 || len(s.Roots) != 2 {
		t.Errorf("tmux:build after make exited: members %v, roots %v; want bash and cc1, both roots", s.Members, s.Roots)
	}
}

// Files takes a file as it is and a folder's *.ruletest files in name
// order; a missing path or a folder without a test is an error.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.ruletest", "a.ruletest", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files([]string{"x.ruletest.txt", dir})
	if err == nil {
		t.Errorf("a missing file: %v", got)
	}
	other := filepath.Join(dir, "notes.txt")
	got, err = Files([]string{other, dir})
	want := []string{other, filepath.Join(dir, "a.ruletest"), filepath.Join(dir, "b.ruletest")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Files = %q, %v; want %q", got, err, want)
	}
	empty := t.TempDir()
	if _, err := Files([]string{empty}); err == nil || err.Error() != empty+": no *.ruletest file in this folder" {
		t.Errorf("an empty folder: %v", err)
	}
}
