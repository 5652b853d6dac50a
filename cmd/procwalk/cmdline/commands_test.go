//go:build linux

package cmdline

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// testProgram has global --root and --pss, a default command list
// (--kind) and tree, which takes flags after its arguments.
func testProgram() Program {
	globals := func(fs *flag.FlagSet) {
		fs.String("root", "/proc", "procfs root")
		fs.Bool("pss", false, "read smaps_rollup")
		fs.Duration("interval", 0, "sampling interval")
	}
	command := func(name string, flags func(fs *flag.FlagSet)) *ffcli.Command {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		globals(fs)
		flags(fs)
		return &ffcli.Command{Name: name, FlagSet: fs}
	}
	root := command("procwalk", func(*flag.FlagSet) {})
	root.Subcommands = []*ffcli.Command{
		command("list", func(fs *flag.FlagSet) { fs.String("kind", "", "kinds") }),
		command("tree", func(fs *flag.FlagSet) { fs.String("sort", "rss", "order") }),
	}
	return Program{Root: root, Default: "list", Globals: globals, FlagsAnywhere: func(c string) bool { return c == "tree" }}
}

func TestProgramArgs(t *testing.T) {
	p := testProgram()
	for _, tt := range []struct {
		args []string
		want string // the args, or "error: " and the start of the message
	}{
		{nil, "list"},
		{[]string{"--pss", "tree", "1"}, "tree -pss=true 1"},
		{[]string{"--root", "/x", "TREE", "1", "--sort", "pid"}, "tree -root=/x --sort pid 1"},
		{[]string{"list", "1", "--kind", "a"}, "list 1 --kind a"}, // list takes no flags after its arguments
		{[]string{"--kind", "tmux"}, "list --kind tmux"},          // the default command's flag
		{[]string{"--sort=pid", "tree"}, "error: --sort is a flag of tree: write it after the command's name"},
		{[]string{"--kinf=x", "list"}, "error: unknown flag --kinf: did you mean --kind?"},
		{[]string{"--interval", "soon"}, `error: --interval "soon": want a duration`},
		{[]string{"tre"}, `error: unknown command "tre": did you mean tree?`},
		{[]string{"bogus"}, `error: unknown command "bogus": run 'procwalk --help' for the list`},
	} {
		got, err := p.Args(tt.args)
		s := strings.Join(got, " ")
		if err != nil {
			s = "error: " + err.Error()
		}
		if !strings.HasPrefix(s, tt.want) || err == nil && s != tt.want {
			t.Errorf("%q: %q; want %q", tt.args, s, tt.want)
		}
	}
	if _, err := p.Args([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	if p.Command("tree").Name != "tree" || p.Command("nope") != p.Root {
		t.Error("Command")
	}
}

func TestParseError(t *testing.T) {
	p := testProgram()
	tree := p.Command("tree")
	_, err := os.Open("/nonexistent/config")
	if got := ParseError(err, tree); !strings.HasPrefix(got.Error(), "cannot read config file /nonexistent/config: ") {
		t.Errorf("open: %v", got)
	}
	parse := tree.FlagSet.Parse([]string{"--srot", "x"})
	wrapped := &wrapErr{"error parsing commandline arguments: " + parse.Error(), parse}
	if got := ParseError(wrapped, tree); got.Error() != "unknown flag --srot: did you mean --sort?" {
		t.Errorf("unknown flag: %v", got)
	}
	other := errors.New("other")
	if got := ParseError(other, tree); got != other {
		t.Errorf("other: %v", got)
	}
}

type wrapErr struct {
	msg string
	err error
}

func (w *wrapErr) Error() string { return w.msg }
func (w *wrapErr) Unwrap() error { return w.err }

func TestListValues(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var s StringList
	var c CommaList
	var d DurationText
	fs.Var(&s, "s", "")
	fs.Var(&c, "c", "")
	fs.Var(&d, "d", "")
	if err := fs.Parse([]string{"-s", "a,b", "-s", "c", "-c", " x, ,y", "-c", "z", "-d", "soon"}); err != nil {
		t.Fatal(err)
	}
	if s.String() != "a,b,c" || len(s) != 2 || c.String() != "x,y,z" || d != "soon" {
		t.Errorf("s %q, c %q, d %q", s, c, d)
	}
	if want := CheckValue(fs.Lookup("d"), "soon"); !strings.HasPrefix(want, "a duration") {
		t.Errorf("DurationText is checked as %q", want)
	}
}
