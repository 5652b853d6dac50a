//go:build linux

package scripting

import (
	"math/rand/v2"
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

// wrapTextReference is wrapText as it was, quadratic (it counted and
// copied the rest of a line at each break): the new one must break every
// input the same way.
func wrapTextReference(s string, width int, indent string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for {
			if textwidth.Width(line) <= width {
				b.WriteString(line)
				break
			}
			head, rest := breakLine(line, width, lineStart{})
			b.WriteString(head)
			if rest == "" {
				break
			}
			b.WriteByte('\n')
			line = indent + rest
		}
	}
	return b.String()
}

func TestWrapTextAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "bb", "ccc", "1.5", "GiB,", "sh:", "héé", "pod/1234abcd-5678", "  ", ",", ":", "9", "x"}
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.IntN(30); k > 0; k-- {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
			if rng.IntN(20) == 0 {
				b.WriteByte('\n')
			}
		}
		width := 2 + rng.IntN(20)
		indent := strings.Repeat(" ", rng.IntN(width-1))
		in := b.String()
		if got, want := wrapText(in, width, indent), wrapTextReference(in, width, indent); got != want {
			t.Fatalf("wrapText(%q, %d, %q) = %q, before %q", in, width, indent, got, want)
		}
	}
}

// A word of 1 MiB wraps in one pass, whole on its line (a word is never
// cut): it took minutes (a 2 MiB word 65 s+) when each break counted and
// copied the rest of the line.
func TestWrapLongWord(t *testing.T) {
	word := strings.Repeat("w", 1<<20)
	got := wrapText("a "+word+" end", 80, "  ")
	if want := "a\n  " + word + "\n  end"; got != want {
		t.Errorf("%d bytes, want %d: %.40q ... %q", len(got), len(want), got, got[len(got)-10:])
	}
}
