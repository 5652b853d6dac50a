//go:build linux

package scripting

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// format.go is string.format with Lua 5.1's rules. gopher-lua hands the
// format and the Lua values to Go's fmt.Sprintf, so "%d" of a table printed
// the table's Go structure, every element included (a table of a thousand
// 4 MiB strings made gigabytes in one uninterruptible call), "%c" of a
// process object dumped the globals, and "%v", "%T", "%p" worked. Here each
// directive is checked and given a plain Go number or string, and the
// result is capped at MaxStringBytes.

// luaFormatFlags are the flags Lua 5.1 accepts; more than five is an error.
const luaFormatFlags = "-+ #0"

// formatSpec is one directive: "%" flags width [.precision] verb.
type formatSpec struct {
	flags, width, precision string // precision includes its '.'
	verb                    byte
}

// parseFormatSpec reads the directive after the '%' at f[0:] and returns it
// and its length, or an error message.
func parseFormatSpec(f string) (formatSpec, int, string) {
	var s formatSpec
	i := 0
	for i < len(f) && strings.IndexByte(luaFormatFlags, f[i]) >= 0 {
		i++
	}
	if i > len(luaFormatFlags) {
		return s, 0, "invalid format (repeated flags)"
	}
	s.flags = f[:i]
	w := i
	for i < len(f) && isDigit(f[i]) {
		i++
	}
	s.width = f[w:i]
	if i < len(f) && f[i] == '.' {
		p := i
		i++
		for i < len(f) && isDigit(f[i]) {
			i++
		}
		s.precision = f[p:i]
	}
	if len(s.width) > 2 || len(s.precision) > 3 {
		return s, 0, "invalid format (width or precision too long)"
	}
	if i == len(f) {
		return s, 0, "invalid option '%' at the end of the format"
	}
	s.verb = f[i]
	return s, i + 1, ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// goFormat is the directive as a Go format with verb.
func (s formatSpec) goFormat(verb byte) string {
	return "%" + s.flags + s.width + s.precision + string(verb)
}

// strFormat is string.format(fmt, ...) -> string.
func (r *Runtime) strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	out := &cappedBuilder{r: r, L: L, fn: "string.format"}
	arg := 1
	for i := 0; i < len(f); i++ {
		j := strings.IndexByte(f[i:], '%')
		if j < 0 {
			out.write(f[i:])
			break
		}
		out.write(f[i : i+j])
		i += j + 1
		if i < len(f) && f[i] == '%' {
			out.write("%")
			continue
		}
		spec, n, msg := parseFormatSpec(f[i:])
		if msg != "" {
			L.ArgError(1, msg)
		}
		i += n - 1
		arg++
		formatOne(L, out, spec, arg)
	}
	L.Push(lua.LString(out.b.String()))
	return 1
}

// luaFormatVerbs are the conversions Lua 5.1 knows.
const luaFormatVerbs = "cdiouxXeEfgGqs"

// formatOne writes argument n formatted by spec.
func formatOne(L *lua.LState, out *cappedBuilder, spec formatSpec, n int) {
	if strings.IndexByte(luaFormatVerbs, spec.verb) < 0 {
		L.ArgError(1, fmt.Sprintf("invalid option '%%%c'", spec.verb))
	}
	if n > L.GetTop() {
		want := "number"
		if spec.verb == 's' || spec.verb == 'q' {
			want = "string"
		}
		L.ArgError(n, want+" expected, got no value")
	}
	switch spec.verb {
	case 'd', 'i':
		out.write(fmt.Sprintf(spec.goFormat('d'), int64(L.CheckNumber(n))))
	case 'u':
		out.write(fmt.Sprintf(spec.goFormat('d'), uint64(int64(L.CheckNumber(n)))))
	case 'o', 'x', 'X':
		out.write(fmt.Sprintf(spec.goFormat(spec.verb), uint64(int64(L.CheckNumber(n)))))
	case 'e', 'E', 'f', 'g', 'G':
		x := float64(L.CheckNumber(n))
		switch {
		case math.IsInf(x, 0) || math.IsNaN(x):
			padBytes(out, spec, nonFinite(spec, x))
		case spec.precision == "" && (spec.verb == 'g' || spec.verb == 'G'):
			spec.precision = ".6" // C's default; Go's is the shortest exact form
			fallthrough
		default:
			out.write(fmt.Sprintf(spec.goFormat(spec.verb), x))
		}
	case 'c':
		padBytes(out, spec, string([]byte{byte(L.CheckInt(n))}))
	case 's':
		s := L.ToStringMeta(L.Get(n)).String()
		if spec.precision != "" {
			p, _ := strconv.Atoi(spec.precision[1:]) // "%.s" is 0, as in C
			s = s[:min(p, len(s))]
		}
		padBytes(out, spec, s)
	case 'q':
		quoteLua(out, L.CheckString(n))
	}
}

// nonFinite is C's text for an infinity or NaN: "inf", "-nan", with the
// sign flags, upper case for %E and %G (Go writes "+Inf" and "NaN").
func nonFinite(spec formatSpec, x float64) string {
	s := "inf"
	if math.IsNaN(x) {
		s = "nan"
	}
	switch {
	case math.Signbit(x):
		s = "-" + s
	case strings.Contains(spec.flags, "+"):
		s = "+" + s
	case strings.Contains(spec.flags, " "):
		s = " " + s
	}
	if spec.verb == 'E' || spec.verb == 'G' {
		s = strings.ToUpper(s)
	}
	return s
}

// padBytes writes s padded with spaces to the directive's width, counted in
// bytes as C does ('-' pads on the right).
func padBytes(out *cappedBuilder, spec formatSpec, s string) {
	width, _ := strconv.Atoi(spec.width)
	pad := strings.Repeat(" ", max(width-len(s), 0))
	if strings.Contains(spec.flags, "-") {
		out.write(s)
		out.write(pad)
		return
	}
	out.write(pad)
	out.write(s)
}

// quoteLua writes s as Lua 5.1's %q does: between double quotes, with ",
// \ and newline escaped by a backslash, \r as \r and NUL as \000.
func quoteLua(out *cappedBuilder, s string) {
	out.write(`"`)
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '"', '\\', '\n':
			esc = "\\" + s[i:i+1]
		case '\r':
			esc = `\r`
		case 0:
			esc = `\000`
		default:
			continue
		}
		out.write(s[start:i])
		out.write(esc)
		start = i + 1
	}
	out.write(s[start:])
	out.write(`"`)
}
