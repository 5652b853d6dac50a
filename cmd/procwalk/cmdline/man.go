//go:build linux

package cmdline

import (
	"flag"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// man.go writes the manual page in troff from the same help every --help
// prints, so the two never disagree.

// ManPage is procwalk(1) of the commands below root, exitCodes their EXIT
// CODES text (once, as EXIT STATUS): NAME, SYNOPSIS, the main help as DESCRIPTION, a
// section per command (its help text as written, its flags as tagged
// paragraphs), EXIT STATUS and ENVIRONMENT.
func ManPage(root *ffcli.Command, version, exitCodes string) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH PROCWALK 1 \"\" \"%s\" \"User Commands\"\n", roffText(version))
	// Ragged right (a line broken in a list of values has no space to
	// stretch) and no hyphens: a metric name split in two is not one to copy.
	b.WriteString(".ad l\n.nh\n")
	b.WriteString(".SH NAME\nprocwalk \\- report, group and safely act on the processes and sessions of a Linux host\n")
	b.WriteString(".SH SYNOPSIS\n.B procwalk\n" + roffText(strings.TrimPrefix(root.ShortUsage, "procwalk ")) + "\n")
	b.WriteString(".SH DESCRIPTION\n")
	writeRoffHelp(&b, withoutExitCodes(root.LongHelp, exitCodes))
	b.WriteString(".SH COMMANDS\n")
	for _, c := range root.Subcommands {
		if c.Name == "man" {
			continue
		}
		fmt.Fprintf(&b, ".SS %s\n", roffQuote(cmpOr(c.ShortUsage, "procwalk "+c.Name)))
		if c.ShortHelp != "" {
			b.WriteString(roffText(c.ShortHelp) + "\n.PP\n")
		}
		if c.UsageFunc != nil {
			c.UsageFunc(c) // a help built when shown (LazyHelp) sets LongHelp
		}
		writeRoffHelp(&b, withoutExitCodes(c.LongHelp, exitCodes))
		var flags []*flag.Flag
		c.FlagSet.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
		if len(flags) > 0 {
			b.WriteString(".PP\nFlags:\n")
			for _, f := range flags {
				name, help := flagHelp(f)
				// A flag's list of values (rss|pss|...) is one word to
				// troff: each bar may break the line after it (\:).
				fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffQuote(name), strings.ReplaceAll(roffText(help), "|", `|\:`))
			}
		}
	}
	b.WriteString(".SH EXIT STATUS\n")
	writeRoffHelp(&b, strings.TrimPrefix(exitCodes, "EXIT CODES\n"))
	b.WriteString(`.SH ENVIRONMENT
.TP
.B PROCWALK_<FLAG>
sets a flag (dashes become underscores: PROCWALK_TMUX_SOCKET); a flag on the command line beats it, and it beats the --config file.
.TP
.B COLUMNS
the width tables fit, also on a pipe; with LINES, the size of top --once.
.TP
.B NO_COLOR
the live view draws no colours (the selected row stays marked).
.SH SEE ALSO
.BR top (1),
.BR ps (1),
.BR tmux (1),
.BR telegraf (1)
`)
	return b.String()
}

// cmpOr is a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// withoutExitCodes is a help text without its EXIT CODES block, which the
// page has once, as EXIT STATUS.
func withoutExitCodes(help, codes string) string {
	if i := strings.Index(help, codes); i >= 0 {
		help = help[:i] + help[i+len(codes):]
	}
	return strings.TrimRight(help, "\n")
}

// writeRoffHelp writes a help text as it is laid out for a terminal:
// paragraphs of prose filled, lines that are indented (tables, examples)
// kept as they are, headings (a line of capitals) in bold.
func writeRoffHelp(b *strings.Builder, help string) {
	inTable, blank := false, true
	lines := strings.Split(help, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		heading := blank && isHeading(line)
		blank = strings.TrimSpace(line) == ""
		switch {
		case strings.TrimSpace(line) == "":
			if inTable {
				b.WriteString(".fi\n")
				inTable = false
			}
			b.WriteString(".PP\n")
		case heading:
			if inTable {
				b.WriteString(".fi\n")
				inTable = false
			}
			fmt.Fprintf(b, ".PP\n.B %s\n.br\n", roffQuote(line))
		case strings.HasPrefix(line, " "):
			if !inTable {
				b.WriteString(".nf\n")
				inTable = true
			}
			fitted, joined := fitTableLine(line, lines[i+1:])
			for _, l := range fitted {
				b.WriteString(roffText(l) + "\n")
			}
			i += joined
		default:
			if inTable {
				b.WriteString(".fi\n")
				inTable = false
			}
			b.WriteString(roffText(line) + "\n")
		}
	}
	if inTable {
		b.WriteString(".fi\n")
	}
}

// manTableWidth is the cells a line kept as it is (.nf) has on an
// 80-column terminal: man's line of 78 less the 7 it indents a section by.
const manTableWidth = 71

// fitTableLine breaks a table or example line of the help (written for 80
// columns, from column 0) into lines of at most manTableWidth cells, which
// the terminal would otherwise break mid-word, and says how many of the
// lines after it it took in: a row "  TERM  text" takes the lines indented
// under its text that continue it, and its text wraps under its column
// (textwidth.Hang); a line without columns wraps under its own indent.
func fitTableLine(line string, after []string) (fitted []string, joined int) {
	if textwidth.Width(line) <= manTableWidth {
		return []string{line}, 0
	}
	text := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(text)]
	// The lines that continue the row: indented deeper, no columns of their own.
	col := 0
	for _, next := range after {
		cont := strings.TrimLeft(next, " ")
		in := len(next) - len(cont)
		if cont == "" || in <= len(indent) || strings.Contains(cont, "  ") {
			break
		}
		col, joined = in, joined+1
	}
	gap := strings.Index(text, "  ")
	if gap < 0 && joined > 0 {
		gap = strings.IndexByte(text, ' ') // "124 guard: ..." continued under its text
	}
	if gap <= 0 {
		var out []string
		for _, l := range textwidth.Wrap(text, manTableWidth-len(indent)) {
			out = append(out, indent+l)
		}
		return out, 0
	}
	rest := strings.TrimLeft(text[gap:], " ")
	for _, next := range after[:joined] {
		rest += " " + strings.TrimLeft(next, " ")
	}
	term := indent + text[:gap]
	col = max(col, len(line)-len(strings.TrimLeft(text[gap:], " ")), len(term)+2)
	return textwidth.Hang(term, rest, col-2, manTableWidth), joined
}

// isHeading reports whether a help line that starts a paragraph is a
// section heading: it starts with a word of at least three capitals
// (EXAMPLES, SORT (--sort ...)).
func isHeading(line string) bool {
	word, _, _ := strings.Cut(line, " ")
	if len(word) < 3 || line != strings.TrimLeft(line, " ") {
		return false
	}
	for _, r := range word {
		if (r < 'A' || r > 'Z') && r != '-' {
			return false
		}
	}
	return true
}

// roffText escapes a line of text for troff: backslashes, hyphens (as
// minus signs, which man pages use for options), and a leading dot or
// quote, which would make it a request.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuote is text as one argument of a request: quoted, its quotes
// doubled.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `""`) + `"`
}
