//go:build linux

package render

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// failingWriter takes n writes, then fails every one (EPIPE: the reader
// has gone).
type failingWriter struct {
	n     int
	lines []string
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("write |1: broken pipe")
	}
	w.n--
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

// A kill's events are a line each, escaped (text) or JSON; after a write
// fails, nothing more is written and printing never panics or blocks.
func TestEventPrinter(t *testing.T) {
	e := kill.ActionEvent{PID: 42, Comm: "evil\x1b[2J", Signals: []string{"TERM"}, Outcome: "exited"}
	w := &failingWriter{n: 1}
	p := &EventPrinter{W: w}
	p.Print(e)
	p.Print(e) // fails: the reader has gone
	p.Print(e)
	if len(w.lines) != 1 || !strings.HasPrefix(w.lines[0], "exited pid 42 (evil\\x1b[2J) signals TERM") || strings.Contains(w.lines[0], "\x1b") {
		t.Errorf("text lines %q, want one escaped line", w.lines)
	}
	w = &failingWriter{n: 5}
	(&EventPrinter{W: w, JSON: true}).Print(e)
	if len(w.lines) != 1 || !strings.HasPrefix(w.lines[0], `{"time":`) || !strings.Contains(w.lines[0], `"pid":42`) || !strings.HasSuffix(w.lines[0], "}\n") {
		t.Errorf("JSON lines %q, want one object", w.lines)
	}
}

// ConfirmKill lists the targets, asks, and takes y or yes alone.
func TestConfirmKill(t *testing.T) {
	plan := &kill.Plan{Scope: "process group 42", Targets: []kill.Target{
		{ID: procwalk.ProcID{PID: 42}, PPID: 1, Comm: "sh", Args: "sh -c x", RSSBytes: 1 << 20},
		{ID: procwalk.ProcID{PID: 43}, PPID: 42, Comm: "sleep", RSSBytes: 2 << 20},
	}}
	for _, tt := range []struct {
		answer string
		sig    syscall.Signal
		want   error // nil: confirmed
	}{
		{"y\n", syscall.SIGTERM, nil},
		{" YES \n", syscall.SIGTERM, nil},
		{"yes", syscall.SIGKILL, nil}, // the end of input ends the line
		{"n\n", syscall.SIGTERM, ErrNotConfirmed},
		{"\n", syscall.SIGTERM, ErrNotConfirmed},
		{"yess\n", syscall.SIGTERM, ErrNotConfirmed},
		{"", syscall.SIGTERM, io.EOF},
	} {
		var w strings.Builder
		err := ConfirmKill(context.Background(), &w, strings.NewReader(tt.answer), plan, tt.sig, 3*time.Second)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("answer %q: %v, want %v", tt.answer, err, tt.want)
		}
		question := "Send TERM (then KILL after 3s) to these 2 processes? [y/N] "
		if tt.sig == syscall.SIGKILL {
			question = "Send KILL to these 2 processes? [y/N] "
		}
		if out := w.String(); !strings.HasPrefix(out, "process group 42: 2 to signal\n") || !strings.Contains(out, "[sleep]") || !strings.HasSuffix(out, question) {
			t.Errorf("answer %q: wrote\n%s\nwant the plan, then %q", tt.answer, out, question)
		}
	}

	// Ctrl-C while it waits: a reader that never answers, ctx ended.
	r, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ConfirmKill(ctx, io.Discard, r, plan, syscall.SIGTERM, time.Second); err != ErrInterrupted {
		t.Errorf("interrupted: %v, want ErrInterrupted", err)
	}
}
