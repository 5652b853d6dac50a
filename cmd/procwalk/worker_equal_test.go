//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/scripts"
)

// workerClockEnv carries the fixed clock of a test's worker (unix
// seconds): the test binary is then the worker, and its scans read the
// same time as the parent's. Not PROCWALK_*: that prefix is procwalk's
// flags.
const workerClockEnv = "PWTEST_WORKER_CLOCK"

// TestMain makes the test binary a script worker when a test starts it as
// one (worker_equal_test.go): procwalk's worker on the test's fixed clock.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		sec, _ := strconv.ParseInt(os.Getenv(workerClockEnv), 10, 64)
		err := runWorker(context.Background(), os.Stdin, os.NewFile(3, "worker messages"), os.Stderr, fixedClock{time.Unix(sec, 0)})
		os.Exit(exitCode(err))
	}
	os.Exit(m.Run())
}

// fixedClock always reads t: two processes scanning on it date their
// snapshots alike, to the nanosecond of the line protocol's timestamps.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// hostileOutput prints, logs, alerts and emits strings that escaping must
// not touch twice: format characters (U+FEFF, U+200B), a line separator,
// an escape sequence, quotes, backslashes, invalid UTF-8, a long line.
const hostileOutput = `
local pw = require "procwalk"
local nasty = {"zero\u{200B}width", "bom\u{FEFF}", "ls\u{2028}sep", "esc\27[31mred", 'q"uo\\te', "bad\255utf", "tab\there", "nl\nhere", "é ü 日本", ("w"):rep(5000)}
for i, s in ipairs(nasty) do
  print(i, s)
  pw.log("log", i, s)
  pw.emit("hostile", {n = tostring(i), s = s}, {v = i, f = s, b = true})
end
pw.alert{message = "alert " .. nasty[1] .. nasty[2], level = "critical", value = 1}
print(pw.printable(nasty[4]))
`

// slogTime is the time of a text log record: the wall clock, not the
// scan's, so it differs from one run to the next.
var slogTime = regexp.MustCompile(`(?m)^time=\S+ `)

// lpTime is the timestamp ending a line of line protocol.
var lpTime = regexp.MustCompile(`(?m) \d{19}$`)

// TestIntegrationWorkerOutputEqual runs every bundled script and a script
// of hostile strings in a worker (the test binary, on the same fixed
// clock) and in-process, and wants the same bytes on stdout and on stderr
// (log records' wall-clock time aside): the worker's line protocol was
// escaped a second time by the parent, so a field holding U+FEFF became
// \ufeff and Telegraf rejected the line.
func TestIntegrationWorkerOutputEqual(t *testing.T) {
	integration(t)
	clearEnv(t)
	now := fixtureBoot().Add(time.Hour)
	t.Setenv(workerClockEnv, strconv.FormatInt(now.Unix(), 10))
	hostile := strings.Replace(hostileOutput, `\u{200B}`, "\u200b", 1)
	hostile = strings.Replace(hostile, `\u{FEFF}`, "\ufeff", 1)
	hostile = strings.Replace(hostile, `\u{2028}`, "\u2028", 1)
	path := writeScript(t, "hostile.lua", hostile)
	base := []string{"--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup, "--tmux-socket", "/nonexistent/tmux", "--dry-run"}
	type call struct {
		name  string
		args  []string
		stdin string
	}
	var calls []call
	for _, name := range append(scripts.Names(), path) {
		calls = append(calls, call{"run " + name, append(append([]string{"run", "--no-rates"}, base...), name), ""})
	}
	calls = append(calls,
		call{"run --lines-only hostile", append(append([]string{"run", "--no-rates", "--lines-only"}, base...), path), ""},
		call{"watch hostile", append(append([]string{"watch", "--count", "1"}, base...), path), ""},
		call{"telegraf --execd hostile", append([]string{"telegraf", "--execd", "--session-kinds", "user,agent", "--skip-self-metrics", "--script", path}, base...), "\n"},
		call{"telegraf exec hostile", append([]string{"telegraf", "--session-kinds", "user,agent", "--skip-self-metrics", "--script", path}, base...), ""},
	)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			in := runClockWorker(t, fixedClock{now}, "", c.stdin, append(c.args, "--script-isolation", "off")...)
			w := runClockWorker(t, fixedClock{now}, os.Args[0], c.stdin, c.args...)
			if in.code != exitOK || w.code != exitOK {
				t.Fatalf("exit %d in-process, %d in the worker; stderr:\n%s\n---\n%s", in.code, w.code, in.stderr, w.stderr)
			}
			if strings.HasPrefix(c.name, "telegraf") { // a batch is dated by the wall clock
				in.stdout, w.stdout = lpTime.ReplaceAllString(in.stdout, " T"), lpTime.ReplaceAllString(w.stdout, " T")
			}
			if in.stdout != w.stdout {
				t.Errorf("stdout differs:\nin-process:\n%s\nworker:\n%s", in.stdout, w.stdout)
			}
			if a, b := slogTime.ReplaceAllString(in.stderr, ""), slogTime.ReplaceAllString(w.stderr, ""); a != b {
				t.Errorf("stderr differs:\nin-process:\n%s\nworker:\n%s", a, b)
			}
			if !strings.Contains(c.name, "hostile") {
				return
			}
			if n := strings.Count(w.stdout, "hostile,"); n != 10 {
				t.Errorf("%d hostile lines, want 10:\n%s", n, w.stdout)
			}
			if !strings.Contains(w.stdout, "f=\"bom\ufeff\"") {
				t.Errorf("no field of U+FEFF as it is:\n%s", w.stdout)
			}
		})
	}
}

// runClockWorker runs the command line on clock, its scripts in worker
// (a binary; "": in-process).
func runClockWorker(t *testing.T, clock procwalk.Clock, worker, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, clock: clock, worker: worker}
	err := runEnv(context.Background(), e, args)
	return result{stdout.String(), stderr.String(), exitCode(err)}
}

// The worker's peak RSS that a failed run reports is the worker's own: the
// test holds 256 MiB before it starts one, and wait4's ru_maxrss, which
// keeps the peak of the address space the worker shared with its parent
// until exec, said 256 MiB or more for a worker of 10.
func TestIntegrationWorkerPeakIsItsOwn(t *testing.T) {
	integration(t)
	clearEnv(t)
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	now := fixtureBoot().Add(time.Hour)
	t.Setenv(workerClockEnv, strconv.FormatInt(now.Unix(), 10))
	path := writeScript(t, "fails.lua", `error("fails")`)
	r := runClockWorker(t, fixedClock{now}, os.Args[0], "", "run", "--no-rates", "--proc", scriptProc, "--passwd", scriptPasswd, "--tmux-socket", "/nonexistent/tmux", path)
	runtime.KeepAlive(ballast)
	_, rest, ok := strings.Cut(r.stderr, "the worker's peak RSS: ")
	peak, err := procwalk.ParseBytes(strings.ReplaceAll(strings.TrimSuffix(strings.TrimSpace(rest), ")"), " ", ""))
	if r.code != exitError || !ok || err != nil {
		t.Fatalf("exit %d, stderr %q: no peak RSS (%v)", r.code, r.stderr, err)
	}
	t.Logf("the worker's peak RSS: %.1f MiB", float64(peak)/(1<<20))
	if peak == 0 || peak > 128<<20 {
		t.Errorf("the worker's peak RSS %d MiB: the parent's 256 MiB counted", peak>>20)
	}
}
