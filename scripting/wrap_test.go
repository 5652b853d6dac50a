package scripting

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

func TestWrapText(t *testing.T) {
	tests := []struct {
		in, indent string
		width      int
		want       string
	}{
		{"fits   as it is", "", 16, "fits   as it is"},
		{"one two three four", "  ", 9, "one two\n  three\n  four"},
		// After a comma or colon, when that keeps half the line.
		{"java 201: 1 not reaped: sh 202 (9 days)", "  ", 30, "java 201: 1 not reaped:\n  sh 202 (9 days)"},
		// Not after a digit: "256.0 MiB" stays whole.
		{"of at least 256.0 MiB", "", 19, "of at least\n256.0 MiB"},
		// A word longer than the room is never cut: it ends its line whole.
		{"pod/1234abcd-5678-90ef x", " ", 10, "pod/1234abcd-5678-90ef\n x"},
		{"top: /a/very/long/path/of/a/process and more", "  ", 12, "top:\n  /a/very/long/path/of/a/process\n  and more"},
		// Cells, not runes: a CJK character takes two.
		{"日本語の エージェント 名前", "", 12, "日本語の\nエージェント\n名前"},
		{"naïve café résumé", "", 11, "naïve café\nrésumé"},
		{"  lead  trailing   ", "", 8, "  lead\ntrailing"},
		{"a\nbb cc", "", 2, "a\nbb\ncc"},
		{"héé héé", "", 3, "héé\nhéé"},
	}
	for _, tt := range tests {
		got := wrapText(tt.in, tt.width, tt.indent)
		if got != tt.want {
			t.Errorf("wrapText(%q, %d, %q) = %q, want %q", tt.in, tt.width, tt.indent, got, tt.want)
		}
		for _, l := range strings.Split(got, "\n") {
			// Wider only when it is one word longer than the room.
			if textwidth.Width(l) > tt.width && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("wrapText(%q, %d): line %q too wide", tt.in, tt.width, l)
			}
		}
		if strings.ReplaceAll(strings.ReplaceAll(got, "\n"+tt.indent, ""), " ", "") != strings.ReplaceAll(strings.ReplaceAll(tt.in, "\n", ""), " ", "") {
			t.Errorf("wrapText(%q) = %q lost or added text", tt.in, got)
		}
	}
}
