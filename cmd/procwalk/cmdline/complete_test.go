//go:build linux

package cmdline

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// testCompleter completes a program with a default command (list), a
// command taking a file (show), and one running a command (exec).
func testCompleter() *Completer {
	command := func(name, help string, flags func(fs *flag.FlagSet)) *ffcli.Command {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("root", "/proc", "procfs root (env X_ROOT)")
		flags(fs)
		return &ffcli.Command{Name: name, ShortHelp: help, FlagSet: fs}
	}
	root := command("prog", "", func(*flag.FlagSet) {})
	root.Subcommands = []*ffcli.Command{
		command("list", "list things", func(fs *flag.FlagSet) {
			fs.String("sort", "name", "sort by KEY; names or sizes")
			fs.String("kind", "", "kinds, comma-separated")
			fs.Bool("all", false, "every thing")
		}),
		command("show", "show a thing", func(fs *flag.FlagSet) { fs.Bool("long", false, "long form") }),
		command("exec", "run a command", func(fs *flag.FlagSet) { fs.Int("n", 1, "times") }),
	}
	return &Completer{
		Root:      root,
		Default:   "list",
		TakesRest: func(command string) bool { return command == "exec" },
		Args: func(command string, pos int, cur string, words []string) Completion {
			switch {
			case command == "show" && pos == 0:
				return Match([]string{"alpha", "beta", "alpine"}, cur)
			case command == "exec":
				return Completion{Files: true}
			}
			return Completion{}
		},
		Values: func(command, name, value, prefix string, words []string) Completion {
			switch name {
			case "sort":
				return Choose([]string{"name", "size", command}, value, prefix, false)
			case "kind":
				return Choose([]string{"a", "b", "c"}, value, prefix, true)
			case "root":
				return Completion{Files: prefix == ""}
			}
			return Completion{}
		},
	}
}

func words(c Completion) string {
	var w []string
	for _, cd := range c.Words {
		w = append(w, cd.Word)
	}
	return strings.Join(w, "|")
}

func TestComplete(t *testing.T) {
	c := testCompleter()
	for _, tt := range []struct {
		line []string // the words before the cursor, then the word under it
		want string
		dir  string
	}{
		{[]string{"s"}, "show", ":words"},
		{[]string{""}, "list|show|exec|help", ":words"},
		{[]string{"help", "e"}, "exec", ":words"},
		{[]string{"--root", "/x", "l"}, "list", ":words"},
		{[]string{"--so"}, "--sort", ":words"},              // the default command's flags
		{[]string{"--sort", "s"}, "size", ":words"},         // and their values
		{[]string{"list", "--sort", "l"}, "list", ":words"}, // the command's name reaches Values
		{[]string{"list", "--sort=n"}, "--sort=name", ":words"},
		{[]string{"list", "--all", "--sort", "n"}, "name", ":words"}, // a bool flag takes no value
		{[]string{"list", "--kind", "a,"}, "a,b|a,c", ":words,nospace"},
		{[]string{"list", "--kind=b,a,"}, "--kind=b,a,c", ":words,nospace"},
		{[]string{"--root", ""}, "", ":words,files"},
		{[]string{"--root="}, "", ":words"},
		{[]string{"show", "al"}, "alpha|alpine", ":words"},
		{[]string{"show", "alpha", "b"}, "", ":words"},
		{[]string{"exec", "make", "-j"}, "", ":words,files"}, // the command's flags are its own
		{[]string{"exec", "--"}, "--n|--root", ":words"},     // sorted, as VisitAll visits
		{[]string{"exec", "-"}, "", ":words,files"},
		{[]string{"list", "--", "--s"}, "", ":words"},
		{[]string{"bogus", ""}, "", ":words"},
	} {
		before, cur := tt.line[:len(tt.line)-1], tt.line[len(tt.line)-1]
		got := c.Complete(before, cur)
		if words(got) != tt.want || got.Directive() != tt.dir {
			t.Errorf("%q: %q %s; want %q %s", tt.line, words(got), got.Directive(), tt.want, tt.dir)
		}
	}
}

// The words form carries each word's description after a tab, on one
// line; bash's form escapes the words for where the cursor is.
func TestCompleteOutput(t *testing.T) {
	c := testCompleter()
	var b strings.Builder
	c.WriteWords(&b, []string{"list", "--s"})
	if want := ":words\n--sort\tsort by KEY\n"; b.String() != want {
		t.Errorf("words: %q; want %q", b.String(), want)
	}
	b.Reset()
	c.Root.Subcommands[0].ShortHelp = "list\tthings\nhere"
	c.WriteWords(&b, []string{"li"})
	if want := ":words\nlist\tlist things here\n"; b.String() != want {
		t.Errorf("words: %q; want %q", b.String(), want)
	}
	b.Reset()
	c.WriteBash(&b, "prog list --kind a,", " \t\n\"'><=;|&(:")
	if want := ":words,nospace\na,b\na,c\n"; b.String() != want {
		t.Errorf("bash: %q; want %q", b.String(), want)
	}
}

func TestShellScript(t *testing.T) {
	for _, shell := range Shells() {
		s, ok := ShellScript(shell, "__hidden")
		if !ok || !strings.Contains(s, "command procwalk __hidden ") || strings.Contains(s, "__COMPLETE__") {
			t.Errorf("%s: ok %v, script:\n%s", shell, ok, s)
		}
	}
	if _, ok := ShellScript("tcsh", "__hidden"); ok {
		t.Error("tcsh has a script")
	}
}

func TestFlagsOf(t *testing.T) {
	fs := testFlags()
	got := FlagsOf(fs, []string{"1", "--pss", "--sort", "cpu", "--bogus", "--interval=2s", "--limit", "3"}, "limit")
	if want := "--pss --sort cpu --interval=2s"; strings.Join(got, " ") != want {
		t.Errorf("got %q; want %q", got, want)
	}
}
