//go:build linux

package scripting

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// A kill's own time counts against the deadline: a loop of kills that
// signal nothing (refused, each taking 5 ms) ran 10 s past a 2 s deadline
// while the deadline was paused for whole kill calls.
func TestKillCallCountsAgainstDeadline(t *testing.T) {
	w := newWorld(t)
	w.killer.call = 5 * time.Millisecond
	w.killer.results = map[int]kill.Result{121: kill.ResultProtected}
	w.cfg.Limits = Limits{Timeout: 200 * time.Millisecond}
	// 1,000 calls of at least 5 ms each are 5 s at least, past the
	// deadline however fast the machine.
	_, err := run(t, w.cfg, "loop.lua", `local pw = require "procwalk" for i = 1, 1000 do pw.kill(121) end`, w.in)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if n := len(w.killer.calls); n >= 1000 {
		t.Errorf("%d kill calls: the loop was not stopped", n)
	}
}

// The waits of a run's kills are not counted against the deadline, up to
// the grace budget: each kill's grace is cut to what is left, and a kill
// asked for when nothing is left is refused.
func TestKillGraceBudget(t *testing.T) {
	w := newWorld(t)
	w.killer.waited = 4 * time.Second // each kill says it waited 4 s
	w.cfg.Limits = Limits{Timeout: time.Second, GraceBudget: 10 * time.Second, KillsPerRun: 100}
	start := time.Now()
	got := w.eval(t, `
for i = 1, 4 do
  local r, err = pw.process(121):kill{grace = 4}
  print(i, r ~= nil, err)
end`)
	took := time.Since(start) // the fake waits nothing: all of it is the calls' own time
	want := "1\ttrue\tnil\n2\ttrue\tnil\n3\ttrue\tnil\n" +
		"4\tfalse\tkill process 121@180100 refused: this run's kills have waited the whole grace budget of 10s (--script-grace-budget); the next run may kill again"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The third cut to the 2 s left, less the time the calls took beside
	// their waits: at most the whole run's, whatever a loaded machine
	// made of it.
	if len(w.killer.calls) != 3 {
		t.Fatalf("calls %q, want 3", w.killer.calls)
	}
	for i, c := range w.killer.calls {
		_, g, _ := strings.Cut(c, "grace=")
		g, _, _ = strings.Cut(g, " ")
		grace, err := time.ParseDuration(g)
		want := 4 * time.Second
		if i == 2 {
			want = 2 * time.Second
		}
		if err != nil || grace > want || grace < want-took {
			t.Errorf("call %d: %s, want a grace of %v (less the calls' own time)", i+1, c, want)
		}
	}
}

// The waits reported by a kill move the deadline later by as much, and
// no more: a 1 s run whose kill waited 4 s ends fine.
func TestKillWaitNotCounted(t *testing.T) {
	w := newWorld(t)
	w.killer.call = 1500 * time.Millisecond   // longer than the deadline...
	w.killer.waited = 1500 * time.Millisecond // ...all of it spent waiting
	w.cfg.Limits = Limits{Timeout: time.Second}
	var moved []time.Duration
	w.cfg.DeadlineMoved = func(by time.Duration) { moved = append(moved, by) }
	start := time.Now()
	if got := w.eval(t, `print(pw.process(121):kill{grace = 3}.ok)`); got != "true" {
		t.Errorf("got %q", got)
	}
	// beside is what the run took besides the kill's 1.5 s sleep: the most
	// the kill's measured wait may exceed the 1.5 s it reports.
	beside := time.Since(start) - w.killer.call
	// Later by the grace and the wait after KILL, then back by what the
	// kill did not wait: 8 s - 1.5 s, give or take the run's own time.
	if len(moved) != 2 || moved[0] != 8*time.Second || moved[1] > -8*time.Second+1500*time.Millisecond+beside || moved[1] < -8*time.Second+1500*time.Millisecond {
		t.Errorf("deadline moved by %v, want 8s then -6.5s (less at most the run's own %v)", moved, beside)
	}
}

func TestKillBudgetPerRun(t *testing.T) {
	w := newWorld(t)
	w.cfg.Limits = Limits{KillsPerRun: 5}
	got := w.eval(t, `
local r, err = pw.kill("tmux:build") print(#r.outcomes, r.ok, err)  -- 4 of 5
local r, err = pw.kill("user:root") print(#r.outcomes > 1, r.ok, r.outcomes[1].result, r.outcomes[1].refused)
print(err:match("first: (.*)"))
print(pw.process(121):kill().ok)                                     -- the 5th
print(pw.process(122):kill{dry_run = true}.ok)                       -- dry runs do not count
local r, err = pw.process(122):kill() print(r.outcomes[1].result)`)
	want := "4\ttrue\tnil\ntrue\tfalse\trefused_budget\ttrue\n" +
		"over the kill budget: 14 processes to signal, 1 left of the script's 5 a run and 30 an hour (--script-kills-per-run, --script-kills-per-hour)\n" +
		"true\ntrue\nrefused_budget"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The hourly budget holds across runs (and a Runtime's state drops), on
// the ledger's clock.
func TestKillBudgetPerHour(t *testing.T) {
	now := fixtureTime
	ledger := NewKillLedger(6, func() time.Time { return now })
	w := newWorld(t)
	w.cfg.KillBudget = ledger
	w.cfg.Limits = Limits{KillsPerRun: 5}
	s, err := Compile("hourly.lua", []byte(`local pw = require "procwalk" local r = pw.kill("tmux:build") print(r.outcomes[1].result)`))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	w.cfg.Print = &out
	r := New(w.cfg)
	defer r.Close()
	for range 3 {
		if err := r.Run(context.Background(), s, w.in); err != nil {
			t.Fatal(err)
		}
		now = now.Add(20 * time.Minute)
	}
	// 4 killed at 0 min; at 20 min 2 are left of 6: refused; at 40 min too.
	if got := out.String(); got != "exited\nrefused_budget\nrefused_budget\n" {
		t.Errorf("got %q", got)
	}
	now = now.Add(5 * time.Minute) // 65 min: the first four are an hour old
	if got := ledger.Left(); got != 6 {
		t.Errorf("%d left after an hour, want 6", got)
	}
}

// EngineKiller refuses a plan with more targets than MaxTargets whole,
// before anything is sent, and audits each refusal. (The fixture's
// processes are no live processes: nothing could be signalled anyway.)
func TestEngineKillerBudget(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	snap := loadSnapshot(t)
	var events []kill.ActionEvent
	k := EngineKiller{FS: fs, Base: kill.Config{Audit: func(e kill.ActionEvent) { events = append(events, e) }}}
	scope := kill.TreeScope{Root: snap.Process(120).ID}
	r, err := k.Kill(context.Background(), scope, KillOptions{MaxTargets: 1, Budget: "1 left"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outcomes) < 2 {
		t.Fatalf("outcomes %+v, want the tree's members", r.Outcomes)
	}
	for _, o := range r.Outcomes {
		if o.Result != kill.ResultBudget || len(o.Signals) != 0 || !errors.Is(o.Err, kill.ErrBudget) || !strings.Contains(o.Err.Error(), "1 left") {
			t.Errorf("outcome %+v, want refused_budget with nothing sent", o)
		}
	}
	if len(events) != len(r.Outcomes) || events[0].Outcome != "refused_budget" {
		t.Errorf("audit events %+v", events)
	}
}
