//go:build linux

package cmdline

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// sources.go says where each flag's value came from (the command line,
// an env var, a line of the config file), so that an error about a bad
// value names the place to fix, and reads the --config file: ff's
// PlainParser format, one "flag value" a line ("pss" alone means "pss
// true"), '#' starts a comment. Every command reads the same file, so a
// line may name any command's flag.

const (
	// maxConfigLineBytes keeps lines well under bufio.MaxScanTokenSize
	// (64 KiB): PlainParser's scanner stops at a longer line without an
	// error, silently dropping the rest of the file.
	maxConfigLineBytes = 16 << 10
	// maxConfigBytes bounds the whole file: a config is a few dozen lines.
	maxConfigBytes = 1 << 20
)

// Sources records where each flag's value came from during one run.
type Sources struct {
	// EnvPrefix is ff's env var prefix: flag "no-rates" is
	// EnvPrefix_NO_RATES.
	EnvPrefix string
	// Alias is the other name of a flag that has one ("" none): both
	// set the same thing, and Of names the one whose value counts.
	Alias func(name string) string
	// CommandLineOnly are the flags that switch off a safety (a kill's
	// confirmation, its protected list): taken from each command line
	// alone, never from env or a config file shared by every run.
	CommandLineOnly []string

	commandLine map[string]bool
	config      map[string]string // flag -> "config file F line N"
}

// NewSources returns empty Sources for flags whose env vars start with
// envPrefix.
func NewSources(envPrefix string) *Sources {
	return &Sources{EnvPrefix: envPrefix, commandLine: map[string]bool{}, config: map[string]string{}}
}

// EnvVar is the env var that sets flag name, as ff maps it.
func (s *Sources) EnvVar(name string) string {
	return s.EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(name))
}

// Of names where flag name's value came from: "" for the command line or
// a default, else the env var or the config file's line.
func (s *Sources) Of(name string) string {
	if s.Alias != nil {
		if alias := s.Alias(name); alias != "" {
			name = cmp.Or(s.Winner(name, alias), name)
		}
	}
	if s.commandLine[name] {
		return ""
	}
	if env := s.EnvVar(name); os.Getenv(env) != "" {
		return env
	}
	return s.config[name]
}

// Mention is how an error about one flag's value names another flag that
// conflicts with it, set to value ("" for a bool flag): "--name value"
// when the value came from the command line (or is the default),
// "ENV=value" from an env var, "name value (config file F line N)" from
// the config file, so that the message says what to drop or change. Nil s
// (no run) is the command line's.
func (s *Sources) Mention(name, value string) string {
	var src string
	if s != nil {
		if s.Alias != nil {
			if alias := s.Alias(name); alias != "" {
				name = cmp.Or(s.Winner(name, alias), name)
			}
		}
		src = s.Of(name)
	}
	switch {
	case src == "" && value == "":
		return "--" + name
	case src == "":
		return "--" + name + " " + value
	case src == s.EnvVar(name) && value == "":
		return src
	case src == s.EnvVar(name):
		return src + "=" + value
	case value == "":
		return name + " (" + src + ")"
	}
	return name + " " + value + " (" + src + ")"
}

// Winner is the one of names, each a flag setting the same thing (a flag
// and its aliases), whose value counts: set on the command line, else by
// its env var, else in the config file, the first name first within each;
// "" when none was set (the default). ff applies each name's env var and
// config line alone, so an alias's env var would otherwise override the
// flag given on the command line. Nil s (no run) is the first name.
func (s *Sources) Winner(names ...string) string {
	if s == nil {
		return names[0]
	}
	for _, set := range []func(string) bool{
		func(n string) bool { return s.commandLine[n] },
		func(n string) bool { return os.Getenv(s.EnvVar(n)) != "" },
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

// ReadCommandLine records the flags of fs that args set, up to "--", and
// checks their values as CheckValue does: `--interval "soon": want a
// duration such as 10s`, not the flag package's "parse error".
func (s *Sources) ReadCommandLine(fs *flag.FlagSet, args []string) error {
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
		if !inline && IsBoolFlag(f) {
			continue
		}
		if !inline {
			if i+1 == len(args) {
				return nil // the parse says the value is missing
			}
			i++
			value = args[i]
		}
		if want := CheckValue(f, value); want != "" {
			return fmt.Errorf("--%s %q: want %s", name, value, want)
		}
	}
	return nil
}

// CheckEnv checks the env values of fs's flags not set on the command
// line, naming the variable and its value when one is bad (ff would say
// only "parse error").
func (s *Sources) CheckEnv(fs *flag.FlagSet) error {
	var bad error
	fs.VisitAll(func(f *flag.Flag) {
		env := s.EnvVar(f.Name)
		v := os.Getenv(env)
		if bad != nil || s.commandLine[f.Name] || v == "" {
			return
		}
		if want := CheckValue(f, v); want != "" {
			bad = fmt.Errorf("%s=%q: --%s wants %s; fix or unset %s", env, v, f.Name, want, env)
		}
	})
	return bad
}

// CheckCommandLineOnlyEnv refuses the env var of a CommandLineOnly flag,
// which ff would otherwise read like any flag's: a command that has such
// a flag calls it.
func (s *Sources) CheckCommandLineOnlyEnv() error {
	for _, name := range s.CommandLineOnly {
		env := s.EnvVar(name)
		if v, ok := os.LookupEnv(env); ok {
			return fmt.Errorf("%s=%q is not read: --%s switches off a kill's safety and is taken from the command line only; unset %s", env, v, name, env)
		}
	}
	return nil
}

// Named is msg, an error message about flag's value that starts with
// "--flag", rewritten to name the env var or the config file's line the
// value came from: "config file F line 3: kind "bogus": ...",
// "PROCWALK_KIND: kind ...". ok is false when the value came from the
// command line (or is the default): msg is right as it is.
func (s *Sources) Named(flag, msg string) (named string, ok bool) {
	src := s.Of(flag)
	if src == "" {
		return msg, false
	}
	return src + ": " + strings.TrimPrefix(msg, "--"), true
}

// AddConfigFileOptions gives every command below root the config file
// parser. A line for another command's flag is skipped; a line naming no
// command's flag is an error, so a typo never silently does nothing. The
// parser records in s the file and line each flag was read from.
func (s *Sources) AddConfigFileOptions(root *ffcli.Command) {
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
			sub.Options = append(sub.Options, ff.WithIgnoreUndefined(true), ff.WithConfigFileParser(s.configParser(known, sub.FlagSet)))
			add(sub)
		}
	}
	add(root)
}

// configParser is ff.PlainParser with the file's size and line lengths
// bounded, its flag names checked against known, the values of fs's flags
// checked, and each error naming the file and the line.
func (s *Sources) configParser(known map[string]bool, fs *flag.FlagSet) ff.ConfigFileParser {
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
			name, value, ok := PlainLine(string(line))
			if !ok {
				continue
			}
			name = strings.TrimLeft(name, "-") // "--pss" and "pss" both work
			switch {
			case name == "config":
				return fmt.Errorf("%s sets config: a config file cannot name another one", at)
			case slices.Contains(s.CommandLineOnly, name):
				return fmt.Errorf("%s sets %s, which is taken from the command line only (it switches off a kill's safety for every run): remove the line", at, name)
			case !known[name]:
				return fmt.Errorf("%s: unknown flag %q: no procwalk command has it (see procwalk <command> --help)", at, name)
			}
			if f := fs.Lookup(name); f != nil {
				if want := CheckValue(f, value); want != "" {
					return fmt.Errorf("%s: %s %q: want %s", at, name, value, want)
				}
			}
			if err := set(name, value); err != nil {
				return fmt.Errorf("%s: %s %q: %w", at, name, value, err)
			}
			s.config[name] = at
		}
		return nil
	}
}
