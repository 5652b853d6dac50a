//go:build linux

package cmdline

import (
	"errors"
	"flag"
	"slices"
	"strings"
)

// spec.go declares flags that say what their value is: its name in
// --help (--view MODE), the values that complete it, whether it is a
// path, and whether only those values are accepted. --help, the
// completer and the value checks (CheckValue: command line, env, config
// file) read it from the flag itself, so that no list of flag names is
// kept beside the declarations.

// Spec describes a flag's value.
type Spec struct {
	// Meta is the value's name in --help: MODE, KEY, FILE. It wins over
	// a `word` of the usage. "" in a String flag: TEXT.
	Meta string
	// Choices are the values that complete it (nil: none of its own),
	// called when they are needed.
	Choices func() []string
	// List: the value is a comma-separated list of Choices, each item
	// completing on its own.
	List bool
	// Strict: only Choices are accepted (each item of a List): any
	// other value is refused with the choices listed.
	Strict bool
	// Files: the value is a path: the shell completes file names.
	Files bool
	// Usage builds the flag's usage when it is shown (--help, man,
	// completion) in place of the one given at registration: for a
	// usage that lists a catalogue, which every run would otherwise
	// build (FlagUsage).
	Usage func() string
}

// Path is the Spec of a file's or a folder's name, called meta in --help
// (FILE, DIR): the shells complete file names.
func Path(meta string) Spec { return Spec{Meta: meta, Files: true} }

// Words is Choices for a fixed set of values.
func Words(values ...string) func() []string {
	return func() []string { return values }
}

// Var defines flag name on fs with value v, described by s.
func (s Spec) Var(fs *flag.FlagSet, v flag.Value, name, usage string) {
	fs.Var(&specValue{Value: v, spec: s}, name, usage)
}

// String defines a string flag with default value, as fs.StringVar
// does, described by s.
func (s Spec) String(fs *flag.FlagSet, p *string, name, value, usage string) {
	if s.Meta == "" {
		s.Meta = "TEXT" // what --help calls a plain string's value
	}
	*p = value
	s.Var(fs, (*stringValue)(p), name, usage)
}

// SpecOf is the Spec f was declared with; ok false for a flag declared
// without one.
func SpecOf(f *flag.Flag) (s Spec, ok bool) {
	v, ok := f.Value.(*specValue)
	if !ok {
		return Spec{}, false
	}
	return v.spec, true
}

// FlagUsage is f's usage as shown: its Spec's Usage when it has one,
// else the usage it was registered with.
func FlagUsage(f *flag.Flag) string {
	if s, ok := SpecOf(f); ok && s.Usage != nil {
		return s.Usage()
	}
	return f.Usage
}

// Wants is what v's Spec accepts when value is refused ("tree or
// biggest"), "" when value is accepted (CheckValue).
func (v *specValue) Wants(value string) string { return v.spec.want(value) }

// Meta is the value's name in --help ("": as its type says).
func (v *specValue) Meta() string { return v.spec.Meta }

// want is what s accepts when value is refused ("tree or biggest"), ""
// when value is accepted.
func (s Spec) want(value string) string {
	if !s.Strict || s.Choices == nil {
		return ""
	}
	choices := s.Choices()
	items := []string{value}
	if s.List {
		items = SplitList(value)
	}
	for _, item := range items {
		if !slices.Contains(choices, item) {
			return JoinOr(choices)
		}
	}
	return ""
}

// JoinOr is "a, b or c".
func JoinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// specValue is a flag's value with its Spec.
type specValue struct {
	flag.Value
	spec Spec
}

// Set refuses what the Spec does not accept; CheckValue says so first,
// naming where the value came from.
func (v *specValue) Set(s string) error {
	if want := v.spec.want(s); want != "" {
		return errors.New("want " + want)
	}
	return v.Value.Set(s)
}

// String is the value's; "" for the zero specValue that flag.PrintDefaults
// makes to learn a flag's zero default.
func (v *specValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

// Get is the value's own (flag.Getter), for CheckValue: a duration's
// Spec keeps its check.
func (v *specValue) Get() any {
	if g, ok := v.Value.(flag.Getter); ok {
		return g.Get()
	}
	return v.Value.String()
}

// stringValue is a plain string flag's value.
type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
