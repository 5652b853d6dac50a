//go:build linux

package cmdline

import (
	"errors"
	"io/fs"
	"testing"
)

// A usage error knows its exit code and the flag it is about, from the
// "--NAME" its message starts with, and keeps what it wraps.
func TestUsagef(t *testing.T) {
	for _, tt := range []struct {
		err        error
		flag, text string
	}{
		{Usagef("--max-size %q: want more", "1"), "max-size", `--max-size "1": want more`},
		{Usagef("--kind: %w", fs.ErrNotExist), "kind", "--kind: file does not exist"},
		{Usagef("--x2 is it"), "x2", "--x2 is it"},
		{Usagef("ps takes no arguments"), "", "ps takes no arguments"},
		{UsageError(errors.New("--proc /nowhere: no such root")), "proc", "--proc /nowhere: no such root"},
	} {
		var e *Error
		if !errors.As(tt.err, &e) || e.Code != ExitUsage || e.Flag != tt.flag || e.Error() != tt.text {
			t.Errorf("%v: %+v; want code 2, flag %q", tt.err, e, tt.flag)
		}
	}
	if err := Usagef("--kind: %w", fs.ErrNotExist); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not wrap fs.ErrNotExist", err)
	}
	if got := (&Error{Code: 124}).Error(); got != "exit status 124" {
		t.Errorf("an error already said: %q", got)
	}
}

// Rename names the env var a bad value came from; a value from the
// command line, an error about no flag and other errors stay as they are.
func TestSourcesRename(t *testing.T) {
	s, root := testSources(t)
	b := root.Subcommands[1]
	t.Setenv("TEST_INTERVAL", "2s")
	if err := s.ReadCommandLine(b.FlagSet, nil); err != nil {
		t.Fatal(err)
	}
	if err := root.Parse([]string{"b"}); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := s.Rename(Usagef("--interval %v: too long", "2s")); !errors.As(err, &e) || e.Code != ExitUsage || err.Error() != "TEST_INTERVAL: interval 2s: too long" {
		t.Errorf("from env: %v", err)
	}
	for _, err := range []error{Usagef("--kind: bad"), Usagef("b takes no arguments"), errors.New("--interval: not ours"), &Error{Code: 1, Flag: "interval"}} {
		if got := s.Rename(err); got != err {
			t.Errorf("Rename(%v) = %v; want it unchanged", err, got)
		}
	}
}
