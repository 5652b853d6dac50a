package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
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
// command's flag is an error, so a typo never silently does nothing.
func addConfigFileOptions(root *ffcli.Command) {
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
			sub.Options = append(sub.Options, ff.WithIgnoreUndefined(true), ff.WithConfigFileParser(configParser(known)))
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
// bounded and its flag names checked against known.
func configParser(known map[string]bool) ff.ConfigFileParser {
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
			if len(line) > maxConfigLineBytes {
				return fmt.Errorf("config file %s: line %d is %d bytes, over the %d-byte limit: shorten it", path, lineNo, len(line), maxConfigLineBytes)
			}
		}
		return ff.PlainParser(bytes.NewReader(b), func(name, value string) error {
			name = strings.TrimLeft(name, "-") // "--pss" and "pss" both work
			switch {
			case name == "config":
				return fmt.Errorf("config file %s sets config: a config file cannot name another one", path)
			case commandLineOnly(name):
				return fmt.Errorf("config file %s sets %s, which is taken from the command line only (it switches off a kill's safety for every run): remove the line", path, name)
			case !known[name]:
				return fmt.Errorf("config file %s: unknown flag %q: no procwalk command has it (see procwalk <command> --help)", path, name)
			}
			if err := set(name, value); err != nil {
				return fmt.Errorf("config file %s: bad line %q: %w", path, name+" "+value, err)
			}
			return nil
		})
	}
}
