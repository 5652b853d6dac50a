//go:build linux

package scripting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripts"
)

// runBundled runs a bundled script once in w with args and returns what it
// printed.
func runBundled(t *testing.T, w *world, name string, args ...string) string {
	t.Helper()
	out, err := tryBundled(t, w, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

func tryBundled(t *testing.T, w *world, name string, args ...string) (string, error) {
	t.Helper()
	s, ok := scripts.Lookup(name)
	if !ok {
		t.Fatalf("no bundled script %s", name)
	}
	cfg := w.cfg
	cfg.Args = args
	return run(t, cfg, name+".lua", string(s.Source), w.in)
}

// tickBundled runs a bundled script n times in one watch-mode Runtime.
func tickBundled(t *testing.T, w *world, name string, n int, args ...string) []string {
	t.Helper()
	src, ok := scripts.Lookup(name)
	if !ok {
		t.Fatalf("no bundled script %s", name)
	}
	s, err := Compile(name+".lua", src.Source)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := w.cfg
	cfg.Args, cfg.Print, cfg.Mode = args, &out, "watch"
	r := New(cfg)
	defer r.Close()
	var prints []string
	for i := 0; i < n; i++ {
		out.Reset()
		if err := r.Run(context.Background(), s, w.in); err != nil {
			t.Fatalf("%s tick %d: %v", name, i+1, err)
		}
		prints = append(prints, out.String())
	}
	return prints
}

// lines returns the log records whose message contains s, one per line.
func logLines(w *world, s string) []string {
	var out []string
	for _, l := range strings.Split(w.logs.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

func TestBundledScriptsCompileAndDescribeThemselves(t *testing.T) {
	want := []string{"agents", "growth-watch", "memory-guard", "pod-pressure", "session-report", "zombies"}
	if got := strings.Join(scripts.Names(), " "); got != strings.Join(want, " ") {
		t.Errorf("bundled scripts %q, want %q", got, want)
	}
	for _, s := range scripts.List() {
		if _, err := Compile(s.Name+".lua", s.Source); err != nil {
			t.Error(err)
		}
		if len(s.Description) < 20 || strings.HasPrefix(s.Description, "-") || strings.HasPrefix(s.Description, s.Name) {
			t.Errorf("%s: description %q", s.Name, s.Description)
		}
	}
	if _, ok := scripts.Lookup("../scripting/testdata/passwd"); ok {
		t.Error("Lookup followed a path")
	}
}

func TestSessionReport(t *testing.T) {
	w := newWorld(t)
	got := runBundled(t, w, "session-report", "kind=tmux")
	want := `procwalk session report: testhost, 16 processes, 4 CPUs, 16.0 GiB memory

tmux: 2 sessions
  SESSION  PROCS        RSS        PSS    CPU  AGE
  build        4  410.0 MiB  307.5 MiB      -  9 days 23 hr
    build:0.0, 1 zombie
    biggest: cc1 121 300.0 MiB, make 120 4.5 MiB, bash 102 3.0 MiB
  work         4    2.1 GiB    1.6 GiB      -  9 days 23 hr
    work:0.0
    biggest: claude 110 1.1 GiB, node 112 450.0 MiB, bash 101 3.0 MiB
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	got = runBundled(t, w, "session-report", "top=0")
	for _, s := range []string{"\ncgroup: 5 sessions\n", "\nuser: 3 sessions\n", "\nagent: 1 session\n",
		"  pod/1234abcd-5678-90ef-1234-567890abcdef\n                                2    1.8 GiB    1.3 GiB      -  9 days 23 hr\n    memory 90% of 2.0 GiB, cpu quota 1, NEAR LIMIT, 1 zombie\n",
		"  claude/myproj      3    2.1 GiB    1.6 GiB      -  9 days 23 hr\n    work:0.0, project myproj\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("the default report lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "biggest:") || strings.Contains(got, "\nsid:") || strings.Contains(got, "\npgrp:") {
		t.Errorf("top=0 and the default kinds should hide biggest members and sid/pgrp:\n%s", got)
	}
	if got := runBundled(t, w, "session-report", "kind=all"); !strings.Contains(got, "\nsid: 7 sessions\n") || !strings.Contains(got, "\npgrp: 10 sessions\n") {
		t.Errorf("kind=all lacks sid and pgrp:\n%s", got)
	}
	if got := runBundled(t, w, "session-report", "kind=tree"); !strings.HasSuffix(got, "\nno sessions of kind tree\n") {
		t.Errorf("kind=tree: %q", got)
	}
	if _, err := tryBundled(t, w, "session-report", "top=many"); !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), "top must be a number >= 0") {
		t.Errorf("top=many: %v", err)
	}
}

// Marks the snapshot partial: the report says so.
func TestSessionReportSaysPartial(t *testing.T) {
	w := newWorld(t)
	w.snap.Visibility.Gone = 2
	w.snap.Visibility.Denied = map[string]int{"io": 3}
	got := runBundled(t, w, "session-report", "kind=tmux", "top=0")
	if !strings.Contains(got, "\npartial data: 2 gone mid-scan, 3 without io (permission)\n") {
		t.Errorf("got\n%s", got)
	}
}

func TestAgents(t *testing.T) {
	w := newWorld(t)
	for _, pid := range []int{110, 111, 112} {
		w.snap.Process(pid).Rates = procwalk.Rates{Measured: true, CPUPercent: 10, RSSGrowthBytesPerMinute: 100 << 20}
	}
	w.in.Sessions = grouper(t, w.users)(w.snap) // regroup with the rates
	got := runBundled(t, w, "agents")
	// Busy (30 % CPU) without a transcript: working, no model, no context.
	want := `AGENT    PROJECT              PROCS        RSS        PSS    CPU  GROWTH/MIN
claude   myproj                   3    2.1 GiB    1.6 GiB  30.0%   300.0 MiB
         working, running 9 days 23 hr, model -, context -, tmux work:0.0
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	w.in.Sessions = nil
	if got := runBundled(t, w, "agents"); got != "no AI agent sessions\n" {
		t.Errorf("without agents: %q", got)
	}
}

func TestZombies(t *testing.T) {
	w := newWorld(t)
	got := runBundled(t, w, "zombies")
	want := `2 zombies under 2 parents
  make 120 in tmux:build: 1 not reaped: cc1 122 (9 days 23 hr)
  java 201 in cgroup:pod/1234abcd-5678-90ef-1234-567890abcdef: 1 not reaped:
    sh 202 (9 days 23 hr)
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(w.emitter.lines) != 0 {
		t.Errorf("alerts below the threshold: %q", w.emitter.lines)
	}
	runBundled(t, w, "zombies", "alert=1")
	want = "procwalk_alert kind=tmux,rule=zombies.lua,session=build,severity=warning | comm=make,message=zombies: make 120 has not reaped 1 children,pid=120,threshold=1,value=1 @1700864000\n" +
		"procwalk_alert kind=cgroup,rule=zombies.lua,session=pod/1234abcd-5678-90ef-1234-567890abcdef,severity=warning | comm=java,message=zombies: java 201 has not reaped 1 children,pid=201,threshold=1,value=1 @1700864000"
	if got := strings.Join(w.emitter.lines, "\n"); got != want {
		t.Errorf("alerts\n%s\nwant\n%s", got, want)
	}
}

func TestPodPressure(t *testing.T) {
	w := newWorld(t)
	got := runBundled(t, w, "pod-pressure")
	want := `   CGROUP               MEMORY                     CPU
!! pod/1234abcd-5678-90ef-1234-567890abcdef
                        1.8 GiB/2.0 GiB  90%       ?/1 cores
   top offenders: java 201 1.3 GiB
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if l := logLines(w, "pod-pressure:"); len(l) != 1 || !strings.Contains(l[0], "level=WARN") || !strings.Contains(l[0], "at 90% of its memory limit") {
		t.Errorf("alert logs %q", l)
	}

	w = newWorld(t)
	if got := runBundled(t, w, "pod-pressure", "threshold=95"); strings.Contains(got, "!!") || len(w.emitter.lines) != 0 {
		t.Errorf("threshold=95 still flags: %s %q", got, w.emitter.lines)
	}
	for _, arg := range []string{"threshold=180", "top=-1", "top=many"} {
		if _, err := tryBundled(t, w, "pod-pressure", arg); !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), "pod-pressure.lua:") {
			t.Errorf("%s: %v", arg, err)
		}
	}
	if got := runBundled(t, w, "pod-pressure", "top=0"); !strings.HasSuffix(got, "cores\n") {
		t.Errorf("top=0 still lists offenders:\n%s", got)
	}
}

// Under watch, a cgroup alerts when it crosses the threshold, not again
// while it stays over, and again once it went below and crossed again.
func TestPodPressureAlertsOncePerCrossing(t *testing.T) {
	w := newWorld(t)
	src, _ := scripts.Lookup("pod-pressure")
	s, err := Compile("pod-pressure.lua", src.Source)
	if err != nil {
		t.Fatal(err)
	}
	group := w.in.Sessions
	// The pod is at 90 % in ticks 1, 2, 4 and 5, at 50 % in tick 3.
	tick := 0
	in := Input{Snapshot: w.snap, Sessions: func() ([]session.Session, error) {
		sessions, err := group()
		for i := range sessions {
			if c := sessions[i].Totals.Cgroup; c != nil && tick == 3 {
				c.MemoryPercent = 50
			}
		}
		return sessions, err
	}}
	cfg := w.cfg
	cfg.Mode = "watch"
	r := New(cfg)
	defer r.Close()
	var alerts []int
	for tick = 1; tick <= 5; tick++ {
		before := len(w.emitter.lines)
		if err := r.Run(context.Background(), s, in); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		if len(w.emitter.lines) > before {
			alerts = append(alerts, tick)
		}
	}
	if fmt.Sprint(alerts) != "[1 4]" {
		t.Errorf("alerts in ticks %v, want [1 4]", alerts)
	}
}

func TestGrowthWatch(t *testing.T) {
	w := newWorld(t)
	// claude grows 600 MiB/min, java 100 MiB/min (below the rate), node is
	// big enough but shrinks.
	w.snap.Process(110).Rates = procwalk.Rates{Measured: true, RSSGrowthBytesPerMinute: 600 << 20, HaveSmaps: true, PSSGrowthBytesPerMinute: 450 << 20}
	w.snap.Process(201).Rates = procwalk.Rates{Measured: true, RSSGrowthBytesPerMinute: 100 << 20}
	w.snap.Process(112).Rates = procwalk.Rates{Measured: true, RSSGrowthBytesPerMinute: -50 << 20}
	got := runBundled(t, w, "growth-watch")
	want := `growth-watch: 1 process of at least 256.0 MiB growing faster than 200.0 MiB/min
  claude 110 grows 450.0 MiB/min, now 1.1 GiB in agent:claude/myproj
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	wantAlert := "procwalk_alert kind=agent,rule=growth-watch.lua,session=claude/myproj,severity=warning | comm=claude,message=growth-watch: claude 110 grows 450.0 MiB/min, now 1.1 GiB in agent:claude/myproj,pid=110,threshold=2.097152e+08,value=4.718592e+08 @1700864000"
	if got := strings.Join(w.emitter.lines, "\n"); got != wantAlert {
		t.Errorf("alert\n%s\nwant\n%s", got, wantAlert)
	}
	if len(w.killer.calls) != 0 {
		t.Errorf("killed without kill=1: %q", w.killer.calls)
	}

	got = runBundled(t, w, "growth-watch", "rate=50MiB", "min=1GiB", "kill=1")
	if !strings.Contains(got, "2 processes of at least 1.0 GiB growing faster than 50.0 MiB/min\n  claude 110") || !strings.Contains(got, "\n  java 201 grows 100.0 MiB/min") {
		t.Errorf("rate=50MiB min=1GiB:\n%s", got)
	}
	if want := "process 110@160000 sig=0 grace=10s dry=false by=rule:growth-watch.lua|process 201@60000 sig=0 grace=10s dry=false by=rule:growth-watch.lua"; strings.Join(w.killer.calls, "|") != want {
		t.Errorf("kills %q, want %q", w.killer.calls, want)
	}
}

// Under watch, growth must last ticks=3 ticks and alerts once.
func TestGrowthWatchNeedsTicks(t *testing.T) {
	w := newWorld(t)
	w.snap.Process(110).Rates = procwalk.Rates{Measured: true, RSSGrowthBytesPerMinute: 600 << 20}
	tickBundled(t, w, "growth-watch", 2)
	if len(w.emitter.lines) != 0 {
		t.Fatalf("alerted before 3 ticks: %q", w.emitter.lines)
	}
	tickBundled(t, w, "growth-watch", 5)
	if len(w.emitter.lines) != 1 {
		t.Errorf("want one alert after the third tick, got %q", w.emitter.lines)
	}
}

func TestMemoryGuard(t *testing.T) {
	w := newWorld(t)
	got := runBundled(t, w, "memory-guard", "limit=1GiB")
	want := `tmux:build                                 307.5 MiB pss of 1.0 GiB
tmux:work                                    1.6 GiB pss of 1.0 GiB  OVER
agent:claude/myproj                          1.6 GiB pss of 1.0 GiB  OVER
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(w.killer.calls) != 0 {
		t.Errorf("one run with ticks=3 killed: %q", w.killer.calls)
	}

	// Watch: over the limit for 3 ticks, then one kill of the biggest
	// member (claude, in both sessions), then 3 more ticks before the next.
	w = newWorld(t)
	tickBundled(t, w, "memory-guard", 2, "limit=1GiB")
	if len(w.killer.calls) != 0 {
		t.Fatalf("killed before 3 ticks: %q", w.killer.calls)
	}
	w = newWorld(t)
	tickBundled(t, w, "memory-guard", 6, "limit=1GiB", "grace=5", "signal=INT")
	want = "process 110@160000 sig=2 grace=5s dry=false by=rule:memory-guard.lua|process 110@160000 sig=2 grace=5s dry=false by=rule:memory-guard.lua"
	if got := strings.Join(w.killer.calls, "|"); got != want {
		t.Errorf("kills over 6 ticks\n%s\nwant (tick 3 and 6, one per tick though two sessions are over)\n%s", got, want)
	}
	alerts := logLines(w, "memory-guard: tmux:work used 1.6 GiB for 3 ticks (limit 1.0 GiB): exited claude 110 (1.1 GiB)")
	if len(alerts) != 2 || !strings.Contains(alerts[0], "level=WARN") {
		t.Errorf("alerts %q", alerts)
	}
}

// A protected biggest member is skipped for the next one.
func TestMemoryGuardSkipsProtected(t *testing.T) {
	w := newWorld(t)
	w.killer.results = map[int]kill.Result{110: kill.ResultProtected}
	runBundled(t, w, "memory-guard", "limit=1GiB", "ticks=1", "session=tmux:work")
	want := "process 110@160000 sig=15 grace=10s dry=false by=rule:memory-guard.lua|process 112@170100 sig=15 grace=10s dry=false by=rule:memory-guard.lua"
	if got := strings.Join(w.killer.calls, "|"); got != want {
		t.Errorf("kills %q, want %q", got, want)
	}
	if l := logLines(w, "skipping claude 110"); len(l) != 1 {
		t.Errorf("no log of the skip: %s", w.logs.String())
	}
}

func TestMemoryGuardDryRun(t *testing.T) {
	w := newWorld(t)
	w.cfg.DryRun = true
	runBundled(t, w, "memory-guard", "limit=1GiB", "ticks=1", "kinds=agent")
	if l := logLines(w, "would kill claude 110"); len(l) != 1 || !strings.Contains(l[0], "dry_run=true") {
		t.Errorf("logs:\n%s", w.logs.String())
	}
	if got := strings.Join(w.killer.calls, "|"); got != "process 110@160000 sig=15 grace=10s dry=true by=rule:memory-guard.lua" {
		t.Errorf("kills %q", got)
	}
}

// No sessions is nothing to say; a sessions error or an unknown session
// is said, with its reason (never a bare "nil").
func TestMemoryGuardWithoutSessions(t *testing.T) {
	for _, c := range []struct {
		name     string
		sessions func() ([]session.Session, error)
		args     []string
		wantLog  string
	}{
		{"none", func() ([]session.Session, error) { return nil, nil }, nil, ""},
		{"grouping failed", func() ([]session.Session, error) { return nil, errors.New("tmux: server did not answer") },
			nil, `level=INFO msg="memory-guard: nothing guarded: tmux: server did not answer" script=memory-guard.lua` + "\n"},
		{"unknown session", nil, []string{"session=tmux:nope"},
			`level=INFO msg="memory-guard: nothing guarded: no such session tmux:nope`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.sessions != nil {
				w.in.Sessions = c.sessions
			}
			runBundled(t, w, "memory-guard", c.args...)
			got := w.logs.String()
			if !strings.HasPrefix(got, c.wantLog) || (c.wantLog == "") != (got == "") || strings.Contains(got, "nil") {
				t.Errorf("logs %q, want %q", got, c.wantLog)
			}
			if len(w.killer.calls) != 0 {
				t.Errorf("killed %q", w.killer.calls)
			}
		})
	}
}

func TestMemoryGuardBadArgs(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"limit=lots"}, {"ticks=0"}, {"ticks=1.5"}, {"grace=-1"}} {
		if _, err := tryBundled(t, w, "memory-guard", args...); !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), "memory-guard.lua:") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func TestGrowthWatchBadArgs(t *testing.T) {
	w := newWorld(t)
	for _, arg := range []string{"rate=fast", "min=big", "ticks=0", "grace=0"} {
		if _, err := tryBundled(t, w, "growth-watch", arg); !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), "growth-watch.lua:") {
			t.Errorf("%s: %v", arg, err)
		}
	}
}

// A parent holding many zombies is summarized by name: a copy of the
// fixture with nine more zombie children of make (120).
func TestZombiesSummarizesMany(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/proc")); err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("testdata/proc/122/stat")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 9; i++ {
		pid := strconv.Itoa(130 + i)
		comm := "cc1"
		if i%3 == 0 {
			comm = "sh"
		}
		line := strings.Replace(strings.Replace(string(stat), "122 (cc1)", pid+" ("+comm+")", 1), " 180200 ", " 180300 ", 1)
		for _, f := range []string{"stat", "statm"} {
			src := []byte(line)
			if f == "statm" {
				src = []byte("0 0 0 0 0 0 0\n")
			}
			if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, pid, f), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fs, err := procwalk.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.AllFields)
	if err != nil {
		t.Fatal(err)
	}
	snap.Time = fixtureTime
	w := newWorld(t)
	w.in = Input{Snapshot: snap}
	got := runBundled(t, w, "zombies")
	want := "11 zombies under 2 parents\n  make 120: 10 not reaped: cc1 x7, sh x3 (oldest 9 days 23 hr)\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got\n%s\nwant it to start with\n%s", got, want)
	}
}
