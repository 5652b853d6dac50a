//go:build linux

package procwalk

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineCap(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	kept := strings.Repeat("x", keep)
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"short lines pass", []string{"I! a\nW! b\n"}, "I! a\nW! b\n"},
		{"no newline yet", []string{"I! a"}, "I! a"},
		{"a line of exactly keep bytes", []string{kept + "\n"}, kept + "\n"},
		{"one byte more is cut", []string{kept + "y\n"}, kept + lineCutMark + "\n"},
		{"long line cut, next kept", []string{"I! " + long + "\nI! next\n"}, "I! " + kept[3:] + lineCutMark + "\nI! next\n"},
		{"long line in pieces", []string{"I! ", long[:5000], long[5000:], "\n", "ok\n"}, "I! " + kept[3:] + lineCutMark + "\nok\n"},
		{"cut mid-rune backs off", []string{strings.Repeat("x", keep-1) + "é\n"}, strings.Repeat("x", keep-1) + lineCutMark + "\n"},
		{"line ending in a later write", []string{"abc", "def\n"}, "abcdef\n"},
		{"two long lines", []string{long + "\n" + long + "\n"}, kept + lineCutMark + "\n" + kept + lineCutMark + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			c := CapLines(&buf)
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write of %d bytes = %d, %v", len(w), n, err)
				}
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("got %q (%d bytes), want %q (%d bytes)", trim(got), len(got), trim(tt.want), len(tt.want))
			}
			for _, line := range strings.SplitAfter(buf.String(), "\n") {
				if len(line) > MaxLogLineBytes || !utf8.ValidString(line) {
					t.Errorf("a line of %d bytes (valid UTF-8: %v), over %d", len(line), utf8.ValidString(line), MaxLogLineBytes)
				}
			}
		})
	}
}

func TestCapLinesOnce(t *testing.T) {
	var buf bytes.Buffer
	c := CapLines(&buf)
	if CapLines(c) != c {
		t.Error("CapLines of a LineCap made a second one")
	}
	if c.Unwrap() != &buf {
		t.Error("Unwrap does not return the wrapped writer")
	}
}

// trim shortens a long test string for a failure message.
func trim(s string) string {
	if len(s) > 80 {
		return s[:40] + "..." + s[len(s)-40:]
	}
	return s
}

func TestFileOf(t *testing.T) {
	if f, ok := FileOf(CapLines(CapLines(os.Stderr))); !ok || f != os.Stderr {
		t.Errorf("under a line cap: %v %v; want stderr", f, ok)
	}
	if f, ok := FileOf(&bytes.Buffer{}); ok || f != nil {
		t.Errorf("a buffer: %v %v", f, ok)
	}
	if _, ok := FileOf((*os.File)(nil)); ok {
		t.Error("a nil file is a file")
	}
}
