//go:build linux

package scripting

import (
	"strings"
	"unicode"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// reportWidth is the width procwalk.wrap fits by default: the bundled
// reports fit an 80-column terminal.
const reportWidth = 80

// procwalk.wrap(s [, width [, indent]]) -> s with each line longer than
// width runes (default 80) broken at its last space that fits, or at width
// when a word is longer than the room; a line it breaks goes on after
// indent (default ""). Spaces inside a line that fits are kept, so a table
// row keeps its columns.
func (m *module) luaWrap(L *lua.LState) int {
	s := L.CheckString(1)
	width := L.OptInt(2, reportWidth)
	indent := L.OptString(3, "")
	if width < 1 {
		L.ArgError(2, "the width must be at least 1")
	}
	room := width - utf8.RuneCountInString(indent)
	if room < 1 {
		L.ArgError(3, "the indent must be narrower than the width")
	}
	// Each break adds a line break and an indent.
	m.r.checkSize(L, "procwalk.wrap", float64(len(s))+float64(len(s)/room+1)*float64(1+len(indent)))
	L.Push(lua.LString(wrapText(s, width, indent)))
	return 1
}

// wrapText is procwalk.wrap's work: each line of s at most width runes,
// broken lines going on after indent (narrower than width).
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for {
			if utf8.RuneCountInString(line) <= width {
				b.WriteString(line)
				break
			}
			head, rest := breakLine(line, width, width-utf8.RuneCountInString(indent))
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

// breakLine splits line, longer than width runes, into what fits in width
// and the rest, without the spaces between them. It breaks at the last
// space after a comma or a colon when that keeps at least half the width
// ("sh 202" stays whole in "1 not reaped: sh 202"), else at the last space
// not after a digit (a size or a duration stays whole: "256.0 MiB",
// "9 days"), else at the last space that leaves some text, else at width;
// at width too when the word after the space is longer than room, the
// width of a line after the indent, and so would be cut anyway ("!!" is
// not left alone on a line before a name that cannot fit).
func breakLine(line string, width, room int) (head, rest string) {
	cut, runes, text := len(line), 0, false
	clause, word, space := -1, -1, -1
	var prev rune
	breakAt := func(i int) {
		space = i
		if !unicode.IsDigit(prev) {
			word = i
		}
		if (prev == ',' || prev == ':') && 2*runes >= width {
			clause = i
		}
	}
	for i, r := range line {
		if runes == width {
			cut = i
			break
		}
		if r != ' ' {
			text = true
		} else if text {
			breakAt(i)
		}
		prev = r
		runes++
	}
	if text && cut < len(line) && line[cut] == ' ' {
		breakAt(cut) // the line breaks just before a space
	}
	for _, at := range []int{clause, word, space} {
		if at >= 0 {
			next, _, _ := strings.Cut(strings.TrimLeft(line[at:], " "), " ")
			if utf8.RuneCountInString(next) <= room {
				cut = at
			}
			break
		}
	}
	return strings.TrimRight(line[:cut], " "), strings.TrimLeft(line[cut:], " ")
}
