//go:build linux

package procwalk

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Printable escapes what would break a line shown to a person: control
// characters (a comm may hold a newline or an escape sequence), invalid
// UTF-8 and other unprintable runes. "evil\nname" prints as `evil\nname`,
// ESC as `\x1b`. It is the one escaping of names (comm, command lines,
// session names) that procwalk prints to a terminal, a log or Telegraf:
// the CLI's tables and messages, Lua's procwalk.printable, and line
// protocol's tags and string fields (AppendPrintable).
func Printable(s string) string {
	if !NeedsEscape(s) {
		return s
	}
	return string(AppendPrintable(nil, s, -1))
}

// NeedsEscape reports whether Printable would change s.
func NeedsEscape(s string) bool { return needsEscape(s, true) }

// NeedsDataEscape reports whether AppendData would change s.
func NeedsDataEscape(s string) bool { return needsEscape(s, false) }

func needsEscape(s string, text bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || text && !unicode.IsPrint(r) || r >= 0x80 && r < 0xa0 {
				return true
			}
			i += size - 1
		}
	}
	return false
}

// AppendPrintable appends Printable(s) to dst, stopping before max bytes of
// it (max < 0: no limit) at the end of a character or an escape, never
// inside one.
func AppendPrintable(dst []byte, s string, max int) []byte { return appendEscaped(dst, s, max, true) }

// AppendData is AppendPrintable for data that no terminal shows as it is
// (a line protocol tag or field): control characters and invalid UTF-8
// are escaped alike (\x1b, \n, \xff), and every valid character else is
// kept, a zero-width space or a byte order mark a script emitted included,
// which Printable escapes for a terminal's sake.
func AppendData(dst []byte, s string, max int) []byte { return appendEscaped(dst, s, max, false) }

func appendEscaped(dst []byte, s string, max int, text bool) []byte {
	start := len(dst)
	fits := func(n int) bool { return max < 0 || len(dst)-start+n <= max }
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\n':
			esc = `\n`
		case r == '\t':
			esc = `\t`
		case r < 0x80 && !unicode.IsPrint(r):
			esc = fmt.Sprintf(`\x%02x`, r)
		case r >= 0x80 && r < 0xa0, text && r >= 0x80 && !unicode.IsPrint(r):
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if esc == "" {
			if !fits(size) {
				return dst
			}
			dst = append(dst, s[i:i+size]...)
		} else {
			if !fits(len(esc)) {
				return dst
			}
			dst = append(dst, esc...)
		}
		i += size
	}
	return dst
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
