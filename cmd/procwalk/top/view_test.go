package top

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The ASCII shortcuts of width and truncate measure and cut as x/ansi's
// wcwidth does, which the rest is left to.
func TestWidthAndTruncate(t *testing.T) {
	for _, s := range []string{
		"", "sleep", "/usr/bin/python3 -m http.server 8000", strings.Repeat("x", 5000),
		"naïve", "日本語のコマンド", "tab\there", "\x1b[1mbold\x1b[0m", "end~\x7f",
	} {
		if got, want := width(s), ansi.StringWidthWc(s); got != want {
			t.Errorf("width(%q) = %d, ansi says %d", s, got, want)
		}
		for _, w := range []int{1, 4, 10, 80} {
			if got, want := truncate(s, w), ansi.TruncateWc(s, w, "…"); got != want {
				t.Errorf("truncate(%q, %d) = %q, ansi says %q", s, w, got, want)
			}
		}
	}
}
