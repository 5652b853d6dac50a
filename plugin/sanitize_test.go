//go:build linux

package plugin

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAppendClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		tag  bool
		want string
	}{
		{"plain", "bash", 100, false, "bash"},
		// The CLI's escaping (procwalk.Printable), not '?': one rule.
		{"newline and tab", "a\nb\tc", 100, false, `a\nb\tc`},
		{"nul and del", "a\x00b\x7f", 100, false, `a\x00b\x7f`},
		{"escape sequence", "evil\x1b[31m", 100, false, `evil\x1b[31m`},
		{"invalid utf-8", "a\xffb\xc3", 100, false, `a\xffb\xc3`},
		{"bidi override kept: data, no terminal", "x\u202ey", 100, false, "x\u202ey"},
		{"C1 control", "x\u0085y", 100, false, `x\u0085y`},
		{"cut before an escape", "ab\x1b", 4, false, "ab"},
		{"valid utf-8 kept", "héllo→", 100, false, "héllo→"},
		{"cut at max", "abcdef", 4, false, "abcd"},
		{"cut on a rune boundary", "ab→", 4, false, "ab"},
		{"tag trailing backslash", `path\`, 100, true, "path_"},
		{"field trailing backslash kept", `path\`, 100, false, `path\`},
		{"tag cut leaves backslash", `ab\cd`, 3, true, "ab_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(appendClean(nil, tt.in, tt.max, tt.tag))
			if got != tt.want {
				t.Errorf("appendClean(%q, %d, %v) = %q, want %q", tt.in, tt.max, tt.tag, got, tt.want)
			}
			if isClean(tt.in, tt.max, tt.tag) != (got == tt.in) {
				t.Errorf("isClean(%q) = %v, but cleaning gives %q", tt.in, !(got == tt.in), got)
			}
		})
	}
}

func TestAppendCmdlineCapsAt64KB(t *testing.T) {
	long := strings.Repeat("x", 40<<10)
	got := appendCmdline(nil, []string{"prog", long, long})
	if len(got) != maxStringFieldBytes {
		t.Fatalf("cmdline of %d bytes, want capped at %d", len(got), maxStringFieldBytes)
	}
	if !strings.HasPrefix(string(got), "prog "+long+" x") {
		t.Errorf("cmdline lost its start: %.20q", got)
	}
	if got := string(appendCmdline(nil, []string{"a\x00b", "c d"})); got != `a\x00b c d` {
		t.Errorf("appendCmdline = %q, want %q", got, `a\x00b c d`)
	}
}

// FuzzLineWriter: whatever a process names itself, the encoder accepts the
// line and it decodes as exactly one point with the sanitized values.
func FuzzLineWriter(f *testing.F) {
	f.Add("evil\n) x=1,y", "arg\x00two", `trail\`)
	f.Add("\xff\xfe", "", " ")
	f.Add("", "\"quoted\"", "=,")
	f.Fuzz(func(t *testing.T, comm, arg, tag string) {
		var w lineWriter
		w.begin("m")
		w.tag("t", tag)
		w.tag("comm", comm)
		w.stringField("comm_field", comm)
		w.argsField("cmdline", []string{comm, arg})
		w.intField("n", 1)
		w.end(time.Unix(1, 0))
		if w.dropped != 0 {
			t.Fatalf("line dropped: %v", w.err)
		}
		ps := decode(t, w.bytes())
		if len(ps) != 1 {
			t.Fatalf("%d points, want 1", len(ps))
		}
		got := ps[0].fields["comm_field"].(string)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\x00") {
			t.Errorf("comm field %q is not clean", got)
		}
		if want := string(appendClean(nil, comm, maxTagBytes, true)); comm != "" && ps[0].tags["comm"] != want {
			t.Errorf("comm tag = %q, want %q", ps[0].tags["comm"], want)
		}
	})
}
