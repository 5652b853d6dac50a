//go:build linux

package cmdline

import (
	"slices"
	"strings"
	"testing"
)

// The line bash hands over is split as bash splits it, and each word is
// written for the place readline replaces: after the last colon or equals
// sign, escaped, or inside the quote the user opened.
func TestBashReplies(t *testing.T) {
	const breaks = " \t\n\"'><=;|&(:"
	cands := []string{"tmux:my proj", `tmux:back\slash`, "tmux:it's", "tmux:名前 x", "--session=tmux:my proj", "--session=tmux:名前 x"}
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"procwalk session tmux:my", []string{`my\ proj`}},
		{"procwalk session tmux:", []string{`my\ proj`, `back\\slash`, `it\'s`, `名前\ x`}},
		{`procwalk session tmux:my\ p`, []string{`my\ proj`}},
		{"procwalk session tmux:b", []string{`back\\slash`}},
		{"procwalk session 'tmux:my", []string{"tmux:my proj"}},
		{"procwalk session 'tmux:i", []string{`tmux:it'\''s`}},
		{`procwalk session "tmux:b`, []string{`tmux:back\\slash`}},
		{"procwalk session tm", []string{`tmux:my\ proj`, `tmux:back\\slash`, `tmux:it\'s`, `tmux:名前\ x`}},
		{"procwalk kill --session=tmux:m", []string{`my\ proj`}},
		{"procwalk kill --session=tmux:名", []string{`名前\ x`}},
	} {
		words, cur := ShellWords(tt.line)
		var cs []string
		for _, c := range cands {
			if strings.HasPrefix(c, cur) {
				cs = append(cs, c)
			}
		}
		got := BashReplies(tt.line, breaks, cur, cs)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q (words %q, cur %q): %q, want %q", tt.line, words, cur, got, tt.want)
		}
	}
	for _, tt := range []struct {
		line  string
		words []string
		cur   string
	}{
		{"procwalk ", nil, ""},
		{"procwalk  ps   --sort ", []string{"ps", "--sort"}, ""},
		{`procwalk session 'a b'c\ d"e\"f"`, []string{"session"}, `a bc de"f`},
		{`procwalk session 'unterminated x`, []string{"session"}, "unterminated x"},
	} {
		words, cur := ShellWords(tt.line)
		if !slices.Equal(words, tt.words) || cur != tt.cur {
			t.Errorf("ShellWords(%q) = %q, %q; want %q, %q", tt.line, words, cur, tt.words, tt.cur)
		}
	}
}
