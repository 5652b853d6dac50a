//go:build linux

package render

import (
	"errors"
	"strings"
	"testing"

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
