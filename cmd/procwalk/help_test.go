//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// Every --help writes flags as they are typed (--pss, --sort KEY), never
// Go's -flag or -pss=false, names defaults, fits 80 columns, and the
// commands people start with show EXAMPLES.
func TestHelpShowsFlagsAsTyped(t *testing.T) {
	clearEnv(t)
	for _, command := range []string{"", "ps", "tree", "sessions", "session", "kill", "guard", "run", "watch", "top", "telegraf", "record", "test", "completion", "man"} {
		args := []string{"--help"}
		if command != "" {
			args = []string{command, "--help"}
		}
		r := cli(t, args...)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		flags := r.stdout[max(strings.Index(r.stdout, "\nFLAGS\n"), 0):]
		for _, l := range strings.Split(flags, "\n") {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") || strings.Contains(l, "=false") {
				t.Errorf("%v: a flag written as Go writes it: %q", args, l)
			}
		}
		// Every line, description, text and examples included: an 80-column
		// terminal would break its words (a list of values joined by bars
		// breaks after a bar).
		for _, l := range strings.Split(r.stdout, "\n") {
			if w := textwidth.Width(l); w > cmdline.HelpWidth {
				t.Errorf("%v: a line of %d cells: %q", args, w, l)
			}
		}
		switch command {
		case "", "ps", "tree", "sessions", "session", "top", "kill", "run", "watch", "telegraf", "guard":
			if !strings.Contains(r.stdout, "\nEXAMPLES\n") {
				t.Errorf("%v: no EXAMPLES", args)
			}
		}
	}
	r := cli(t, "ps", "--help")
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{"\n  --pss  ", "\n  --sort KEY  ", "(default rss; env PROCWALK_SORT)", "\n  --proc DIR  "} {
		if !strings.Contains(r.stdout, want) && !strings.Contains(flat, want) {
			t.Errorf("ps --help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A flag whose usage lists the metric catalogue builds it when help, man
// or a completion shows it, not on every run (every command is built on
// every run of it); the list is then there as before.
func TestCatalogueUsageBuiltWhenShown(t *testing.T) {
	e := newEnv(strings.NewReader(""), new(strings.Builder), new(strings.Builder))
	for _, tt := range []struct {
		command, flag, lists string
	}{
		{"sessions", "sort", "rss|pss|uss"},
		{"ps", "sort", "rss|pss|uss"},
		{"telegraf", "process-top-by", "rss_bytes, pss_bytes"},
	} {
		c := commandNamed(tt.command).build(&globals{}, e)
		f := c.FlagSet.Lookup(tt.flag)
		if f.Usage != "" {
			t.Errorf("%s --%s: its usage was built at registration: %q", tt.command, tt.flag, f.Usage)
		}
		if got := cmdline.FlagUsage(f); !strings.Contains(got, tt.lists) {
			t.Errorf("%s --%s: shown usage %q lacks %q", tt.command, tt.flag, got, tt.lists)
		}
	}
}
