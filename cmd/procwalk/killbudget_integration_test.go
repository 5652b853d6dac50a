//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A kill's own time counts against --script-timeout, in the worker and
// in-process: a loop of kills of pid 1, each refused (never signalled)
// after a scan of the real /proc, used to run 10 s past a 2 s deadline in
// the worker and for ever with --script-isolation off.
func TestIntegrationRefusedKillLoopStops(t *testing.T) {
	integration(t)
	clearEnv(t)
	rule := writeScript(t, "refused.lua", `local pw = require "procwalk" while true do pw.kill(1) end`)
	for _, mode := range []struct{ name, worker string }{{"worker", os.Args[0]}, {"in-process", ""}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Setenv(workerClockEnv, strconv.FormatInt(time.Now().Unix(), 10))
			start := time.Now()
			r := runClockWorker(t, fixedClock{time.Now()}, mode.worker, "", "run", "--no-rates", "--script-timeout", "1s", rule)
			took := time.Since(start)
			t.Logf("stopped after %.2f s: %s", took.Seconds(), r.stderr)
			// The script's own deadline, or on a machine loaded enough to
			// stall a kill's scan past it, the parent's a second later.
			if r.code != exitError || !strings.Contains(r.stderr, "1s deadline") {
				t.Errorf("exit %d, stderr %s; want 1 and the deadline", r.code, r.stderr)
			}
		})
	}
}

// A victim that ignores TERM, asked to be killed with a grace of 25 s,
// gets what is left of --script-grace-budget (2 s) and then KILL: the run
// ends about 2 s later, not 25.
func TestIntegrationGraceBudgetBoundsAKill(t *testing.T) {
	integration(t)
	clearEnv(t)
	child := startGroup(t, "trap '' TERM; while :; do sleep 1; done", "procwalk-test-grace-budget")
	rule := writeScript(t, "stubborn.lua", `local pw = require "procwalk"
local r, err = pw.process(tonumber(pw.args.pid)):kill{grace = 25}
print(r.outcomes[1].result, r.outcomes[1].kill_after)`)
	pid := strconv.Itoa(child.Process.Pid)
	for _, mode := range []struct{ name, worker string }{{"worker", os.Args[0]}, {"in-process", ""}} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.name == "in-process" {
				child = startGroup(t, "trap '' TERM; while :; do sleep 1; done", "procwalk-test-grace-budget")
				pid = strconv.Itoa(child.Process.Pid)
			}
			t.Setenv(workerClockEnv, strconv.FormatInt(time.Now().Unix(), 10))
			start := time.Now()
			r := runClockWorker(t, fixedClock{time.Now()}, mode.worker, "", "run", "--no-rates", "--script-grace-budget", "2s", rule, "--", "pid="+pid)
			took := time.Since(start)
			t.Logf("stopped after %.2f s; stdout %q stderr %q", took.Seconds(), r.stdout, r.stderr)
			first, _, _ := strings.Cut(r.stdout, "\n")
			if r.code != exitOK || !strings.HasPrefix(first, "killed\t2") {
				t.Errorf("exit %d, stdout %q; want the child killed after about 2 s", r.code, r.stdout)
			}
			if took >= 25*time.Second {
				t.Errorf("the run took %v: the grace was not cut", took)
			}
		})
	}
}
