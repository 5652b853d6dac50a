//go:build linux

package cmdline

import (
	"strings"
	"time"
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
