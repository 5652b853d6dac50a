//go:build linux

package cmdline

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// testSources is a program with commands a (--kind, --session-kinds, its
// alias, --yes) and b (--interval), its env prefix TEST.
func testSources(t *testing.T) (*Sources, *ffcli.Command) {
	for _, v := range []string{"TEST_KIND", "TEST_SESSION_KINDS", "TEST_INTERVAL", "TEST_YES", "TEST_CONFIG"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	s := NewSources("TEST")
	s.Alias = func(name string) string {
		if name == "kind" {
			return "session-kinds"
		}
		return ""
	}
	s.CommandLineOnly = []string{"yes"}
	command := func(name string, flags func(fs *flag.FlagSet)) *ffcli.Command {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("config", "", "config file")
		flags(fs)
		return &ffcli.Command{Name: name, FlagSet: fs, Options: []ff.Option{ff.WithEnvVarPrefix("TEST"), ff.WithConfigFileFlag("config")},
			Exec: func(context.Context, []string) error { return nil }}
	}
	root := command("prog", func(*flag.FlagSet) {})
	root.Subcommands = []*ffcli.Command{
		command("a", func(fs *flag.FlagSet) {
			fs.String("kind", "", "kinds")
			fs.String("session-kinds", "", "kinds")
			fs.Bool("yes", false, "no questions")
		}),
		command("b", func(fs *flag.FlagSet) { fs.Duration("interval", 0, "tick") }),
	}
	s.AddConfigFileOptions(root)
	return s, root
}

func writeFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each flag's source is named: the command line (none), the env var, the
// config file's line; an alias's source is the one whose value counts.
func TestSourcesOf(t *testing.T) {
	s, root := testSources(t)
	a := root.Subcommands[0]
	t.Setenv("TEST_SESSION_KINDS", "tmux")
	cfg := writeFile(t, "# comment\ninterval 2s\nkind tree\n")
	args := []string{"--config", cfg, "--yes"}
	if err := s.ReadCommandLine(a.FlagSet, args); err != nil {
		t.Fatal(err)
	}
	if err := root.Parse(append([]string{"a"}, args...)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, want string }{
		{"yes", ""},
		{"session-kinds", "TEST_SESSION_KINDS"},
		{"kind", "TEST_SESSION_KINDS"}, // its alias's env var beats its config line
		{"interval", "config file " + cfg + " line 2"},
	} {
		if got := s.Of(tt.name); got != tt.want {
			t.Errorf("Of(%s) = %q; want %q", tt.name, got, tt.want)
		}
	}
	if got, ok := s.Named("interval", `--interval "x": bad`); !ok || got != "config file "+cfg+` line 2: interval "x": bad` {
		t.Errorf("Named: %q %v", got, ok)
	}
	if got, ok := s.Named("yes", "--yes: bad"); ok || got != "--yes: bad" {
		t.Errorf("Named from the command line: %q %v", got, ok)
	}
	// Mention names a conflicting flag where it was set.
	for _, tt := range []struct{ name, value, want string }{
		{"yes", "", "--yes"},
		{"interval", "2s", "interval 2s (config file " + cfg + " line 2)"},
		{"kind", "tmux", "TEST_SESSION_KINDS=tmux"}, // its alias's, which counts
		{"session-kinds", "", "TEST_SESSION_KINDS"},
	} {
		if got := s.Mention(tt.name, tt.value); got != tt.want {
			t.Errorf("Mention(%s, %q) = %q; want %q", tt.name, tt.value, got, tt.want)
		}
	}
	if got := (*Sources)(nil).Mention("kind", "tmux"); got != "--kind tmux" {
		t.Errorf("nil Mention = %q", got)
	}
	if got := s.Winner("kind", "session-kinds"); got != "session-kinds" {
		t.Errorf("Winner = %q", got)
	}
	if got := (*Sources)(nil).Winner("kind", "session-kinds"); got != "kind" {
		t.Errorf("nil Winner = %q", got)
	}
}

// IsSet is true for a flag given on the command line (even at its default
// value), by its env var or by a config line, and false for one left alone.
func TestIsSet(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		env    string
		config string
		want   bool
	}{
		{"default", nil, "", "", false},
		{"command line", []string{"--interval", "0s"}, "", "", true},
		{"env", nil, "3s", "", true},
		{"config", nil, "", "interval 2s\n", true},
		{"another flag's config line", nil, "", "kind tmux\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, root := testSources(t)
			b := root.Subcommands[1]
			if tt.env != "" {
				t.Setenv("TEST_INTERVAL", tt.env)
			}
			args := append([]string{"b"}, tt.args...)
			if tt.config != "" {
				args = append(args, "--config", writeFile(t, tt.config))
			}
			if err := root.Parse(args); err != nil {
				t.Fatal(err)
			}
			if got := IsSet(b.FlagSet, "interval"); got != tt.want {
				t.Errorf("IsSet(interval) = %v; want %v", got, tt.want)
			}
		})
	}
}

// A bad value is named with what is wanted, from the command line or an
// env var; a CommandLineOnly flag's env var is refused.
func TestSourcesCheckValues(t *testing.T) {
	s, root := testSources(t)
	b := root.Subcommands[1]
	err := s.ReadCommandLine(b.FlagSet, []string{"x", "--interval", "soon"})
	if err == nil || !strings.HasPrefix(err.Error(), `--interval "soon": want a duration`) {
		t.Errorf("command line: %v", err)
	}
	s, _ = testSources(t)
	t.Setenv("TEST_INTERVAL", "soon")
	if err := s.CheckEnv(b.FlagSet); err == nil || !strings.HasPrefix(err.Error(), `TEST_INTERVAL="soon": --interval wants a duration`) {
		t.Errorf("env: %v", err)
	}
	if err := s.ReadCommandLine(b.FlagSet, []string{"--interval=1s"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckEnv(b.FlagSet); err != nil {
		t.Errorf("env overridden by the command line: %v", err)
	}
	if err := s.CheckCommandLineOnlyEnv(); err != nil {
		t.Errorf("no TEST_YES: %v", err)
	}
	t.Setenv("TEST_YES", "1")
	if err := s.CheckCommandLineOnlyEnv(); err == nil || !strings.Contains(err.Error(), "unset TEST_YES") {
		t.Errorf("TEST_YES: %v", err)
	}
}

// The config file: another command's flag is skipped, an unknown one, a
// CommandLineOnly one, a bad value and a long line are errors naming the
// line.
func TestConfigFileLines(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"interval 1s\n--kind tmux\n", ""},
		{"kind tmux\nbogus 1\n", `line 2: unknown flag "bogus"`},
		{"yes\n", "line 1 sets yes, which is taken from the command line only"},
		{"config other\n", "line 1 sets config"},
		{"\n\ninterval soon\n", `line 3: interval "soon": want a duration`},
		{strings.Repeat("#", maxConfigLineBytes+1) + "\n", "line 1 is 16386 bytes, over the 16384-byte limit"},
	} {
		_, root := testSources(t)
		err := root.Parse([]string{"b", "--config", writeFile(t, tt.text)})
		switch {
		case err == nil && tt.want != "":
			t.Errorf("%.40q: no error; want %q", tt.text, tt.want)
		case err != nil && (tt.want == "" || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%.40q: %v; want %q", tt.text, err, tt.want)
		}
	}
}
