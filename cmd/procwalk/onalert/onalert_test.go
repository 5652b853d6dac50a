//go:build linux

package onalert

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
	r := New(Config{Command: "cat >> " + out, Timeout: time.Minute, Max: 3}, &stderr)
	fixed := time.Unix(1800000000, 0)
	r.now = func() time.Time { return fixed }
	for i := range 5 {
		r.Alert(testAlert(i))
	}
	r.Close()
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("%d commands ran, want 3:\n%s", n, b)
	}
	if !strings.Contains(stderr.String(), "procwalk: on-alert: 2 alerts not sent: at most 3 commands a minute (--on-alert-max)") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// The watch loop never waits for a command: a command that hangs holds
// no Alert() call; the queue takes queueSize alerts, the rest are
// dropped and counted.
func TestOnAlertNeverBlocks(t *testing.T) {
	var stderr syncBuffer
	r := New(Config{Command: "true", Timeout: time.Minute, Max: 1000}, &stderr)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	r.start = func(*exec.Cmd) error {
		started <- struct{}{}
		<-release // a command that does not end
		return errors.New("released")
	}
	r.Alert(testAlert(0))
	<-started // the first is running, hung
	for i := range 100 {
		r.Alert(testAlert(i + 1)) // returns at once, or the test hangs here
	}
	r.mu.Lock()
	dropped := r.dropped
	r.mu.Unlock()
	if dropped != 100-queueSize {
		t.Errorf("%d alerts dropped, want %d", dropped, 100-queueSize)
	}
	r.ending.Store(true) // watch ends: what is queued is not sent
	close(release)
	r.Close()
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
		r := New(Config{Command: c.command, Timeout: c.timeout, Max: 10}, &stderr)
		r.Alert(testAlert(0))
		r.Close()
		got := stderr.String()
		if c.want == "" && got != "" || !strings.Contains(got, c.want) || strings.Count(got, "\n") > 1 || len(got) > 3<<10 {
			t.Errorf("%s: stderr %.300q, want %q on one line", c.command, got, c.want)
		}
		if strings.Contains(got, "\x1b") {
			t.Errorf("%s: an escape reached stderr: %q", c.command, got)
		}
	}
}
