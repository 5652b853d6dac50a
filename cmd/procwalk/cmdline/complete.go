//go:build linux

package cmdline

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// complete.go completes command lines for the shells: one Go function
// decides what completes the word under the cursor (Completer.Complete);
// each shell only quotes. bash gets the words already escaped for where
// the cursor is (BashReplies), zsh and fish quote what they insert
// themselves (WriteWords). The scripts (BashScript, ZshScript, FishScript)
// ask the binary itself, through a hidden command.

// Completion is what completes a word: candidates (each the whole word,
// unquoted, with an optional description) or file names.
type Completion struct {
	Words []Candidate
	Files bool // the shell completes file names instead
	// NoSpace: the word goes on (a comma-separated list), no space after.
	NoSpace bool
}

// Candidate is one word that completes, with its description ("" none).
type Candidate struct{ Word, Help string }

// Directive is the first line of the hidden command's output: ":words",
// then ",files" and ",nospace" when they apply.
func (c Completion) Directive() string {
	d := ":words"
	if c.Files {
		d += ",files"
	}
	if c.NoSpace {
		d += ",nospace"
	}
	return d
}

// WithPrefix is c with prefix written before each word ("--sort=").
func (c Completion) WithPrefix(prefix string) Completion {
	for i := range c.Words {
		c.Words[i].Word = prefix + c.Words[i].Word
	}
	return c
}

// Completer completes the command lines of Root's commands from their
// flag sets. What completes an argument or a flag's value is the
// program's: Args and Values say it.
type Completer struct {
	Root *ffcli.Command
	// Default is the command run when none is named: its flags complete
	// before a command's name.
	Default string
	// TakesRest reports whether a command's arguments after the first
	// belong to something else (a command it runs), where no flag of
	// its own completes. Nil: none does.
	TakesRest func(command string) bool
	// Args completes argument pos (0 the first) of command, cur being what
	// is typed of it and words the line before it. Nil: nothing.
	Args func(command string, pos int, cur string, words []string) Completion
	// Values completes the value of flag name of command (Default's when
	// no command is named yet) when the flag's Spec does not: value is what is typed of it, and each
	// word is to be written after prefix ("--sort=", or "" when the
	// value is a word of its own). Nil: nothing.
	Values func(command, name, value, prefix string, words []string) Completion
}

// Complete says what completes cur, the word under the cursor, after the
// words before it (the command line after the program's name, unquoted).
// "help" completes a command's name.
func (c *Completer) Complete(words []string, cur string) Completion {
	cmd, pos, pending := c.parse(words)
	command := c.Default
	if cmd != nil {
		command = cmd.Name
	}
	if pending != "" { // the value of "--flag VALUE"
		return c.values(command, pending, cur, "", words)
	}
	if strings.HasPrefix(cur, "-") && cur != "-" && pos >= 0 && !(cmd != nil && c.takesRest(cmd.Name) && pos > 0) {
		if name, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			dashes := cur[:len(cur)-len(strings.TrimLeft(cur, "-"))]
			return c.values(command, name, value, dashes+name+"=", words)
		}
		return c.flags(cmd, cur)
	}
	switch {
	case cmd == nil, cmd.Name == "help" && pos == 0:
		return c.commands(cur)
	case c.Args != nil:
		return c.Args(cmd.Name, pos, cur, words)
	}
	return Completion{}
}

func (c *Completer) takesRest(command string) bool {
	return c.TakesRest != nil && c.TakesRest(command)
}

// values completes flag name's value: from the flag's Spec (its choices,
// or file names), else as Values says.
func (c *Completer) values(command, name, value, prefix string, words []string) Completion {
	if f := c.command(command).FlagSet.Lookup(name); f != nil {
		if s, ok := SpecOf(f); ok && s.Files {
			return Completion{Files: prefix == ""}
		} else if ok && s.Choices != nil {
			return Choose(s.Choices(), value, prefix, s.List)
		}
	}
	if c.Values == nil {
		return Completion{}
	}
	return c.Values(command, name, value, prefix, words)
}

// parse finds the command among words (nil: none yet; the help pseudo
// command has a FlagSet of its own), how many arguments follow it before
// the cursor (-1: after "--", where no flag is), and a flag still waiting
// for its value.
func (c *Completer) parse(words []string) (cmd *ffcli.Command, pos int, pending string) {
	fs := c.Root.FlagSet
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return cmd, -1, ""
		}
		if strings.HasPrefix(w, "-") && w != "-" && !(cmd != nil && c.takesRest(cmd.Name) && pos > 0) {
			name, _, inline := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := fs.Lookup(name)
			if f == nil && cmd == nil {
				f = c.command(c.Default).FlagSet.Lookup(name)
			}
			if f != nil && !inline && !IsBoolFlag(f) {
				if i == len(words)-1 {
					return cmd, pos, name
				}
				i++
			}
			continue
		}
		if cmd == nil {
			if w == "help" {
				cmd = &ffcli.Command{Name: "help", FlagSet: flag.NewFlagSet("help", flag.ContinueOnError)}
			} else if cmd = c.find(w); cmd == nil {
				return &ffcli.Command{Name: w, FlagSet: flag.NewFlagSet(w, flag.ContinueOnError)}, 1, ""
			}
			fs = cmd.FlagSet
			continue
		}
		pos++
	}
	return cmd, pos, ""
}

// find is Root's command called name, or nil.
func (c *Completer) find(name string) *ffcli.Command {
	for _, sc := range c.Root.Subcommands {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

// command is Root's command called name, or Root.
func (c *Completer) command(name string) *ffcli.Command {
	if sc := c.find(name); sc != nil {
		return sc
	}
	return c.Root
}

// commands are the command names with their help lines.
func (c *Completer) commands(cur string) Completion {
	var out Completion
	for _, sc := range c.Root.Subcommands {
		if strings.HasPrefix(sc.Name, cur) {
			out.Words = append(out.Words, Candidate{sc.Name, sc.ShortHelp})
		}
	}
	if strings.HasPrefix("help", cur) {
		out.Words = append(out.Words, Candidate{"help", "show a command's help"})
	}
	return out
}

// flags are the flags of cmd (nil: the default command's) that start as
// cur does, written with two dashes.
func (c *Completer) flags(cmd *ffcli.Command, cur string) Completion {
	if cmd == nil {
		cmd = c.command(c.Default)
	}
	var out Completion
	prefix := strings.TrimLeft(cur, "-")
	cmd.FlagSet.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, prefix) {
			out.Words = append(out.Words, Candidate{"--" + f.Name, firstClause(FlagUsage(f))})
		}
	})
	return out
}

// FlagsOf are the flags among words that fs knows, each with its value,
// leaving out those skip names: the flags of a line that a gather made
// for a completion should see (--proc, --tmux-socket ...).
func FlagsOf(fs *flag.FlagSet, words []string, skip ...string) []string {
	flags, _ := SplitFlags(fs, words)
	var known []string
	for i := 0; i < len(flags); i++ {
		name, _, inline := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		f := fs.Lookup(name)
		if f == nil || slices.Contains(skip, name) {
			continue
		}
		known = append(known, flags[i])
		if !inline && !IsBoolFlag(f) && i+1 < len(flags) {
			i++
			known = append(known, flags[i])
		}
	}
	return known
}

// Choose is the values that complete value, written after prefix. In a
// list (a comma-separated value) the last item completes, an item given
// already is not offered again, and no space follows.
func Choose(values []string, value, prefix string, list bool) Completion {
	var out Completion
	done := ""
	if list {
		if i := strings.LastIndexByte(value, ','); i >= 0 {
			done, value = value[:i+1], value[i+1:]
		}
		out.NoSpace = true
	}
	for _, v := range values {
		if strings.HasPrefix(v, value) && !(list && slices.Contains(strings.Split(done, ","), v)) {
			out.Words = append(out.Words, Candidate{Word: prefix + done + v})
		}
	}
	return out
}

// Match is the words that start with cur.
func Match(words []string, cur string) Completion {
	var out Completion
	for _, w := range words {
		if strings.HasPrefix(w, cur) {
			out.Words = append(out.Words, Candidate{Word: w})
		}
	}
	return out
}

// firstClause is a flag's usage up to its first ';' or '(' : a short line
// for a completion menu.
func firstClause(usage string) string {
	if i := strings.IndexAny(usage, ";("); i > 0 {
		usage = usage[:i]
	}
	return strings.TrimSpace(usage)
}

// WriteBash writes, for bash, what completes line (the line up to the
// cursor, breaks being COMP_WORDBREAKS): the directive, then the words
// escaped for the word readline replaces, one a line.
func (c *Completer) WriteBash(w io.Writer, line, breaks string) {
	words, cur := ShellWords(line)
	out := c.Complete(words, cur)
	fmt.Fprintln(w, out.Directive())
	var cands []string
	for _, cd := range out.Words {
		cands = append(cands, cd.Word)
	}
	for _, r := range BashReplies(line, breaks, cur, cands) {
		fmt.Fprintln(w, r)
	}
}

// WriteWords writes, for zsh and fish, what completes the last of words
// (unquoted; the one under the cursor): the directive, then each word
// unquoted on a line, a tab before its description.
func (c *Completer) WriteWords(w io.Writer, words []string) {
	cur := ""
	if len(words) > 0 {
		words, cur = words[:len(words)-1], words[len(words)-1]
	}
	out := c.Complete(words, cur)
	fmt.Fprintln(w, out.Directive())
	for _, cd := range out.Words {
		line := oneLine(cd.Word)
		if cd.Help != "" {
			line += "\t" + oneLine(cd.Help)
		}
		fmt.Fprintln(w, line)
	}
}

// oneLine keeps a word on its line of the output.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }
