package scripting

import (
	"strings"
	"unicode"

	lua "github.com/yuin/gopher-lua"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// reportWidth is the width procwalk.wrap fits by default: the bundled
// reports fit an 80-column terminal.
const reportWidth = 80

// procwalk.wrap(s [, width [, indent]]) -> s with each line longer than
// width cells of a terminal (default 80; a CJK character or an emoji takes
// two) broken at its last space that fits; a word or a path longer than
// the room is never cut: it ends its line whole. A line it breaks goes on
// after indent (default ""). Spaces inside a line that fits are kept, so
// a table row keeps its columns.
func (m *module) luaWrap(L *lua.LState) int {
	s := L.CheckString(1)
	width := L.OptInt(2, reportWidth)
	indent := L.OptString(3, "")
	if width < 1 {
		L.ArgError(2, "the width must be at least 1")
	}
	room := width - textwidth.Width(indent)
	if room < 1 {
		L.ArgError(3, "the indent must be narrower than the width")
	}
	// Each break adds a line break and an indent.
	m.r.checkSize(L, "procwalk.wrap", float64(len(s))+float64(len(s)/room+1)*float64(1+len(indent)))
	L.Push(lua.LString(wrapText(s, width, indent)))
	return 1
}

// wrapText is procwalk.wrap's work: each line of s at most width cells,
// broken lines going on after indent (narrower than width).
func wrapText(s string, width int, indent string) string {
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
			head, rest := breakLine(line, width)
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

// breakLine splits line, longer than width cells, into what fits in width
// and the rest, without the spaces between them. It breaks at the last
// space after a comma or a colon when that keeps at least half the width
// ("sh 202" stays whole in "1 not reaped: sh 202"), else at the last space
// not after a digit (a size or a duration stays whole: "256.0 MiB",
// "9 days"), else at the last space that leaves some text. A word that
// crosses the width with no such space before it (a long path, a
// container id) is never cut: the line breaks after it.
func breakLine(line string, width int) (head, rest string) {
	cut, cells, text := len(line), 0, false
	clause, word, space := -1, -1, -1
	var prev rune
	breakAt := func(i int) {
		space = i
		if !unicode.IsDigit(prev) {
			word = i
		}
		if (prev == ',' || prev == ':') && 2*cells >= width {
			clause = i
		}
	}
	for i, r := range line {
		if cells+textwidth.RuneWidth(r) > width {
			cut = i
			break
		}
		if r != ' ' {
			text = true
		} else if text {
			breakAt(i)
		}
		prev = r
		cells += textwidth.RuneWidth(r)
	}
	if text && cut < len(line) && line[cut] == ' ' {
		breakAt(cut) // the line breaks just before a space
	}
	for _, at := range []int{clause, word, space} {
		if at >= 0 {
			return strings.TrimRight(line[:at], " "), strings.TrimLeft(line[at:], " ")
		}
	}
	// The first word runs past the width: it ends the line whole.
	start := len(line) - len(strings.TrimLeft(line, " "))
	end := strings.IndexByte(line[max(cut, start):], ' ')
	if end < 0 {
		return line, ""
	}
	end += max(cut, start)
	return strings.TrimRight(line[:end], " "), strings.TrimLeft(line[end:], " ")
}
