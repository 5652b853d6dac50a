//go:build linux

package scripting

import (
	"strings"
	"unicode"
	"unicode/utf8"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

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

// wrapText is procwalk.wrap's work: each line of s at most width cells
// (but a word longer than that, whole), broken lines going on after indent
// (narrower than width). It is linear in s: each break looks at most at
// width cells ahead, or to the end of a word that crosses the width (a
// 2 MiB word took minutes when each break counted and copied the rest of
// the line).
func wrapText(s string, width int, indent string) string {
	lead := textwidth.Width(indent)
	leadText := strings.Trim(indent, " ") != ""
	var leadRune rune
	if indent != "" {
		leadRune, _ = utf8.DecodeLastRuneInString(indent)
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		// The first piece starts the line; the others go on after indent.
		at := lineStart{}
		for {
			if fits(line, width-at.runes) {
				b.WriteString(line)
				break
			}
			head, rest := breakLine(line, width, at)
			b.WriteString(head)
			if rest == "" {
				break
			}
			b.WriteByte('\n')
			b.WriteString(indent)
			line, at = rest, lineStart{runes: lead, text: leadText, prev: leadRune}
		}
	}
	return b.String()
}

// lineStart is what comes before the text breakLine looks at on its line:
// the indent of a broken line's rest (its cells, whether it holds text
// other than spaces, its last rune), or nothing.
type lineStart struct {
	runes int
	text  bool
	prev  rune
}

// fits reports whether s takes at most n cells, looking at n+1 at most.
func fits(s string, n int) bool {
	for _, r := range s {
		if n -= textwidth.RuneWidth(r); n < 0 {
			return false
		}
	}
	return true
}

// breakLine splits line, which with at before it is longer than width
// cells, into what fits in width and the rest, without the spaces between
// them. It breaks at the last space after a comma or a colon when that
// keeps at least half the width ("sh 202" stays whole in "1 not reaped:
// sh 202"), else at the last space not after a digit (a size or a duration
// stays whole: "256.0 MiB", "9 days"), else at the last space that leaves
// some text. A word that crosses the width with no such space before it
// (a long path, a container id) is never cut: the line breaks after it.
func breakLine(line string, width int, at lineStart) (head, rest string) {
	cut, cells, text := len(line), at.runes, at.text
	clause, word, space := -1, -1, -1
	prev := at.prev
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
	// The word that crosses the width ends the line whole.
	end := strings.IndexByte(line[cut:], ' ')
	if end < 0 {
		return line, ""
	}
	return strings.TrimRight(line[:cut+end], " "), strings.TrimLeft(line[cut+end:], " ")
}
