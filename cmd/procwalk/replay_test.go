//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/recording"
	"github.com/procwalk/procwalk/scripts"
)

// scriptBase are the flags of a run on the scripting fixture.
func scriptBase() []string {
	return []string{"--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux"}
}

// recordFixture records count frames of the scripting fixture on clock
// into a file of the test's and returns its path.
func recordFixture(t *testing.T, clock procwalk.Clock, count int, extra ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.pwrec")
	args := append(append([]string{"record", "-o", path, "--count", strconv.Itoa(count), "--interval", "1ms"}, scriptBase()...), extra...)
	r := runClockWorker(t, clock, "", "", args...)
	if r.code != exitOK || !strings.Contains(r.stderr, fmt.Sprintf("procwalk: recorded %d frames", count)) {
		t.Fatalf("record: exit %d, stderr %q", r.code, r.stderr)
	}
	return path
}

// replayFrame is the line run --replay writes before each frame's run.
var replayFrame = regexp.MustCompile(`(?m)^procwalk: replay: frame \d+ at [^\n]*\n`)

// TestReplaySameAsLive records the fixture once and runs every bundled
// script on it, live and replayed: the same report, log lines and line
// protocol (timestamps too, the clock being fixed), in-process and, under
// PROCWALK_INTEGRATION, in a worker.
func TestReplaySameAsLive(t *testing.T) {
	inWorker := os.Getenv("PROCWALK_INTEGRATION") == "1" // before clearEnv blanks it
	clearEnv(t)
	now := fixtureBoot().Add(time.Hour)
	t.Setenv(workerClockEnv, strconv.FormatInt(now.Unix(), 10))
	rec := recordFixture(t, fixedClock{now}, 1, "--pss") // a live run reads p.pss late
	workers := []string{""}
	if inWorker {
		workers = append(workers, os.Args[0])
	}
	for _, name := range scripts.Names() {
		for _, worker := range workers {
			t.Run(fmt.Sprintf("%s worker=%v", name, worker != ""), func(t *testing.T) {
				live := runClockWorker(t, fixedClock{now}, "", "", append(append([]string{"run", "--no-rates", "--dry-run", "--pss"}, scriptBase()...), name)...)
				replayed := runClockWorker(t, fixedClock{now.Add(48 * time.Hour)}, worker, "", "run", "--replay", rec, "--passwd", "/nonexistent", name)
				if live.code != exitOK || replayed.code != exitOK {
					t.Fatalf("exit %d live, %d replayed; stderr:\n%s\n---\n%s", live.code, replayed.code, live.stderr, replayed.stderr)
				}
				if live.stdout != replayed.stdout {
					t.Errorf("stdout differs:\nlive:\n%s\nreplayed:\n%s", live.stdout, replayed.stdout)
				}
				// A live run's log records are dated by the wall clock.
				stderr := slogTime.ReplaceAllString(replayFrame.ReplaceAllString(replayed.stderr, ""), "")
				if !replayFrame.MatchString(replayed.stderr) || slogTime.ReplaceAllString(live.stderr, "") != stderr {
					t.Errorf("stderr differs:\nlive:\n%s\nreplayed:\n%s", live.stderr, replayed.stderr)
				}
			})
		}
	}
}

// steppingClock reads the time it was set to.
type steppingClock struct{ now time.Time }

func (c *steppingClock) Now() time.Time { return c.now }

// writeRecording writes n frames of the scripting fixture a minute apart,
// from start, into a recording; edit may change each frame (i from 0).
func writeRecording(t *testing.T, start time.Time, n int, edit func(i int, f *frame.Frame)) string {
	t.Helper()
	fs, err := procwalk.NewFS(scriptProc)
	if err != nil {
		t.Fatal(err)
	}
	clock := &steppingClock{now: start}
	p := frame.New(fs, frame.Config{Fields: procwalk.AllFields, Clock: clock})
	path := filepath.Join(t.TempDir(), "minutes.pwrec")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	w, err := recording.NewWriter(file, recording.Header{Procwalk: "test", Host: "build7", IntervalSeconds: 60}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		clock.now = start.Add(time.Duration(i) * time.Minute)
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(i, &f)
		}
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// lpTimes returns the timestamps of the line-protocol lines of stdout
// whose measurement is m.
func lpTimes(stdout, m string) []time.Time {
	var out []time.Time
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, m+",") && !strings.HasPrefix(l, m+" ") {
			continue
		}
		ns, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
		if err == nil {
			out = append(out, time.Unix(0, ns))
		}
	}
	return out
}

// TestReplayDebounceOnRecordedClock: a rule alerting when its condition
// has held for 5 minutes (pw.debounce with a duration) fires at the
// recorded minute 5 of a recording made a minute a frame, whenever it is
// replayed; pw.now() is the frame's time; watch --replay --interval 2m
// ticks on frames 0, 2, 4, 6 and fires at minute 6, the first tick 5
// minutes after the condition first held.
func TestReplayDebounceOnRecordedClock(t *testing.T) {
	clearEnv(t)
	start := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	rec := writeRecording(t, start, 10, nil)
	rule := writeScript(t, "held.lua", `
local pw = require "procwalk"
if pw.debounce("held", true, "5m") then
  pw.alert{message = "held since " .. os.date("!%H:%M", pw.now() - 300)}
end
pw.emit("tick", {}, {now = pw.now()})
`)
	for _, c := range []struct {
		args  []string
		fires []time.Time
		ticks int
	}{
		{nil, []time.Time{start.Add(5 * time.Minute), start.Add(6 * time.Minute), start.Add(7 * time.Minute), start.Add(8 * time.Minute), start.Add(9 * time.Minute)}, 10},
		{[]string{"--interval", "2m"}, []time.Time{start.Add(6 * time.Minute), start.Add(8 * time.Minute)}, 5},
		{[]string{"--count", "6"}, []time.Time{start.Add(5 * time.Minute)}, 6},
	} {
		args := append(append([]string{"watch", "--replay", rec}, c.args...), rule)
		r := cliAt(t, time.Now(), args...)
		if r.code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		fires := lpTimes(r.stdout, "procwalk_alert")
		if fmt.Sprint(fires) != fmt.Sprint(c.fires) {
			t.Errorf("%q: alerts at %v, want %v\n%s", c.args, fires, c.fires, r.stdout)
		}
		if len(fires) > 0 && !strings.Contains(r.stdout, `message="held since 03:00"`) && !strings.Contains(r.stdout, `message="held since 03:01"`) {
			t.Errorf("%q: pw.now() is not the recorded time:\n%s", c.args, r.stdout)
		}
		if ticks := lpTimes(r.stdout, "tick"); len(ticks) != c.ticks || !ticks[0].Equal(start) {
			t.Errorf("%q: %d ticks from %v, want %d from %v", c.args, len(ticks), ticks, c.ticks, start)
		}
		if !strings.Contains(r.stderr, fmt.Sprintf("procwalk: replayed %d frames of %s", c.ticks, rec)) {
			t.Errorf("%q: stderr %q", c.args, r.stderr)
		}
	}
}

// TestReplayKillIsRehearsed: a kill in a replay is planned on the
// recorded frame and reported as a dry run, without --dry-run, and never
// sent: the recording holds a live process the test started, under its
// own pid and start time, and it outlives the replay. A protected name is
// refused as it would have been.
func TestReplayKillIsRehearsed(t *testing.T) {
	clearEnv(t)
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	live, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Skip("no /proc here")
	}
	id, err := live.ReadProcID(sleep.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	rec := writeRecording(t, start, 2, func(i int, f *frame.Frame) {
		procs := append([]procwalk.Process(nil), f.Snapshot.Procs...)
		p := procs[len(procs)-1]
		p.ID, p.PPID, p.Comm, p.Cmdline, p.Kernel = id, 1, "sleep", []string{"sleep", "600"}, false
		sshd := p
		sshd.ID, sshd.Comm, sshd.Cmdline = procwalk.ProcID{PID: id.PID + 1, StartTicks: 7}, "sshd", []string{"sshd"}
		procs = append(procs, p, sshd)
		s := procwalk.NewSnapshot(f.Snapshot.Host, f.Snapshot.Fields, 0, procs, f.Snapshot.Visibility)
		s.Time = f.Snapshot.Time
		f.Snapshot = s
	})
	rule := writeScript(t, "kill.lua", fmt.Sprintf(`
local pw = require "procwalk"
for _, pid in ipairs{%d, %d} do
  local report, err = pw.kill(pid, {signal = "KILL"})
  print(pid, report and report.dry_run, report and report.outcomes[1].result, err ~= nil)
end
`, id.PID, id.PID+1))
	r := cli(t, "watch", "--replay", rec, rule)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := fmt.Sprintf("%d\ttrue\tdry_run\tfalse\n%d\ttrue\trefused_protected\ttrue\n", id.PID, id.PID+1)
	if got := strings.Join(strings.SplitAfter(r.stdout, "\n")[:2], ""); got != want {
		t.Errorf("first tick printed %q, want %q", got, want)
	}
	actions := lpTimes(r.stdout, "procwalk_action")
	if len(actions) != 4 || !actions[0].Equal(start) || !actions[2].Equal(start.Add(time.Minute)) {
		t.Errorf("procwalk_action lines at %v, want two at %v and two a minute later:\n%s", actions, start, r.stdout)
	}
	if !strings.Contains(r.stdout, "outcome=dry_run") || strings.Contains(r.stdout, "outcome=killed") || !strings.Contains(r.stdout, "dry_run=true") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if err := sleep.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the sleep the recording names is gone: %v", err)
	}
}

// TestReplayRecordedHost: in a replay, pw.hostname() and the host of an
// --on-alert command's JSON are the recorded host's (a recording made on
// build7 and replayed here says build7), as its clock is the recorded one.
func TestReplayRecordedHost(t *testing.T) {
	clearEnv(t)
	if h, _ := os.Hostname(); h == "build7" {
		t.Skip("this host is the recording's build7")
	}
	rec := writeRecording(t, time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC), 2, nil)
	out := filepath.Join(t.TempDir(), "alerts.jsonl")
	rule := writeScript(t, "host.lua", `local pw = require "procwalk"
print(pw.hostname())
pw.alert{message = "on " .. pw.hostname(), value = 1}`)
	r := cli(t, "watch", "--replay", rec, "--on-alert", "cat >> "+out, rule)
	printed := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		if l == "build7" {
			printed++
		}
	}
	if r.code != exitOK || printed != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want build7 printed each frame", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), `"host":"build7","message":"on build7"`); n != 2 {
		t.Errorf("the command got %q, want 2 alerts from build7", b)
	}
}

// TestReplayRunAt: run --replay --at runs on the one frame shown at that
// time; before the recording starts is an error saying when it starts.
func TestReplayRunAt(t *testing.T) {
	clearEnv(t)
	start := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	rec := writeRecording(t, start, 5, nil)
	rule := writeScript(t, "now.lua", `print(os.date("!%H:%M:%S", require("procwalk").now()))`)
	for _, c := range []struct{ at, want string }{
		{"+150s", "03:02:00\n"},
		{"2026-03-01T03:04:30Z", "03:04:00\n"},
		{"+0s", "03:00:00\n"},
	} {
		r := cli(t, "run", "--replay", rec, "--at", c.at, rule)
		if r.code != exitOK || r.stdout != c.want || strings.Count(r.stderr, "procwalk: replay: frame") != 1 {
			t.Errorf("--at %s: exit %d, stdout %q, want %q; stderr %q", c.at, r.code, r.stdout, c.want, r.stderr)
		}
	}
	r := cli(t, "run", "--replay", rec, rule)
	if r.code != exitOK || r.stdout != "03:00:00\n03:01:00\n03:02:00\n03:03:00\n03:04:00\n" {
		t.Errorf("every frame: exit %d, stdout %q", r.code, r.stdout)
	}
	r = cli(t, "run", "--replay", rec, "--at", "2026-03-01T02:00:00Z", rule)
	if r.code != exitUsage || !strings.Contains(r.stderr, "the recording starts later") {
		t.Errorf("--at before the start: exit %d, stderr %q", r.code, r.stderr)
	}
	r = cli(t, "run", "--at", "+1m", rule)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--at +1m needs --replay FILE") {
		t.Errorf("--at without --replay: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestReplayBadFile: not a recording, a newer format, a missing file are
// usage errors that say so; a file cut short replays its whole frames and
// says where it stopped.
func TestReplayBadFile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	notRec := filepath.Join(dir, "ps.txt")
	os.WriteFile(notRec, []byte("PID COMM\n"), 0o644)
	rec := writeRecording(t, time.Unix(1800000000, 0), 3, nil)
	b, _ := os.ReadFile(rec)
	newer := filepath.Join(dir, "newer.pwrec")
	os.WriteFile(newer, bytes.Replace(b, []byte(fmt.Sprintf("procwalk-recording %d\n", recording.FormatVersion)), []byte("procwalk-recording 7\n"), 1), 0o644)
	cut := filepath.Join(dir, "cut.pwrec")
	os.WriteFile(cut, b[:len(b)-100], 0o644)
	rule := writeScript(t, "n.lua", `print(require("procwalk").snapshot().procs)`)
	for _, c := range []struct {
		file, want string
		code       int
	}{
		{notRec, "is not a procwalk recording", exitUsage},
		{newer, fmt.Sprintf("is a recording of format 7 (by test), newer than this procwalk reads (format %d)", recording.FormatVersion), exitUsage},
		{filepath.Join(dir, "missing"), "no such file", exitUsage},
		{cut, "replay stopped: the recording ends in the middle of a frame: " + cut + " ends inside frame 3", exitOK},
	} {
		r := cli(t, "watch", "--replay", c.file, rule)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %d and %q", c.file, r.code, r.stderr, c.code, c.want)
		}
	}
}

// TestRecordCommand records the fixture with the command: frames, header
// (version, interval, kinds, the user database), --anonymize, and its
// usage errors.
func TestRecordCommand(t *testing.T) {
	clearEnv(t)
	now := fixtureBoot().Add(time.Hour)
	path := recordFixture(t, fixedClock{now}, 3, "--kind", "user,sid")
	r, err := recording.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if n, err := r.Len(); n != 3 || err != nil {
		t.Errorf("%d frames (%v), want 3", n, err)
	}
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Procwalk != versionLine() || h.IntervalSeconds != 0.001 || strings.Join(h.Kinds, ",") != "user,sid" || h.Anonymized ||
		h.UserNames() == nil || !f.Snapshot.Time.Equal(now) || len(f.Sessions) == 0 {
		t.Errorf("header %+v, first frame at %v with %d sessions", h, f.Snapshot.Time, len(f.Sessions))
	}
	for _, s := range f.Sessions {
		if s.Kind != "user" && s.Kind != "sid" {
			t.Errorf("session %s recorded, not of --kind", s.Ref())
		}
	}
	anon := recordFixture(t, fixedClock{now}, 1, "--anonymize")
	ar, err := recording.Open(anon)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	if !ar.Header().Anonymized {
		t.Errorf("--anonymize: header %+v", ar.Header())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record"}, "name the recording to write: -o FILE"},
		{[]string{"record", "-o", path, "extra"}, `unexpected "extra"`},
		{[]string{"record", "-o", path, "--max-size", "1KiB"}, "--max-size \"1KiB\": want a size of at least 1MiB"},
		{[]string{"record", "-o", path, "--kind", "bogus"}, "bogus"},
		{[]string{"record", "-o", path, "--no-rates"}, "--no-rates does not apply to record"},
	} {
		r := cli(t, append(c.args, scriptBase()...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q", c.args, r.code, r.stderr)
		}
	}
}

// A recording interrupted by SIGINT keeps its frames: record stops
// between frames when its context ends.
func TestRecordInterrupted(t *testing.T) {
	clearEnv(t)
	path := filepath.Join(t.TempDir(), "i.pwrec")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := cliContext(t, ctx, append([]string{"record", "-o", path}, scriptBase()...)...)
	if r.code != exitOK || !strings.Contains(r.stderr, "procwalk: recorded 0 frames") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := recording.Open(path); err != nil {
		t.Errorf("an interrupted recording does not open: %v", err)
	}
}

// top --replay shows a recording's frames: --at picks the one shown then,
// Step stays within the recording, and --once prints it with its place.
func TestTopReplay(t *testing.T) {
	clearEnv(t)
	start := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	rec := writeRecording(t, start, 5, nil)
	s, err := newReplayTopSource(rec, "2026-03-01T03:02:30Z")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, _ := s.Gather(top.Need{}, nil)
	if !f.Snapshot.Time.Equal(start.Add(2*time.Minute)) || !strings.Contains(s.Position(), "frame 3 of 5") || !strings.HasSuffix(s.Position(), "(+2m0s)") {
		t.Errorf("--at 03:02:30: frame at %v, %q", f.Snapshot.Time, s.Position())
	}
	s.Step(10)
	if f, _ := s.Gather(top.Need{}, nil); !f.Snapshot.Time.Equal(start.Add(4*time.Minute)) || !strings.Contains(s.Position(), "frame 5 of 5") {
		t.Errorf("past the end: frame at %v, %q", f.Snapshot.Time, s.Position())
	}
	s.Step(-10)
	if f, _ := s.Gather(top.Need{}, nil); !f.Snapshot.Time.Equal(start) {
		t.Errorf("before the start: frame at %v", f.Snapshot.Time)
	}
	r := cliColumns(t, 200, time.Now(), "top", "--replay", rec, "--at", "+1m", "--once", "--interval", "1ms")
	if r.code != exitOK || !strings.Contains(r.stdout, "procwalk top  replay "+rec+" frame 2 of 5") {
		t.Errorf("--once: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "--once", "--at", "+1m"}, "--at +1m needs --replay FILE"},
		{[]string{"top", "--once", "--replay", rec, "--at", "2026-03-01T02:00:00Z"}, "the recording starts later"},
		{[]string{"top", "--once", "--replay", rec + ".none"}, "no such file"},
	} {
		r := cli(t, append(c.args, scriptBase()...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
	// A bad --at from the environment names the variable, as run's does.
	t.Setenv("PROCWALK_AT", "soon")
	r = cli(t, append([]string{"top", "--once", "--replay", rec}, scriptBase()...)...)
	if want := `procwalk: PROCWALK_AT: at "soon": want an offset`; r.code != exitUsage || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("PROCWALK_AT=soon: exit %d, %q; want 2, %q...", r.code, r.stderr, want)
	}
}
