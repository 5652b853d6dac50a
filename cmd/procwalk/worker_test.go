//go:build linux

package main

import (
	"bytes"
	"testing"

	"github.com/procwalk/procwalk/scripting"
)

// The parent writes what its worker prints through the one escaping
// function: a control character a subverted worker sends is escaped, and
// text the worker escaped already passes unchanged (never escaped twice).
func TestWorkerOutputEscaped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	e := newEnv(nil, &stdout, &stderr)
	cfg := workerConfig(e, scripting.Limits{}, &stdout, 0)
	tests := []struct{ in, want string }{
		{"evil\x1b[2Jname\n", `evil\x1b[2Jname` + "\n"},
		{`evil\x1b[2Jname` + "\n", `evil\x1b[2Jname` + "\n"},
		{"a\tb\nc\n", "a\tb\nc\n"},
		{"W! line\r\n", `W! line\x0d` + "\n"},
		{"bad utf-8 \xff\n", `bad utf-8 \xff` + "\n"},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			w   interface{ Write([]byte) (int, error) }
			buf *bytes.Buffer
		}{{cfg.Stdout, &stdout}, {cfg.Stderr, &stderr}} {
			c.buf.Reset()
			c.w.Write([]byte(tt.in))
			if got := c.buf.String(); got != tt.want {
				t.Errorf("%q: wrote %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}
