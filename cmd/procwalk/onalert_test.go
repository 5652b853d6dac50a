//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procwalk/procwalk/scripting"
)

// syncBuffer is a stderr written by the runner's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testAlert(i int) scripting.WorkerEmit {
	return scripting.WorkerEmit{Measurement: "procwalk_alert", Time: time.Unix(1800000000, int64(i)),
		Tags:   map[string]string{"rule": "r.lua", "severity": "warning", "kind": "tmux", "session": "evil\x1b]0;pwned\x07"},
		Fields: map[string]any{"message": "build\nuses 2 GiB", "value": 2.5, "pid": int64(42), "comm": "\u202eexe.txt"}}
}

// The alert's JSON: its tags and fields, time and host, every string
// escaped as procwalk prints names (an OSC sequence in a session name, a
// newline in a message, a bidi override in a comm cannot reach a
// terminal or a notification as they are).
func TestAlertJSON(t *testing.T) {
	b, err := alertJSON(testAlert(0), "host1")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil || !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("%q: %v", b, err)
	}
	want := map[string]any{"rule": "r.lua", "severity": "warning", "kind": "tmux", "session": `evil\x1b]0;pwned\x07`,
		"message": `build\nuses 2 GiB`, "value": 2.5, "pid": 42.0, "comm": `\u202eexe.txt`, "time": "2027-01-15T08:00:00Z", "host": "host1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keys %v", got)
	}
}

// At most --on-alert-max commands start a minute; the alerts past it are
// counted, and a line says how many were not sent.
func TestOnAlertRateLimit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "alerts")
	var stderr syncBuffer
	r := newAlertRunner(onAlertFlags{command: "cat >> " + out, timeout: time.Minute, max: 3}, &stderr, "host1")
	fixed := time.Unix(1800000000, 0)
	r.now = func() time.Time { return fixed }
	for i := range 5 {
		r.alert(testAlert(i))
	}
	r.close()
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("%d commands ran, want 3:\n%s", n, b)
	}
	if !strings.Contains(stderr.String(), "procwalk: on-alert: 2 alerts not sent: at most 3 commands a minute (--on-alert-max)") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// The watch loop never waits for a command: a command that hangs holds
// no alert() call; the queue takes onAlertQueue alerts, the rest are
// dropped and counted.
func TestOnAlertNeverBlocks(t *testing.T) {
	var stderr syncBuffer
	r := newAlertRunner(onAlertFlags{command: "true", timeout: time.Minute, max: 1000}, &stderr, "host1")
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	r.start = func(*exec.Cmd) error {
		started <- struct{}{}
		<-release // a command that does not end
		return errors.New("released")
	}
	r.alert(testAlert(0))
	<-started // the first is running, hung
	for i := range 100 {
		r.alert(testAlert(i + 1)) // returns at once, or the test hangs here
	}
	r.mu.Lock()
	dropped := r.dropped
	r.mu.Unlock()
	if dropped != 100-onAlertQueue {
		t.Errorf("%d alerts dropped, want %d", dropped, 100-onAlertQueue)
	}
	r.ending.Store(true) // watch ends: what is queued is not sent
	close(release)
	r.close()
	if !strings.Contains(stderr.String(), "procwalk: on-alert: true: released") ||
		!strings.Contains(stderr.String(), "100 alerts not sent") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// A command past its timeout is killed with its process group, a failing
// one is reported with its exit status and output, cut at 2 KiB, on one
// escaped line.
func TestOnAlertFailures(t *testing.T) {
	for _, c := range []struct {
		command, want string
		timeout       time.Duration
	}{
		{"sleep 600 & sleep 600", "procwalk: on-alert: sleep 600 & sleep 600: killed after --on-alert-timeout 200ms", 200 * time.Millisecond},
		{`printf 'bad\033[2J\n'; exit 3`, `exit status 3 after `, time.Minute},
		{`head -c 1000000 /dev/zero | tr '\0' x; exit 1`, "(output cut at 2.0 KiB)", time.Minute},
		{"exit 0", "", time.Minute},
	} {
		var stderr syncBuffer
		r := newAlertRunner(onAlertFlags{command: c.command, timeout: c.timeout, max: 10}, &stderr, "host1")
		r.alert(testAlert(0))
		r.close()
		got := stderr.String()
		if c.want == "" && got != "" || !strings.Contains(got, c.want) || strings.Count(got, "\n") > 1 || len(got) > 3<<10 {
			t.Errorf("%s: stderr %.300q, want %q on one line", c.command, got, c.want)
		}
		if strings.Contains(got, "\x1b") {
			t.Errorf("%s: an escape reached stderr: %q", c.command, got)
		}
	}
}

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
