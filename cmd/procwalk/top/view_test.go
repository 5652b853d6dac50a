//go:build linux

package top

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
)

// The ASCII shortcuts of width and truncate measure and cut as lipgloss
// and runewidth do, which the rest is left to.
func TestWidthAndTruncate(t *testing.T) {
	for _, s := range []string{
		"", "sleep", "/usr/bin/python3 -m http.server 8000", strings.Repeat("x", 5000),
		"naïve", "日本語のコマンド", "tab\there", "\x1b[1mbold\x1b[0m", "end~\x7f",
	} {
		if got, want := width(s), lipgloss.Width(s); got != want {
			t.Errorf("width(%q) = %d, lipgloss says %d", s, got, want)
		}
		for _, w := range []int{1, 4, 10, 80} {
			if got, want := truncate(s, w), runewidth.Truncate(s, w, "…"); got != want {
				t.Errorf("truncate(%q, %d) = %q, runewidth says %q", s, w, got, want)
			}
		}
	}
}
