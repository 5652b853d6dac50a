//go:build linux

package cmdline

import (
	"errors"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// values.go holds flag values of the kinds the flag package lacks.

// StringList is a repeatable string flag: each use adds one item.
type StringList []string

func (l *StringList) String() string { return strings.Join(*l, ",") }
func (l *StringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// CommaList is a string flag of comma-separated items, each use adding
// its items to the list (SplitList).
type CommaList []string

func (l *CommaList) String() string { return strings.Join(*l, ",") }
func (l *CommaList) Set(v string) error {
	*l = append(*l, SplitList(v)...)
	return nil
}

// DurationText is a duration flag kept as text, for options that parse it
// later (session.Options.Config). Get's type lets CheckValue say what a
// bad value should be.
type DurationText string

func (d *DurationText) String() string     { return string(*d) }
func (d *DurationText) Set(v string) error { *d = DurationText(v); return nil }
func (d *DurationText) Get() any           { return time.Duration(0) }

// Size is a flag of a size in bytes, as procwalk.ParseBytes reads it
// (256MiB, 2G, 1.5GiB), refused below Min or above Max (0: no bound).
// Its text stays as given: --help's default, and what messages quote.
type Size struct {
	p        *uint64
	min, max uint64
	want     string
	text     string
	// optional is set for a size with no default: "" sets it back to
	// none (zero), as an explicit --max-rss "" always did.
	optional bool
}

// NewSize is a Size flag setting *p, def's size to start with, from min
// to max (0: no bound); want says what it accepts when a value is
// refused: "a size of at least 1MiB, such as 256MiB". def "" leaves *p
// alone, for a flag whose zero means none (guard --max-rss): --help then
// shows no default, and the value "" means none.
func NewSize(p *uint64, def string, min, max uint64, want string) *Size {
	s := &Size{p: p, min: min, max: max, want: want, optional: def == ""}
	if def != "" && s.Set(def) != nil {
		panic("cmdline: the default size " + def + " is refused: " + want) // a declaration's mistake
	}
	return s
}

func (s *Size) String() string {
	if s == nil {
		return "" // the flag package's zero value, for its own checks
	}
	return s.text
}

func (s *Size) Set(v string) error {
	if want := s.Wants(v); want != "" {
		return errors.New("want " + want)
	}
	*s.p, _ = procwalk.ParseBytes(v) // "" of an optional size: 0
	s.text = v
	return nil
}

// Wants is what s accepts when v is refused, "" when v is accepted
// (CheckValue).
func (s *Size) Wants(v string) string {
	if v == "" && s.optional {
		return ""
	}
	n, err := procwalk.ParseBytes(v)
	switch {
	case err != nil:
		return s.want + sizeProblem(err)
	case n < s.min || s.max > 0 && n > s.max:
		return s.want
	}
	return ""
}

// sizeProblem is what ParseBytes found wrong (its SizeError), in brackets, when it
// says more than a Size's want does (an unknown unit, a size too large):
// " (unknown unit \"X\")"; "" otherwise.
func sizeProblem(err error) string {
	var se *procwalk.SizeError
	if !errors.As(err, &se) || se.Reason == "" {
		return "" // the want has examples, as the error's hint
	}
	return " (" + se.Reason + ")"
}

// Meta is a size's name in --help.
func (s *Size) Meta() string { return "SIZE" }

// SplitList splits a comma-separated flag value, dropping empty items and
// the spaces around each.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
