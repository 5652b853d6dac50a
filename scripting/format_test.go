//go:build linux

package scripting

import (
	"errors"
	"strings"
	"testing"
)

// TestFormatMatchesLua51 compares string.format with the output of the
// reference interpreter, lua5.1, for the same calls.
func TestFormatMatchesLua51(t *testing.T) {
	w := newWorld(t)
	got := w.eval(t, `for _, c in ipairs {
  {"%s|%5.2s|%-4s|%.0s|", "abc", "xyz", "ab", "gone"},
  {"%q", "a\n\"b\\\r\0z"},
  {"%d %i %5d|%-5d|%05d|%+d", 42, -7, 3, 3, 42, 5},
  {"%x %X %#x %o %u", 255, 255, 255, 8, 7},
  {"%x", -1},
  {"%d", 3.7},
  {"%d", "12"},
  {"%g %g %g %g %G", 1/3, 1e20, 0.0001, 100000, 1e-10},
  {"%.3g|%10.4f|%-10.2e|%+.1E", 2/3, math.pi, 12345.678, 0.5},
  {"%c%c%c", 76, 117, 97},
  {"%5c|", 65},
  {"100%% %s", "sure"},
  {"%s %s", 1, 2.5},
  {"%.2f|%5.1f|%-6e|%+g|%G|%f|%E", 1/0, -1/0, 1/0, 1/0, 1/0, 0/0, -(0/0)},
} do print(string.format(unpack(c))) end`)
	want := "abc|   xy|ab  ||\n" +
		"\"a\\\n\\\"b\\\\\\r\\000z\"\n" +
		"42 -7     3|3    |00042|+5\n" +
		"ff FF 0xff 10 7\n" +
		"ffffffffffffffff\n" +
		"3\n" +
		"12\n" +
		"0.333333 1e+20 0.0001 100000 1E-10\n" +
		"0.667|    3.1416|1.23e+04  |+5.0E-01\n" +
		"Lua\n" +
		"    A|\n" +
		"100% sure\n" +
		"1 2.5\n" +
		"inf| -inf|inf   |+inf|INF|-nan|NAN"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// %s takes any value through tostring, as Lua 5.2 does.
	if got := w.eval(t, `print(string.format("%s, %s", pw.process(1), nil))`); got != "process 1 (systemd), nil" {
		t.Errorf("%%s of a process and nil: %q", got)
	}
}

func TestFormatErrors(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{`string.format("%d")`, "bad argument #2 to format (number expected, got no value)"},
		{`string.format("%s %s", 1)`, "bad argument #3 to format (string expected, got no value)"},
		{`string.format("%d", "x")`, "bad argument #2 to format (number expected, got string)"},
		{`string.format("%q", {})`, "bad argument #2 to format (string expected, got table)"},
		{`string.format("%100d", 1)`, "invalid format (width or precision too long)"},
		{`string.format("%.100f", 1)`, "invalid format (width or precision too long)"},
		{`string.format("%------d", 1)`, "invalid format (repeated flags)"},
		{`string.format("%T", 1)`, "invalid option '%T'"},
		{`string.format("%p", {})`, "invalid option '%p'"},
		{`string.format("50%")`, "invalid option '%' at the end of the format"},
	} {
		_, err := run(t, w.cfg, "fmt.lua", c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "fmt.lua:1:") {
			t.Errorf("%s: got %v, want an error at fmt.lua:1 with %q", c.src, err, c.want)
		}
	}
}
