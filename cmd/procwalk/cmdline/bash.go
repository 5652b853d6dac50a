//go:build linux

package cmdline

import "strings"

// bash.go turns the line bash hands to a completion command into
// words, and the words to offer into the text readline puts in place of
// the word it completes: bash inserts COMPREPLY as it is, so each is
// escaped here for the quoting at the cursor.

// ShellWords splits line, a command line up to the cursor, into words as
// the shell will (quotes and backslashes removed), leaving out the first
// (the command's name): cur is the last, unfinished word ("" after a
// blank). An unterminated quote runs to the end.
func ShellWords(line string) (words []string, cur string) {
	all, _ := splitShell(line)
	if len(all) == 0 {
		return nil, ""
	}
	return all[1 : len(all)-1], all[len(all)-1]
}

// splitShell splits line as ShellWords does, the first word included and
// the last always there (maybe ""), and says where the last one starts.
func splitShell(line string) (words []string, lastStart int) {
	var b strings.Builder
	in := false // a word is under way
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`\n", line[i+1]) >= 0:
				i++
				b.WriteByte(line[i])
			default:
				b.WriteByte(c)
			}
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			if !in {
				in, lastStart = true, i
			}
			switch c {
			case '\'', '"':
				quote = c
			case '\\':
				if i+1 < len(line) {
					i++
					b.WriteByte(line[i])
				}
			default:
				b.WriteByte(c)
			}
		}
	}
	if !in {
		lastStart = len(line)
	}
	return append(words, b.String()), lastStart
}

// readlineWord is where readline's word under the cursor starts in line,
// and the quote it is open in (0: none): after the quote that is still
// open, else after the last unquoted character of breaks (COMP_WORDBREAKS:
// blanks and "'><=;|&(: by default), as readline finds the word to
// replace.
func readlineWord(line, breaks string) (start int, quote byte) {
	var open int
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				quote = 0
			}
		case c == '\\':
			i++ // an escaped character breaks no word
		case c == '\'' || c == '"':
			quote, open = c, i
		case strings.IndexByte(breaks, c) >= 0:
			start = i + 1
		}
	}
	if quote != 0 {
		return open + 1, quote
	}
	return start, 0
}

// BashReplies are the COMPREPLY words for line (up to the cursor) with
// COMP_WORDBREAKS breaks: of each word (whole and unquoted) that goes on
// from cur, what follows the start of readline's word, escaped for the
// quoting there.
func BashReplies(line, breaks, cur string, words []string) []string {
	if breaks == "" {
		breaks = " \t\n\"'><=;|&(:"
	}
	start, quote := readlineWord(line, breaks)
	_, wordStart := splitShell(line)
	done := ""
	if start > wordStart { // the part of this shell word readline keeps
		all, _ := splitShell(line[wordStart:start])
		done = all[len(all)-1]
	}
	var out []string
	for _, w := range words {
		rest, ok := strings.CutPrefix(w, done)
		if !ok || !strings.HasPrefix(w, cur) {
			continue
		}
		out = append(out, bashEscape(rest, quote))
	}
	return out
}

// bashEscape quotes s for bash within quote (0: none).
func bashEscape(s string, quote byte) string {
	switch quote {
	case '\'':
		return strings.ReplaceAll(s, "'", `'\''`)
	case '"':
		return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./:=,+@%^-", c) >= 0) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
