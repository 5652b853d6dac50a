//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// watch --on-alert runs the command with each alert of a run; usage
// errors name the flag.
func TestWatchOnAlert(t *testing.T) {
	clearEnv(t)
	out := filepath.Join(t.TempDir(), "alerts.jsonl")
	rule := writeScript(t, "alert.lua", `local pw = require "procwalk"
pw.alert{message = "tick", session = "user:alice", value = 1}`)
	r := scriptCLI(t, "watch", "--count", "2", "--interval", "1ms", "--on-alert", "cat >> "+out, rule)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"message":"tick"`) || !strings.Contains(lines[0], `"session":"alice"`) {
		t.Errorf("the command got %q", b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--on-alert", "true", "--on-alert-max", "0"}, "--on-alert-max 0: want 1 to 1000"},
		{[]string{"--on-alert", "true", "--on-alert-timeout", "0s"}, "--on-alert-timeout 0s: want a positive duration"},
	} {
		r := scriptCLI(t, "watch", append(c.args, rule)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
}

// Under PROCWALK_INTEGRATION, the same in a worker process: its alerts
// reach the parent, which runs the command (the worker runs none).
func TestIntegrationWatchOnAlertWorker(t *testing.T) {
	integration(t)
	clearEnv(t)
	now := fixtureBoot().Add(time.Hour)
	t.Setenv(workerClockEnv, "1700003600")
	out := filepath.Join(t.TempDir(), "alerts.jsonl")
	rule := writeScript(t, "alert.lua", `local pw = require "procwalk"
pw.alert{message = "from the worker", value = 1}`)
	args := append([]string{"watch", "--count", "3", "--interval", "1ms", "--on-alert", "cat >> " + out}, scriptBase()...)
	r := runClockWorker(t, fixedClock{now}, os.Args[0], "", append(args, rule)...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), `"message":"from the worker"`); n != 3 {
		t.Errorf("%d alerts reached the command, want 3:\n%s", n, b)
	}
}
