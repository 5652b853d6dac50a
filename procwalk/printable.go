//go:build linux

package procwalk

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable escapes what would break a line shown to a person: control
// characters (a comm may hold a newline or an escape sequence), invalid
// UTF-8 and other unprintable runes. "evil\nname" prints as `evil\nname`,
// ESC as `\x1b`. It is the one escaping of names (comm, command lines,
// session names) that procwalk prints to a terminal or a log: the CLI's
// tables and messages, and Lua's procwalk.printable.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// PrintableLen returns len(Printable(s)) without making it: an escaped
// string is up to four times as long (an invalid byte becomes \xff), and a
// caller bounding what it makes (Lua's procwalk.printable) checks first.
func PrintableLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 4 // \xff
		case r == '\n' || r == '\t':
			n += 2
		case r < 0x80 && !unicode.IsPrint(r):
			n += 4
		case !unicode.IsPrint(r):
			n += 2 + max(4, len(strconv.FormatInt(int64(r), 16))) // \u%04x
		default:
			n += size
		}
		i += size
	}
	return n
}
