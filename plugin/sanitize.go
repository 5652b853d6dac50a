//go:build linux

package plugin

import "github.com/procwalk/procwalk/procwalk"

// sanitize.go makes /proc strings safe for line protocol. comm and cmdline
// are chosen by whoever started the process: they may hold newlines (which
// would inject a line), NULs, other control bytes and invalid UTF-8, all of
// which the line-protocol encoder rejects or Telegraf mangles. They are
// escaped as everywhere else procwalk prints them (procwalk.Printable).

// Size caps, in bytes of the sanitized value.
const (
	// maxStringFieldBytes keeps string fields under InfluxDB's 64 KB limit
	// for a field value.
	maxStringFieldBytes = 64<<10 - 1
	// maxTagBytes caps tag values: a tag is part of a series key, and a value
	// this long is a path or command line that belongs in a field.
	maxTagBytes = 256
)

// isClean reports whether s can be used as it is: nothing procwalk's one
// escaping (procwalk.Printable) would change, at most max bytes, and (for
// tags) not ending in a backslash.
func isClean(s string, max int, tag bool) bool {
	if len(s) > max || (tag && (s == "" || s[len(s)-1] == '\\')) {
		return false
	}
	return !procwalk.NeedsDataEscape(s)
}

// appendClean appends s to dst escaped as procwalk prints every name
// (procwalk.AppendData: a control byte as \x1b, a newline as \n, invalid
// UTF-8 as \xff, as the CLI's tables show them; a valid character as it
// is), stopping before max bytes of output between characters. For tags,
// a trailing backslash (which line protocol cannot round-trip) becomes '_'.
func appendClean(dst []byte, s string, max int, tag bool) []byte {
	start := len(dst)
	return fixTag(procwalk.AppendData(dst, s, max), start, tag)
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
