//go:build linux

package cmdline

import (
	"cmp"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// help.go writes every command's --help: DESCRIPTION, USAGE, the command's
// own text (with its EXAMPLES and EXIT CODES), its COMMANDS (the root's)
// and FLAGS, each flag written as it is typed (--pss, --sort KEY), its
// help wrapped at 80 columns under itself, its default named.

// HelpWidth is the width --help text is wrapped to.
const HelpWidth = 80

// Usage is every command's UsageFunc.
func Usage(c *ffcli.Command) string {
	var b strings.Builder
	if c.ShortHelp != "" {
		fmt.Fprintf(&b, "DESCRIPTION\n  %s\n\n", strings.Join(textwidth.Wrap(c.ShortHelp, HelpWidth-2), "\n  "))
	}
	fmt.Fprintf(&b, "USAGE\n  %s\n\n", cmp.Or(c.ShortUsage, c.Name))
	if c.LongHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimRight(c.LongHelp, "\n"))
	}
	if len(c.Subcommands) > 0 {
		b.WriteString("COMMANDS\n")
		w := 0
		for _, sc := range c.Subcommands {
			w = max(w, textwidth.Width(sc.Name))
		}
		for _, sc := range c.Subcommands {
			writeItem(&b, sc.Name, sc.ShortHelp, w)
		}
		b.WriteString("\n")
	}
	if c.FlagSet != nil {
		var names, helps []string
		w := 0
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			name, help := flagHelp(f)
			names, helps = append(names, name), append(helps, help)
			if textwidth.Width(name) <= maxFlagColumn {
				w = max(w, textwidth.Width(name))
			}
		})
		if len(names) > 0 {
			b.WriteString("FLAGS\n")
			for i := range names {
				writeItem(&b, names[i], helps[i], w)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// maxFlagColumn is the widest "--flag VALUE" that keeps its help beside
// it; a wider one has its help on the next line.
const maxFlagColumn = 26

// writeItem writes "  name  help", the help wrapped under itself at
// HelpWidth, starting at column w+4 (on the next line when name is wider
// than w).
func writeItem(b *strings.Builder, name, help string, w int) {
	indent := strings.Repeat(" ", w+4)
	lines := textwidth.Wrap(help, max(HelpWidth-len(indent), 20))
	if textwidth.Width(name) > w {
		fmt.Fprintf(b, "  %s\n", name)
	} else {
		fmt.Fprintf(b, "  %s  %s\n", textwidth.PadRight(name, w), lines[0])
		lines = lines[1:]
	}
	for _, l := range lines {
		if l != "" {
			fmt.Fprintf(b, "%s%s\n", indent, l)
		}
	}
}

// flagHelp is a flag as it is typed (--proc DIR, --pss) and its help with
// its default, when it has one: "(default 1s)".
func flagHelp(f *flag.Flag) (name, help string) {
	shown := *f
	shown.Usage = FlagUsage(f)
	placeholder, text := flag.UnquoteUsage(&shown)
	name = "--" + f.Name
	if !IsBoolFlag(f) {
		name += " " + valueName(f, placeholder)
	}
	if def := f.DefValue; def != "" && def != "0" && def != "false" && def != "0s" && def != "[]" {
		if head, env, ok := strings.Cut(text, " (env "); ok && strings.HasSuffix(env, ")") {
			text = head + " (default " + def + "; env " + env // one parenthesis
		} else {
			text += " (default " + def + ")"
		}
	}
	return name, text
}

// valueName is what a flag's value is called in --help: its own name
// for it when it has one (a Spec's Meta, SIZE), else a backquoted word of
// its usage, else a name for the type it takes.
func valueName(f *flag.Flag, placeholder string) string {
	if m, ok := f.Value.(interface{ Meta() string }); ok && m.Meta() != "" {
		return m.Meta()
	}
	switch placeholder {
	case "", "value":
		return "VALUE"
	case "string":
		return "TEXT"
	case "int", "uint":
		return "N"
	case "float":
		return "NUMBER"
	}
	return strings.ToUpper(placeholder)
}

// LazyHelp is a UsageFunc that sets c's LongHelp from longHelp first: a
// help text that lists a catalogue is built when help is shown, not at
// every start.
func LazyHelp(longHelp func() string) func(*ffcli.Command) string {
	return func(c *ffcli.Command) string {
		c.LongHelp = longHelp()
		return Usage(c)
	}
}

// WrapList joins names with spaces into lines of at most width bytes, each
// line after the first starting with indent (a list in a help text); a
// name holding a space or a tab is quoted.
func WrapList(names []string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, name := range names {
		if strings.ContainsAny(name, " \t") {
			name = strconv.Quote(name)
		}
		if i > 0 && n+1+len(name) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(name)
		n += len(name)
	}
	return b.String()
}
