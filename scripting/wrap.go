//go:build linux

package scripting

import (
	"strings"
	"unicode"
	"unicode/utf8"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
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
// broken lines going on after indent (narrower than width). It is linear
// in s: each break looks at most at width runes ahead (a 2 MiB word took
// minutes when each break counted and copied the rest of the line).
func wrapText(s string, width int, indent string) string {
	lead := utf8.RuneCountInString(indent)
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
			head, rest := breakLine(line, width, width-lead, at)
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
// the indent of a broken line's rest (its runes, whether it holds text
// other than spaces, its last rune), or nothing.
type lineStart struct {
	runes int
	text  bool
	prev  rune
}

// fits reports whether s holds at most n runes, looking at n+1 at most.
func fits(s string, n int) bool {
	for i := range s {
		if n--; n < 0 {
			return i >= len(s)
		}
	}
	return true
}

// wordFits reports whether the word s starts with (up to a space) holds
// at most n runes, looking at n+1 at most.
func wordFits(s string, n int) bool {
	for _, r := range s {
		if r == ' ' {
			return true
		}
		if n--; n < 0 {
			return false
		}
	}
	return true
}

// breakLine splits line, which with at before it is longer than width
// runes, into what fits in width and the rest, without the spaces between
// them. It breaks at the last space after a comma or a colon when that
// keeps at least half the width ("sh 202" stays whole in "1 not reaped:
// sh 202"), else at the last space not after a digit (a size or a duration
// stays whole: "256.0 MiB", "9 days"), else at the last space that leaves
// some text, else at width; at width too when the word after the space is
// longer than room, the width of a line after the indent, and so would be
// cut anyway ("!!" is not left alone on a line before a name that cannot
// fit).
func breakLine(line string, width, room int, at lineStart) (head, rest string) {
	cut, runes, text := len(line), at.runes, at.text
	clause, word, space := -1, -1, -1
	prev := at.prev
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
			if wordFits(strings.TrimLeft(line[at:], " "), room) {
				cut = at
			}
			break
		}
	}
	return strings.TrimRight(line[:cut], " "), strings.TrimLeft(line[cut:], " ")
}
