//go:build linux

package procwalk

import (
	"fmt"
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
