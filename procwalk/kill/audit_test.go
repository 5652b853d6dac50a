//go:build linux

package kill

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

func TestAuditLogKeepsTheLast(t *testing.T) {
	l := NewAuditLog(3)
	for pid := 1; pid <= 5; pid++ {
		l.Add(ActionEvent{PID: pid})
	}
	var got []int
	for _, e := range l.Events() {
		got = append(got, e.PID)
	}
	if fmt.Sprint(got) != "[3 4 5]" || l.Total() != 5 {
		t.Errorf("events %v total %d, want [3 4 5] total 5", got, l.Total())
	}
	l = NewAuditLog(3)
	l.Add(ActionEvent{PID: 7})
	if ev := l.Events(); len(ev) != 1 || ev[0].PID != 7 {
		t.Errorf("partly filled log: %v", ev)
	}
}

func TestActionEvent(t *testing.T) {
	o := Outcome{
		Target:    Target{ID: procwalk.ProcID{PID: 42, StartTicks: 1234}, Comm: "sleep", RSSBytes: 2 << 20},
		Result:    ResultKilled,
		Signals:   []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL},
		GoneAfter: 5010 * time.Millisecond,
	}
	e := o.event(time.Unix(1700000000, 0).UTC(), "cli", "tree 42@1234", "", false)
	if got, want := e.String(), "killed pid 42 (sleep) signals TERM,KILL gone after 5.01s rss 2.0 MiB [cli, tree 42@1234]"; got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
	if e.Target() != o.ID {
		t.Errorf("Target = %v", e.Target())
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"pid":42`, `"start_ticks":1234`, `"signals":["TERM","KILL"]`, `"outcome":"killed"`, `"requester":"cli"`, `"rss_bytes":2097152`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}

	refused := Outcome{Target: Target{ID: procwalk.ProcID{PID: 1}, Comm: "systemd"}, Result: ResultProtected,
		Err: &ProtectedError{PID: 1, Comm: "systemd", Hard: true, Reason: "pid 1 (init) is never signalled"}}
	e = refused.event(time.Now(), "rule:mem", "process 1@5", "tmux:work", false)
	if !strings.HasPrefix(e.String(), "refused_protected pid 1 (systemd) rss 0 B: pid 1 (systemd) is protected") || !strings.Contains(e.String(), "session tmux:work") {
		t.Errorf("refusal: %s", e)
	}
	if !errors.Is(refused.Err, ErrProtected) {
		t.Error("ProtectedError does not wrap ErrProtected")
	}
}

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want syscall.Signal
	}{
		{"TERM", syscall.SIGTERM}, {"sigint", syscall.SIGINT}, {"SIGKILL", syscall.SIGKILL},
		{"9", syscall.SIGKILL}, {" hup ", syscall.SIGHUP}, {"34", syscall.Signal(34)},
	}
	for _, tt := range tests {
		if got, err := ParseSignal(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0", "-9", "65", "TERMINATE", "SIG"} {
		if got, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) = %v, want an error", bad, got)
		}
	}
	if SignalName(syscall.SIGTERM) != "TERM" || SignalName(syscall.Signal(40)) != "40" {
		t.Errorf("SignalName: %q %q", SignalName(syscall.SIGTERM), SignalName(syscall.Signal(40)))
	}
}
