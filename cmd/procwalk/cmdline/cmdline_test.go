//go:build linux

package cmdline

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func testFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("tree", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("pss", false, "read smaps_rollup")
	fs.String("sort", "rss", "sort by `KEY`")
	fs.Duration("interval", time.Second, "sampling interval")
	fs.Int("limit", 10, "at most N")
	return fs
}

// Flags after the arguments move before them, each with its value; a
// negative number stays an argument, an unknown flag goes with the flags
// (for the parse to name it), "--" ends the flags.
func TestSplitFlags(t *testing.T) {
	for _, tt := range []struct {
		args            []string
		flags, position []string
	}{
		{[]string{"1", "--pss"}, []string{"--pss"}, []string{"1"}},
		{[]string{"1", "--sort", "cpu", "2"}, []string{"--sort", "cpu"}, []string{"1", "2"}},
		{[]string{"--sort=cpu", "1"}, []string{"--sort=cpu"}, []string{"1"}},
		{[]string{"-5", "--bogus"}, []string{"--bogus"}, []string{"-5"}},
		{[]string{"1", "--", "--pss"}, nil, []string{"1", "--", "--pss"}},
		{[]string{"--help", "1"}, []string{"--help"}, []string{"1"}},
		{[]string{"1", "--limit"}, []string{"--limit"}, []string{"1"}}, // the parse says the value is missing
	} {
		flags, positional := SplitFlags(testFlags(), tt.args)
		if !slices.Equal(flags, tt.flags) || !slices.Equal(positional, tt.position) {
			t.Errorf("SplitFlags(%q) = %q, %q; want %q, %q", tt.args, flags, positional, tt.flags, tt.position)
		}
	}
	if got, want := FlagsFirst(testFlags(), []string{"1", "--pss", "2"}), []string{"--pss", "1", "2"}; !slices.Equal(got, want) {
		t.Errorf("FlagsFirst = %q, want %q", got, want)
	}
}

// The flag package's errors are written as procwalk writes flags, with
// the names closest to an unknown one.
func TestFlagErrors(t *testing.T) {
	fs := testFlags()
	err := fs.Parse([]string{"--sortt", "cpu"})
	if got, want := FlagMessage(err), "unknown flag --sortt"; got != want {
		t.Errorf("FlagMessage = %q, want %q", got, want)
	}
	if got, want := DidYouMeanFlag(err, fs), "did you mean --sort?"; got != want {
		t.Errorf("DidYouMeanFlag = %q, want %q", got, want)
	}
	err = testFlags().Parse([]string{"--sort"})
	if got, want := FlagMessage(err), "--sort needs a value"; got != want {
		t.Errorf("FlagMessage = %q, want %q", got, want)
	}
	if got := DidYouMeanFlag(errors.New("flag provided but not defined: -zzzzzzzz"), fs); got != "" {
		t.Errorf("DidYouMeanFlag of a name close to none = %q, want none", got)
	}
}

// A value is checked as its flag's Set would, saying what is wanted.
func TestCheckValue(t *testing.T) {
	fs := testFlags()
	for _, tt := range []struct{ flag, value, want string }{
		{"interval", "10s", ""},
		{"interval", "soon", "a duration such as 10s, 500ms or 2m"},
		{"limit", "0x10", ""},
		{"limit", "ten", "a whole number"},
		{"pss", "yes", "true or false"},
		{"sort", "anything", ""},
	} {
		if got := CheckValue(fs.Lookup(tt.flag), tt.value); got != tt.want {
			t.Errorf("CheckValue(--%s %q) = %q, want %q", tt.flag, tt.value, got, tt.want)
		}
	}
}

// A config line is "name value", "name" alone being true; '#' starts a
// comment line, " #" a comment after the value.
func TestPlainLine(t *testing.T) {
	for _, tt := range []struct {
		line, name, value string
		ok                bool
	}{
		{"pss\n", "pss", "true", true},
		{"  interval 5s  # every 5 s\n", "interval", "5s", true},
		{"regex a#b\n", "regex", "a#b", true},
		{"# a comment\n", "", "", false},
		{"   \n", "", "", false},
	} {
		name, value, ok := PlainLine(tt.line)
		if name != tt.name || value != tt.value || ok != tt.ok {
			t.Errorf("PlainLine(%q) = %q, %q, %v; want %q, %q, %v", tt.line, name, value, ok, tt.name, tt.value, tt.ok)
		}
	}
}

// --help writes flags as they are typed, with their value's name and
// default; the man page has the same help in troff, a leading dot and
// hyphens escaped, the exit codes once.
func TestUsageAndManPage(t *testing.T) {
	exitCodes := "EXIT CODES\n  0  success"
	tree := &ffcli.Command{Name: "tree", ShortUsage: "procwalk tree [PID]", ShortHelp: "print the process tree",
		LongHelp: ".hidden starts with a dot\n\n" + exitCodes, FlagSet: testFlags()}
	root := &ffcli.Command{Name: "procwalk", ShortUsage: "procwalk [flags] <command>", LongHelp: "procwalk walks /proc.\n\n" + exitCodes,
		Subcommands: []*ffcli.Command{tree}}
	help := Usage(tree)
	for _, want := range []string{"USAGE\n  procwalk tree [PID]\n", "  --pss ", "  --sort KEY ", "(default rss)", "  --interval DURATION "} {
		if !strings.Contains(help, want) {
			t.Errorf("Usage lacks %q:\n%s", want, help)
		}
	}
	page := ManPage(root, "procwalk v0 test", exitCodes)
	for _, want := range []string{".TH PROCWALK 1 \"\" \"procwalk v0 test\"", ".SS \"procwalk tree [PID]\"", "\\&.hidden starts", ".B \"\\-\\-sort KEY\"", ".SH EXIT STATUS\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("ManPage lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "success"); n != 1 {
		t.Errorf("the exit codes are in the page %d times, want once (EXIT STATUS)", n)
	}
}

func TestWrapList(t *testing.T) {
	got := WrapList([]string{"systemd", "sshd", "tmux: server", "containerd-shim"}, 20, "  ")
	if want := "systemd sshd\n  \"tmux: server\"\n  containerd-shim"; got != want {
		t.Errorf("%q; want %q", got, want)
	}
}
