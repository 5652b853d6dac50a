// Package textwidth measures, cuts, pads and wraps text by the cells it
// takes on a terminal: a CJK character or an emoji two, a combining mark
// none, an ASCII letter one. Every table, report and screen procwalk prints
// lines up by it (runes or bytes put a CJK name's row off by its width).
//
// The rule is wcwidth(3)'s, as terminals that place characters one code
// point at a time (tmux, xterm, Bubble Tea's renderer by default) apply
// it: East Asian Wide and Fullwidth characters and emoji presentation take
// two cells; nonspacing and enclosing marks and format characters (ZWJ,
// variation selectors) none; control characters none (procwalk escapes
// them before printing: procwalk.Printable). East Asian Ambiguous
// characters take one cell, whatever the locale says.
package textwidth

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// wide is go-runewidth's table, with ambiguous characters narrow; a value,
// read only.
var wide = runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// Ellipsis marks where text was cut: one cell.
const Ellipsis = "…"

// RuneWidth is the cells r takes: 0, 1 or 2.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return 0
	case r < 0x7f:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	return wide.RuneWidth(r)
}

// Width is the cells s takes.
func Width(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			n++ // printable ASCII: most of what procwalk prints
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += RuneWidth(r)
		i += size - 1
	}
	return n
}

// Cut keeps what fits of s in n cells: s itself when it fits, else its
// start and "…" (never a wide character half).
func Cut(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	head, _ := prefix(s, n-1)
	return head + Ellipsis
}

// CutStart keeps what fits of s in n cells from its end: s itself when it
// fits, else "…" and its end (a path whose last part matters).
func CutStart(s string, n int) string {
	if Width(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return Ellipsis + suffix(s, n-1)
}

// CutMiddle fits s in n cells by putting "…" in place of its middle: a
// path or a long name keeps its start and its end.
func CutMiddle(s string, n int) string {
	w := Width(s)
	if n < 1 || w <= n {
		return s
	}
	tail := suffix(s, (n-1)/2)
	head, _ := prefix(s, n-1-Width(tail))
	return head + Ellipsis + tail
}

// prefix is the longest start of s at most n cells wide, and its width.
func prefix(s string, n int) (string, int) {
	w := 0
	for i, r := range s {
		rw := RuneWidth(r)
		if w+rw > n {
			return s[:i], w
		}
		w += rw
	}
	return s, w
}

// suffix is the longest end of s at most n cells wide.
func suffix(s string, n int) string {
	w := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		rw := RuneWidth(r)
		if w+rw > n {
			return s[i:]
		}
		w += rw
		i -= size
	}
	return s
}

// PadRight is s followed by the spaces that make it n cells wide.
func PadRight(s string, n int) string {
	return s + strings.Repeat(" ", max(n-Width(s), 0))
}

// PadLeft is s after the spaces that make it n cells wide.
func PadLeft(s string, n int) string {
	return strings.Repeat(" ", max(n-Width(s), 0)) + s
}

// Wrap breaks s into lines of at most n cells, at spaces (dropped) and
// after commas: a word, a path or a number is never broken; one longer
// than n is a line of its own, whole. A list of values joined by bars
// (rss|pss|uss|...) longer than n is no word: it breaks after a bar.
func Wrap(s string, n int) []string {
	var lines []string
	line := ""
	bars := false // in a list joined by bars that is broken after each bar
	for s != "" {
		// The next piece: up to and including a space or a comma.
		end := strings.IndexAny(s, " ,")
		if end < 0 {
			end = len(s) - 1
		}
		if !bars && strings.IndexByte(s[:end], '|') >= 0 && Width(s[:end]) > n {
			bars = true
		}
		if bar := strings.IndexByte(s[:end], '|'); bars && bar >= 0 {
			end = bar
		} else {
			bars = false
		}
		piece := s[:end+1]
		s = s[end+1:]
		if line != "" && Width(strings.TrimRight(line+piece, " ")) > n {
			lines = append(lines, strings.TrimRight(line, " "))
			line = ""
		}
		if line == "" {
			piece = strings.TrimLeft(piece, " ")
		}
		line += piece
	}
	return append(lines, strings.TrimRight(line, " "))
}

// Hang lays out one row of a definition list, a term and its text: the
// term padded to termCells, two spaces, the text. With width 0 (a pipe, a
// file) that is one line, whatever its length. With a width, the text
// wraps (Wrap) in its column, under itself; when that column would be
// narrower than minHangText cells, the text goes instead on lines of its
// own below the term, indented by hangIndent cells: a word is never broken
// by the terminal.
func Hang(term, text string, termCells, width int) []string {
	first := PadRight(term, termCells) + "  "
	if width <= 0 {
		return []string{first + text}
	}
	column, indent := width-Width(first), first
	lines := []string{}
	if column < minHangText {
		column, indent = width-hangIndent, strings.Repeat(" ", hangIndent)
		lines = append(lines, term)
	}
	for i, l := range Wrap(text, column) {
		if i == 0 && len(lines) == 0 {
			lines = append(lines, first+l)
			continue
		}
		lines = append(lines, strings.Repeat(" ", Width(indent))+l)
	}
	return lines
}

// minHangText is the narrowest text column Hang keeps beside its term (a
// few words a line); hangIndent indents a text put below its term, as man
// pages indent a definition.
const (
	minHangText = 30
	hangIndent  = 8
)
