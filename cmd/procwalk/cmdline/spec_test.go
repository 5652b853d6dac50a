//go:build linux

package cmdline

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// specFlags is a flag set whose flags carry Specs of every kind.
func specFlags() (*flag.FlagSet, *string, *string, *DurationText) {
	fs := flag.NewFlagSet("spec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var mode, kinds string
	var wait DurationText
	Spec{Meta: "MODE", Choices: Words("tree", "biggest"), Strict: true}.String(fs, &mode, "mode", "tree", "what to end")
	Spec{Meta: "KINDS", Choices: Words("a", "b"), List: true, Strict: true}.String(fs, &kinds, "kind", "", "kinds")
	Spec{Meta: "KEY", Choices: Words("rss", "cpu")}.String(fs, new(string), "sort", "rss", "sort by")
	Path("FILE").String(fs, new(string), "groups", "", "rules file")
	Spec{}.String(fs, new(string), "name", "", "a name")
	Spec{Meta: "WAIT"}.Var(fs, &wait, "wait", "how long")
	return fs, &mode, &kinds, &wait
}

func TestSpecChecks(t *testing.T) {
	fs, _, _, _ := specFlags()
	for _, tt := range []struct{ flag, value, want string }{
		{"mode", "tree", ""},
		{"mode", "biggest", ""},
		{"mode", "all", "tree or biggest"},
		{"mode", "", "tree or biggest"},
		{"kind", "a,b", ""},
		{"kind", "a, b", ""},
		{"kind", "a,z", "a or b"},
		{"sort", "anything", ""},                                // not Strict: a metric's name is taken too
		{"wait", "soon", "a duration such as 10s, 500ms or 2m"}, // the wrapped value's own check
		{"wait", "2s", ""},
	} {
		if got := CheckValue(fs.Lookup(tt.flag), tt.value); got != tt.want {
			t.Errorf("CheckValue(--%s %q) = %q, want %q", tt.flag, tt.value, got, tt.want)
		}
	}
}

func TestSpecSet(t *testing.T) {
	fs, mode, kinds, wait := specFlags()
	if *mode != "tree" || fs.Lookup("mode").DefValue != "tree" {
		t.Fatalf("default: mode %q, DefValue %q; want tree", *mode, fs.Lookup("mode").DefValue)
	}
	if err := fs.Parse([]string{"--mode", "biggest", "--kind", "b,a", "--wait", "3s"}); err != nil {
		t.Fatal(err)
	}
	if *mode != "biggest" || *kinds != "b,a" || *wait != "3s" {
		t.Errorf("parsed mode %q kinds %q wait %q; want biggest, b,a, 3s", *mode, *kinds, *wait)
	}
	err := fs.Parse([]string{"--mode", "all"})
	if err == nil || err.Error() != `invalid value "all" for flag -mode: want tree or biggest` {
		t.Errorf("--mode all: %v; want it refused with the choices", err)
	}
	if *mode != "biggest" {
		t.Errorf("a refused value was kept: %q", *mode)
	}
}

func TestSpecHelp(t *testing.T) {
	fs, _, _, _ := specFlags()
	for flagName, want := range map[string]string{
		"mode": "--mode MODE", "kind": "--kind KINDS", "groups": "--groups FILE", "name": "--name TEXT", "wait": "--wait WAIT",
	} {
		if got, _ := flagHelp(fs.Lookup(flagName)); got != want {
			t.Errorf("--help writes %q, want %q", got, want)
		}
	}
	if _, help := flagHelp(fs.Lookup("mode")); help != "what to end (default tree)" {
		t.Errorf("--mode's help %q", help)
	}
	if _, ok := SpecOf(fs.Lookup("name")); !ok {
		t.Error("SpecOf: a String flag has its Spec")
	}
	// flag.PrintDefaults asks a zero value of the flag's type for its
	// String (it panicked).
	var out strings.Builder
	fs.SetOutput(&out)
	fs.PrintDefaults()
	if strings.Contains(out.String(), "panic") || !strings.Contains(out.String(), "-mode") {
		t.Errorf("PrintDefaults:\n%s", out.String())
	}
	plain := flag.NewFlagSet("plain", flag.ContinueOnError)
	plain.String("x", "", "x")
	if _, ok := SpecOf(plain.Lookup("x")); ok {
		t.Error("SpecOf: a flag declared without a Spec has none")
	}
}

// A Spec's Usage is built when the flag is shown (help, completion), never
// when it is registered, and reads as a usage given at registration would.
func TestSpecUsageBuiltWhenShown(t *testing.T) {
	fs := flag.NewFlagSet("lazy", flag.ContinueOnError)
	built := 0
	Spec{Meta: "KEY", Usage: func() string { built++; return "sort by rss|cpu; biggest first" }}.String(fs, new(string), "sort", "rss", "")
	if built != 0 {
		t.Fatalf("the usage was built %d times at registration", built)
	}
	if name, help := flagHelp(fs.Lookup("sort")); name != "--sort KEY" || help != "sort by rss|cpu; biggest first (default rss)" {
		t.Errorf("help: %q %q", name, help)
	}
	c := &Completer{Root: &ffcli.Command{Name: "lazy", FlagSet: fs}}
	if got := c.flags(c.Root, "--so").Words; len(got) != 1 || got[0].Help != "sort by rss|cpu" {
		t.Errorf("completion: %+v", got)
	}
	if built != 2 {
		t.Errorf("the usage was built %d times for help and a completion; want 2", built)
	}
}

// TestSpecCompletes: a flag's Spec completes its value before Values is
// asked; Values serves the flags without one.
func TestSpecCompletes(t *testing.T) {
	fs, _, _, _ := specFlags()
	root := &ffcli.Command{Name: "prog", FlagSet: flag.NewFlagSet("prog", flag.ContinueOnError)}
	root.Subcommands = []*ffcli.Command{{Name: "cmd", FlagSet: fs}}
	asked := ""
	c := &Completer{Root: root, Default: "cmd", Values: func(command, name, value, prefix string, words []string) Completion {
		asked = name
		return Match([]string{"from-values"}, value)
	}}
	for _, tt := range []struct {
		line       []string
		want, dir  string
		valuesAsks string
	}{
		{[]string{"cmd", "--mode", ""}, "tree|biggest", ":words", ""},
		{[]string{"cmd", "--mode=b"}, "--mode=biggest", ":words", ""},
		{[]string{"cmd", "--kind", "a,"}, "a,b", ":words,nospace", ""},
		{[]string{"--sort", "c"}, "cpu", ":words", ""}, // the default command's flag
		{[]string{"cmd", "--groups", ""}, "", ":words,files", ""},
		{[]string{"cmd", "--groups="}, "", ":words", ""}, // no file names after --groups=
		{[]string{"cmd", "--name", ""}, "from-values", ":words", "name"},
	} {
		asked = ""
		got := c.Complete(tt.line[:len(tt.line)-1], tt.line[len(tt.line)-1])
		if words(got) != tt.want || got.Directive() != tt.dir || asked != tt.valuesAsks {
			t.Errorf("%q: %q %s (Values asked for %q), want %q %s (%q)", tt.line, words(got), got.Directive(), asked, tt.want, tt.dir, tt.valuesAsks)
		}
	}
}

func TestJoinOr(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := JoinOr(tt.in); got != tt.want {
			t.Errorf("JoinOr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A Size flag parses sizes, refuses them outside its bounds (the parse
// and CheckValue alike), keeps its text and is called SIZE in --help.
func TestSize(t *testing.T) {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var n uint64
	fs.Var(NewSize(&n, "16MiB", 1<<10, 1<<30, "a size from 1KiB to 1GiB"), "budget", "how much")
	f := fs.Lookup("budget")
	if n != 16<<20 || f.DefValue != "16MiB" {
		t.Fatalf("default: %d, DefValue %q; want 16 MiB, 16MiB", n, f.DefValue)
	}
	for _, tt := range []struct{ value, want string }{
		{"1KiB", ""}, {"1GiB", ""}, {"2.5MiB", ""},
		{"1023", "a size from 1KiB to 1GiB"}, {"2GiB", "a size from 1KiB to 1GiB"}, {"lots", "a size from 1KiB to 1GiB"},
		// What the parse found wrong, when it says more than the want.
		{"16EiB", `a size from 1KiB to 1GiB (unknown unit "EiB")`}, {"99999999T", "a size from 1KiB to 1GiB (too large)"},
	} {
		if got := CheckValue(f, tt.value); got != tt.want {
			t.Errorf("CheckValue(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
	if err := fs.Parse([]string{"--budget", "2.5MiB"}); err != nil || n != 5<<19 || f.Value.String() != "2.5MiB" {
		t.Errorf("--budget 2.5MiB: %v, %d, %q", err, n, f.Value.String())
	}
	if err := fs.Parse([]string{"--budget", "2GiB"}); err == nil || n != 5<<19 {
		t.Errorf("--budget 2GiB: %v, %d; want refused, the value kept", err, n)
	}
	if name, _ := flagHelp(f); name != "--budget SIZE" {
		t.Errorf("--help: %q", name)
	}
}

// A Size without a default is unset (0, no default in --help) until given.
func TestSizeUnset(t *testing.T) {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var n uint64
	fs.Var(NewSize(&n, "", 1, 0, "a positive size"), "max", "at most")
	if f := fs.Lookup("max"); n != 0 || f.DefValue != "" {
		t.Fatalf("unset: %d, DefValue %q; want 0, none", n, f.DefValue)
	}
	if err := fs.Parse([]string{"--max", "0"}); err == nil || err.Error() != `invalid value "0" for flag -max: want a positive size` {
		t.Errorf("--max 0: %v; want refused as under the minimum", err)
	}
	if err := fs.Parse([]string{"--max", "2K"}); err != nil || n != 2048 {
		t.Errorf("--max 2K: %v, %d", err, n)
	}
	// "" is none again, as guard's --max-rss "" always was.
	if err := fs.Parse([]string{"--max", ""}); err != nil || n != 0 {
		t.Errorf("--max \"\": %v, %d; want accepted as none (0)", err, n)
	}
	// A size with a default has no "none": "" is refused.
	var b uint64
	fs.Var(NewSize(&b, "16MiB", 1, 0, "a positive size"), "budget", "how much")
	if err := fs.Parse([]string{"--budget", ""}); err == nil {
		t.Errorf("--budget \"\": accepted (%d); want refused", b)
	}
}
