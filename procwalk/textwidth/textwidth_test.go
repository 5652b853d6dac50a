package textwidth

import (
	"slices"
	"strings"
	"testing"
)

func TestWidth(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"sleep", 5},
		{"日本語", 6},         // East Asian Wide
		{"ｱｲｳ", 3},         // halfwidth katakana
		{"Ａ", 2},           // fullwidth
		{"naïve", 5},       // precomposed
		{"nai\u0308ve", 5}, // combining diaeresis takes no cell
		{"🚀", 2},           // emoji presentation
		{"👍🏽", 4},          // a modifier is a code point of its own
		{"a\u200db", 2},    // ZWJ takes no cell
		{"±§°", 3},         // ambiguous: narrow
		{"\x1b\x7f", 0},    // controls take none
		{"한국어 이름", 11},
	} {
		if got := Width(tt.s); got != tt.want {
			t.Errorf("Width(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestCutAndPad(t *testing.T) {
	for _, tt := range []struct {
		s        string
		n        int
		cut, mid string
		start    string // CutStart's
	}{
		{"sleep", 10, "sleep", "sleep", "sleep"},
		{"/usr/lib/systemd/systemd", 10, "/usr/lib/…", "/usr/…temd", "…d/systemd"},
		{"日本語のコマンド", 7, "日本語…", "日本…ド", "…マンド"}, // never half a character: 7 cells hold 3 wide + "…"
		{"日本語のコマンド", 8, "日本語…", "日本…ド", "…マンド"}, // "ンド" is 4 cells: the tail gets 3
		{"ab", 1, "…", "…", "…"},
		{"abc", 0, "", "abc", ""},
	} {
		if got := CutStart(tt.s, tt.n); got != tt.start || Width(got) > max(tt.n, 0) {
			t.Errorf("CutStart(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.start)
		}
		if got := Cut(tt.s, tt.n); got != tt.cut || (tt.n > 0 && Width(got) > tt.n) {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.cut)
		}
		if got := CutMiddle(tt.s, tt.n); got != tt.mid {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.mid)
		}
	}
	if got := PadRight("日本", 6) + "|"; got != "日本  |" {
		t.Errorf("PadRight: %q", got)
	}
	if got := PadLeft("語", 4); got != "  語" {
		t.Errorf("PadLeft: %q", got)
	}
}

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want []string
	}{
		{"a b c", 80, []string{"a b c"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"a,b,c,d", 4, []string{"a,b,", "c,d"}},
		{"x /a/very/long/path/that/does/not/fit y", 10, []string{"x", "/a/very/long/path/that/does/not/fit", "y"}},
		{"日本語 日本語 日本語", 13, []string{"日本語 日本語", "日本語"}},
		// A list joined by bars breaks after a bar when it does not fit.
		{"sort by rss|pss|uss|swap|cpu|time (default rss)", 16, []string{"sort by rss|pss|", "uss|swap|cpu|", "time (default", "rss)"}},
		{"key rss|pss|uss end", 12, []string{"key", "rss|pss|uss", "end"}}, // it fits a line
		{"a|b fits", 20, []string{"a|b fits"}},
	} {
		if got := Wrap(tt.s, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	for _, l := range Wrap(strings.Repeat("名前 ", 30), 20) {
		if Width(l) > 20 {
			t.Errorf("line of %d cells: %q", Width(l), l)
		}
	}
}

func TestWrapEdges(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want []string
	}{
		{"short", 20, []string{"short"}},
		{"a,b,c", 3, []string{"a,", "b,c"}},
		{"aaaaaaaaaaaa bb", 5, []string{"aaaaaaaaaaaa", "bb"}},
		{"x  y", 1, []string{"x", "y"}},
		{"", 5, []string{""}},
	} {
		if got := Wrap(tt.in, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// A definition list's row: one line at width 0; the text wrapped under
// itself when its column is wide enough; below the term otherwise. No line
// is wider than the width, no word is broken.
func TestHang(t *testing.T) {
	text := "kill the biggest process of a tmux or agent session whose memory stays over a limit for N ticks"
	for _, tt := range []struct {
		term  string
		cells int
		width int
		want  []string
	}{
		{"memory-guard", 14, 0, []string{"memory-guard    " + text}},
		{"memory-guard", 14, 80, []string{
			"memory-guard    kill the biggest process of a tmux or agent session whose memory",
			"                stays over a limit for N ticks",
		}},
		{"  pw.kill(target) -> report", 60, 80, []string{
			"  pw.kill(target) -> report",
			"        kill the biggest process of a tmux or agent session whose memory stays",
			"        over a limit for N ticks",
		}},
		{"日本語", 8, 40, []string{
			"日本語    kill the biggest process of a",
			"          tmux or agent session whose",
			"          memory stays over a limit for",
			"          N ticks",
		}},
	} {
		got := Hang(tt.term, text, tt.cells, tt.width)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Hang(%q, %d, %d):\n%s\nwant\n%s", tt.term, tt.cells, tt.width, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		for _, l := range got {
			if tt.width > 0 && Width(l) > tt.width {
				t.Errorf("a line of %d cells at %d: %q", Width(l), tt.width, l)
			}
		}
	}
}
