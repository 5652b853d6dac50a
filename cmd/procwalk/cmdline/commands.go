//go:build linux

package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/procwalk/suggest"
)

// commands.go finds the command a command line names, with the global
// flags written anywhere: before the command's name, after it, or
// (for a command that takes them so) after its arguments.

// Program is procwalk's command tree, as its command line reads it.
type Program struct {
	Root *ffcli.Command
	// Default is the command run when none is named.
	Default string
	// Globals registers the flags every command takes, before or after
	// its name.
	Globals func(fs *flag.FlagSet)
	// FlagsAnywhere reports whether a command takes its flags after its
	// arguments too (tree 1 --pss); nil: none does.
	FlagsAnywhere func(command string) bool
}

// Command is Root's command called name, or Root.
func (p Program) Command(name string) *ffcli.Command {
	for _, c := range p.Root.Subcommands {
		if c.Name == name {
			return c
		}
	}
	return p.Root
}

// names reports whether name is a command's name, in any case.
func (p Program) names(name string) bool {
	for _, c := range p.Root.Subcommands {
		if strings.EqualFold(name, c.Name) {
			return true
		}
	}
	return false
}

// Args moves the global flags written before the command name to right
// after it ("--pss tree 1" -> "tree -pss=true 1") and names the default
// command when none is given. The command's single ff.Parse then sees
// every flag and applies flag > env > config file once. (Parsed by two
// flag sets, an env var would override a flag written before the command
// name.) An error is the command line's, said as a person reads it;
// flag.ErrHelp is help asked for.
func (p Program) Args(args []string) ([]string, error) {
	flags := flag.NewFlagSet(p.Root.Name, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	p.Globals(flags)
	if err := NewSources("").ReadCommandLine(flags, args); err != nil {
		return nil, err // a bad value of a global flag, named
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		def := p.Command(p.Default).FlagSet
		given, positional := SplitFlags(def, args)
		if len(positional) == 0 || !p.names(positional[0]) {
			// procwalk --kind tmux (or --kind tree): the default command's
			// own flags, with their values.
			return append(append([]string{p.Default}, given...), positional...), nil
		}
		// procwalk --kind tmux sessions: a command's flag before its name.
		c := p.Command(strings.ToLower(positional[0]))
		for _, f := range given {
			name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
			if strings.HasPrefix(f, "-") && flags.Lookup(name) == nil && c.FlagSet.Lookup(name) != nil {
				return nil, fmt.Errorf("--%s is a flag of %s: write it after the command's name (procwalk %s --%s ...)", name, c.Name, c.Name, name)
			}
		}
		if mean := DidYouMeanFlag(err, def); mean != "" {
			return nil, fmt.Errorf("%s: %s", FlagMessage(err), mean)
		}
		return nil, fmt.Errorf("%s: run 'procwalk --help' for the flags", FlagMessage(err))
	}
	var hoisted []string
	flags.Visit(func(f *flag.Flag) { hoisted = append(hoisted, "-"+f.Name+"="+f.Value.String()) })
	rest := flags.Args()
	name := p.Default
	if len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	for _, c := range p.Root.Subcommands {
		if strings.EqualFold(c.Name, name) {
			if p.FlagsAnywhere != nil && p.FlagsAnywhere(c.Name) {
				rest = FlagsFirst(c.FlagSet, rest)
			}
			return append(append([]string{c.Name}, hoisted...), rest...), nil
		}
	}
	var names []string
	for _, c := range p.Root.Subcommands {
		names = append(names, c.Name)
	}
	if close := suggest.Closest(name, names, 3); len(close) > 0 {
		return nil, fmt.Errorf("unknown command %q: did you mean %s? (procwalk --help lists the commands)", name, strings.Join(close, ", "))
	}
	return nil, fmt.Errorf("unknown command %q: run 'procwalk --help' for the list", name)
}

// ParseError is an error from parsing c's flags, env or the config file
// said so that it tells how to fix it: a config file that cannot be read,
// an unknown flag with the flags closest to it.
func ParseError(err error, c *ffcli.Command) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) && pe.Op == "open" {
		return fmt.Errorf("cannot read config file %s: %v; fix --config or PROCWALK_CONFIG", pe.Path, pe.Err)
	}
	// ff says "error parsing commandline arguments: " before the flag
	// package's own message, which names the flag and the value.
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "error parsing commandline arguments: ") {
		if mean := DidYouMeanFlag(inner, c.FlagSet); mean != "" {
			return fmt.Errorf("%s: %s", FlagMessage(inner), mean)
		}
		return fmt.Errorf("%s: procwalk %s --help lists the flags", FlagMessage(inner), c.Name)
	}
	return err
}
