//go:build linux

package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
)

// config.go reads the --config file: ff's PlainParser format, one
// "flag value" a line ("pss" alone means "pss true"), '#' starts a comment.
// Every command reads the same file, so a line may name any command's flag.

const (
	// maxConfigLineBytes keeps lines well under bufio.MaxScanTokenSize
	// (64 KiB): PlainParser's scanner stops at a longer line without an
	// error, silently dropping the rest of the file.
	maxConfigLineBytes = 16 << 10
	// maxConfigBytes bounds the whole file: a config is a few dozen lines.
	maxConfigBytes = 1 << 20
)

// addConfigFileOptions gives every command below root the config file
// parser. A line for another command's flag is skipped; a line naming no
// command's flag is an error, so a typo never silently does nothing. The
// parser records in sources the file and line each flag was read from.
func addConfigFileOptions(root *ffcli.Command, sources *flagSources) {
	known := make(map[string]bool)
	var collect func(c *ffcli.Command)
	collect = func(c *ffcli.Command) {
		c.FlagSet.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
		for _, sub := range c.Subcommands {
			collect(sub)
		}
	}
	collect(root)
	var add func(c *ffcli.Command)
	add = func(c *ffcli.Command) {
		for _, sub := range c.Subcommands {
			sub.Options = append(sub.Options, ff.WithIgnoreUndefined(true), ff.WithConfigFileParser(configParser(known, sub.FlagSet, sources)))
			add(sub)
		}
	}
	add(root)
}

// commandLineOnly reports whether flag name switches off a kill's safety
// (--yes: the confirmation, --force: the protected list): such a flag is
// taken from each command line alone, never from env or a config file
// shared by every run.
func commandLineOnly(name string) bool { return name == "yes" || name == "force" }

// checkCommandLineOnlyEnv refuses PROCWALK_YES and PROCWALK_FORCE, which ff
// would otherwise read like any flag's env var.
func checkCommandLineOnlyEnv() error {
	for _, name := range []string{"yes", "force"} {
		env := "PROCWALK_" + strings.ToUpper(name)
		if v, ok := os.LookupEnv(env); ok {
			return usageErrorf("%s=%q is not read: --%s switches off a kill's safety and is taken from the command line only; unset %s", env, v, name, env)
		}
	}
	return nil
}

// configParser is ff.PlainParser with the file's size and line lengths
// bounded, its flag names checked against known, the values of fs's flags
// checked, and each error naming the file and the line.
func configParser(known map[string]bool, fs *flag.FlagSet, sources *flagSources) ff.ConfigFileParser {
	return func(r io.Reader, set func(name, value string) error) error {
		path := "(config)"
		if f, ok := r.(interface{ Name() string }); ok {
			path = f.Name()
		}
		b, err := io.ReadAll(io.LimitReader(r, maxConfigBytes+1))
		if err != nil {
			return fmt.Errorf("reading config file %s: %w", path, err)
		}
		if len(b) > maxConfigBytes {
			return fmt.Errorf("config file %s is over %d bytes: is it the right file?", path, maxConfigBytes)
		}
		lineNo := 0
		for line := range bytes.Lines(b) {
			lineNo++
			at := fmt.Sprintf("config file %s line %d", path, lineNo)
			if len(line) > maxConfigLineBytes {
				return fmt.Errorf("%s is %d bytes, over the %d-byte limit: shorten it", at, len(line), maxConfigLineBytes)
			}
			name, value, ok := cmdline.PlainLine(string(line))
			if !ok {
				continue
			}
			name = strings.TrimLeft(name, "-") // "--pss" and "pss" both work
			switch {
			case name == "config":
				return fmt.Errorf("%s sets config: a config file cannot name another one", at)
			case commandLineOnly(name):
				return fmt.Errorf("%s sets %s, which is taken from the command line only (it switches off a kill's safety for every run): remove the line", at, name)
			case !known[name]:
				return fmt.Errorf("%s: unknown flag %q: no procwalk command has it (see procwalk <command> --help)", at, name)
			}
			if f := fs.Lookup(name); f != nil {
				if want := cmdline.CheckValue(f, value); want != "" {
					return fmt.Errorf("%s: %s %q: want %s", at, name, value, want)
				}
			}
			if err := set(name, value); err != nil {
				return fmt.Errorf("%s: %s %q: %w", at, name, value, err)
			}
			sources.config[name] = at
		}
		return nil
	}
}

// flagSources says where each flag's value came from, for an error about
// a bad value: the command line (named --NAME), an env var, or a line of
// the config file.
type flagSources struct {
	commandLine map[string]bool
	config      map[string]string // flag -> "config file F line N"
}

func newFlagSources() *flagSources {
	return &flagSources{commandLine: map[string]bool{}, config: map[string]string{}}
}

// flagAlias is the other name of a flag that has one: telegraf's
// --session-kinds (after Telegraf's session_kinds option) is --kind, as
// for sessions and top.
func flagAlias(name string) string {
	if name == "kind" {
		return "session-kinds"
	}
	return ""
}

// envVar is the env var that sets flag name, as ff maps it.
func envVar(name string) string {
	return "PROCWALK_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(name))
}

// of names where flag name's value came from: "" for the command line or
// a default, else the env var or the config file's line.
func (s *flagSources) of(name string) string {
	if alias := flagAlias(name); alias != "" {
		name = cmp.Or(s.winner(name, alias), name)
	}
	if s.commandLine[name] {
		return ""
	}
	if env := envVar(name); os.Getenv(env) != "" {
		return env
	}
	return s.config[name]
}

// winner is the one of names, each a flag setting the same thing (a flag
// and its aliases), whose value counts: set on the command line, else by
// its env var, else in the config file, the first name first within each;
// "" when none was set (the default). ff applies each name's env var and
// config line alone, so an alias's env var would otherwise override the
// flag given on the command line. Nil s (no run) is the first name.
func (s *flagSources) winner(names ...string) string {
	if s == nil {
		return names[0]
	}
	for _, set := range []func(string) bool{
		func(n string) bool { return s.commandLine[n] },
		func(n string) bool { return os.Getenv(envVar(n)) != "" },
		func(n string) bool { return s.config[n] != "" },
	} {
		for _, n := range names {
			if set(n) {
				return n
			}
		}
	}
	return ""
}

// readCommandLine records the flags of fs that args set, up to "--", and
// checks their values as checkValue does: "--interval "soon": want a
// duration such as 10s", not the flag package's "parse error".
func (s *flagSources) readCommandLine(fs *flag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		s.commandLine[name] = true
		if !inline && cmdline.IsBoolFlag(f) {
			continue
		}
		if !inline {
			if i+1 == len(args) {
				return nil // the parse says the value is missing
			}
			i++
			value = args[i]
		}
		if want := cmdline.CheckValue(f, value); want != "" {
			return usageErrorf("--%s %q: want %s", name, value, want)
		}
	}
	return nil
}

// checkEnv checks the PROCWALK_* values of fs's flags not set on the
// command line, naming the variable and its value when one is bad (ff
// would say only "parse error").
func (s *flagSources) checkEnv(fs *flag.FlagSet) error {
	var bad error
	fs.VisitAll(func(f *flag.Flag) {
		env := envVar(f.Name)
		v := os.Getenv(env)
		if bad != nil || s.commandLine[f.Name] || v == "" {
			return
		}
		if want := cmdline.CheckValue(f, v); want != "" {
			bad = usageErrorf("%s=%q: --%s wants %s; fix or unset %s", env, v, f.Name, want, env)
		}
	})
	return bad
}

// named rewrites a usage error about flag's value (exitErr.Flag) that came
// from env or the config file to name that source instead of --flag:
// "config file F line 3: kind "bogus": ...", "PROCWALK_KIND: kind ...".
func (s *flagSources) named(err error) error {
	var ee *exitErr
	if !errors.As(err, &ee) || ee.Flag == "" || ee.Err == nil {
		return err
	}
	src := s.of(ee.Flag)
	if src == "" {
		return err
	}
	return &exitErr{Code: ee.Code, Err: fmt.Errorf("%s: %s", src, strings.TrimPrefix(ee.Err.Error(), "--"))}
}
