//go:build linux

package plugin

import "unicode/utf8"

// sanitize.go makes /proc strings safe for line protocol. comm and cmdline
// are chosen by whoever started the process: they may hold newlines (which
// would inject a line), NULs, other control bytes and invalid UTF-8, all of
// which the line-protocol encoder rejects or Telegraf mangles.

// Size caps, in bytes of the sanitized value.
const (
	// maxStringFieldBytes keeps string fields under InfluxDB's 64 KB limit
	// for a field value.
	maxStringFieldBytes = 64<<10 - 1
	// maxTagBytes caps tag values: a tag is part of a series key, and a value
	// this long is a path or command line that belongs in a field.
	maxTagBytes = 256
)

// controlReplacement stands in for a control byte, as ps(1) shows one.
const controlReplacement = '?'

// isClean reports whether s can be used as it is: valid UTF-8 without
// control bytes, at most max bytes, and (for tags) not ending in a backslash.
func isClean(s string, max int, tag bool) bool {
	if len(s) > max || (tag && (s == "" || s[len(s)-1] == '\\')) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= utf8.RuneSelf {
			return utf8.ValidString(s[i:]) && noControlRunes(s[i:])
		}
	}
	return true
}

// noControlRunes reports whether s (valid UTF-8) has no ASCII control byte.
func noControlRunes(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// appendClean appends s to dst with control bytes replaced by '?' and each
// invalid UTF-8 byte by U+FFFD, stopping before max bytes of output on a
// rune boundary. For tags, a trailing backslash (which line protocol cannot
// round-trip) becomes '_'.
func appendClean(dst []byte, s string, max int, tag bool) []byte {
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r == utf8.RuneError && size == 1:
			if len(dst)-start+utf8.RuneLen(utf8.RuneError) > max {
				return fixTag(dst, start, tag)
			}
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case c < 0x20 || c == 0x7f:
			if len(dst)-start+1 > max {
				return fixTag(dst, start, tag)
			}
			dst = append(dst, controlReplacement)
		default:
			if len(dst)-start+size > max {
				return fixTag(dst, start, tag)
			}
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return fixTag(dst, start, tag)
}

func fixTag(dst []byte, start int, tag bool) []byte {
	if tag && len(dst) > start && dst[len(dst)-1] == '\\' {
		dst[len(dst)-1] = '_'
	}
	return dst
}

// appendCmdline appends the arguments joined by spaces, sanitized and capped
// at maxStringFieldBytes.
func appendCmdline(dst []byte, args []string) []byte {
	start := len(dst)
	for i, a := range args {
		room := maxStringFieldBytes - (len(dst) - start)
		if i > 0 {
			if room < 1 {
				break
			}
			dst = append(dst, ' ')
			room--
		}
		dst = appendClean(dst, a, room, false)
	}
	return dst
}
