//go:build linux

package top

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// The view measures and cuts as Bubble Tea's renderer places characters
// (x/ansi's wcwidth): procwalk's one width rule, textwidth, agrees with it
// on ASCII, CJK, emoji, combining marks and escape sequences.
func TestWidthAndTruncate(t *testing.T) {
	for _, s := range []string{
		"", "sleep", "/usr/bin/python3 -m http.server 8000", strings.Repeat("x", 5000),
		"naïve", "nai\u0308ve", "日本語のコマンド", "ｱｲｳ", "🚀 launch", "👍🏽", "a\u200db", "±§°", "한국어 이름",
		"\x1b[1mbold\x1b[0m", "\x1b[31m日本\x1b[m",
	} {
		if got, want := width(s), ansi.StringWidthWc(s); got != want {
			t.Errorf("width(%q) = %d, ansi says %d", s, got, want)
		}
		if !strings.Contains(s, "\x1b") && textwidth.Width(s) != ansi.StringWidthWc(s) {
			t.Errorf("textwidth.Width(%q) = %d, ansi says %d", s, textwidth.Width(s), ansi.StringWidthWc(s))
		}
		for _, w := range []int{1, 4, 10, 80} {
			if got := textwidth.Cut(s, w); width(got) > w {
				t.Errorf("textwidth.Cut(%q, %d) = %q, %d cells", s, w, got, width(got))
			}
		}
	}
}
