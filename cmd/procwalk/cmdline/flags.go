//go:build linux

package cmdline

import (
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk/suggest"
)

// flags.go reads flags as procwalk writes them: anywhere among the
// arguments, each error in words a person reads (--x, not -x), with the
// names closest to a mistyped one.

// FlagsFirst moves the flags of fs found among args (with the value of a
// flag that takes one) before the other arguments, keeping both orders.
func FlagsFirst(fs *flag.FlagSet, args []string) []string {
	flags, positional := SplitFlags(fs, args)
	return append(flags, positional...)
}

// SplitFlags parts args into fs's flags (each with its value when it takes
// one) and the other arguments, keeping both orders; "--" ends the flags,
// as for flag.Parse. An unknown flag goes with the flags, for the parse to
// report it by name (tree 1 --bogus); a negative number stays an argument.
func SplitFlags(fs *flag.FlagSet, args []string) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			flags = append(flags, a) // the flag package's own
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			if _, err := strconv.Atoi(a); err == nil {
				positional = append(positional, a)
			} else {
				flags = append(flags, a)
			}
			continue
		}
		flags = append(flags, a)
		if !inline && !IsBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, positional
}

// FlagMessage is the flag package's error as procwalk writes flags:
// "unknown flag --x", "--sort needs a value", "invalid value ... for --x".
func FlagMessage(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "--" + name + " needs a value"
	}
	return strings.Replace(msg, " for flag -", " for --", 1)
}

// DidYouMeanFlag is "did you mean --X?" for the flag package's error about
// an unknown flag, when fs has flags close to it; "" otherwise.
func DidYouMeanFlag(err error, fs *flag.FlagSet) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	close := suggest.Closest(strings.TrimLeft(name, "-"), names, 3)
	if len(close) == 0 {
		return ""
	}
	for i, c := range close {
		close[i] = "--" + c
	}
	return "did you mean " + strings.Join(close, ", ") + "?"
}

// PlainLine reads one line as ff.PlainParser does: "name value", "name"
// alone meaning "name true", " #" starting a comment after the value;
// blank lines and lines starting with '#' hold nothing (ok false).
func PlainLine(line string) (name, value string, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", "", false
	}
	name, value, found := strings.Cut(line, " ")
	if !found {
		return name, "true", true
	}
	value = strings.TrimSpace(value)
	if i := strings.Index(value, " #"); i >= 0 {
		value = strings.TrimSpace(value[:i])
	}
	return name, value, true
}

// CheckValue checks value for flag f as f's Set would. It returns what
// the flag wants when value is bad ("a whole number"), "" when it is good:
// the flag package would say only "parse error".
func CheckValue(f *flag.Flag, value string) (want string) {
	if c, ok := f.Value.(interface{ Wants(string) string }); ok { // Spec, Size
		if want := c.Wants(value); want != "" {
			return want
		}
	}
	getter, ok := f.Value.(flag.Getter)
	if !ok {
		return "" // a list of strings: any value goes
	}
	var err error
	switch getter.Get().(type) {
	case bool:
		_, err = strconv.ParseBool(value)
		want = "true or false"
	case time.Duration:
		_, err = time.ParseDuration(value)
		want = "a duration such as 10s, 500ms or 2m"
	case int:
		_, err = strconv.ParseInt(value, 0, strconv.IntSize)
		want = "a whole number"
	case float64:
		_, err = strconv.ParseFloat(value, 64)
		want = "a number"
	}
	if err != nil {
		return want
	}
	return ""
}

func IsBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// IsSet reports whether flag name of fs was given a value, even its
// default's: on the command line, by its env var or by a line of the
// config file (ff sets all three through fs.Set). A flag whose default
// means "decide for me" (sessions --limit, watch --interval) asks it.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
