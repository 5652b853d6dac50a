//go:build linux

package scripting

import (
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// strings.go caps the functions that make strings, which can allocate
// without bound or run for minutes inside one Go call, where neither the
// deadline nor the heap watchdog can stop them:
//   - string.rep("x", 8e9) killed the host with a fatal out-of-memory;
//   - table.concat of a thousand references to one 4 MiB string makes 4 GiB
//     in one call (and gopher-lua's pushed every element on the value
//     stack, so a long list overflowed it);
//   - string.format is our own (format.go);
//   - find, match, gmatch and gsub use our interruptible matcher
//     (pattern.go) instead of gopher-lua's, with bounded subject and
//     pattern sizes; gsub also caps its result (gopher-lua's copies the
//     whole subject once per match).
//
// The string table is also the strings' metatable (("x"):rep(9) looks up
// string.rep), so replacing the functions there covers both paths.

func (r *Runtime) wrapStrings(L *lua.LState) {
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	set := func(name string, fn lua.LGFunction) { str.RawSetString(name, L.NewFunction(fn)) }

	rep := str.RawGetString("rep").(*lua.LFunction).GFunction
	set("rep", func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckInt(2)
		if n > 0 {
			r.checkSize(L, "string.rep", float64(len(s))*float64(n))
		}
		return rep(L)
	})
	// upper and lower may make 3 bytes of each invalid one (U+FFFD), and
	// reverse holds two copies besides its result: checked as a .. is.
	for _, name := range []string{"upper", "lower", "reverse"} {
		fn := str.RawGetString(name).(*lua.LFunction).GFunction
		set(name, func(L *lua.LState) int {
			if n := 3 * len(L.CheckString(1)); n >= concatCheckBytes {
				r.checkAlloc(L, "string."+name+" would make strings of", n)
			}
			return fn(L)
		})
	}
	set("format", r.strFormat)
	set("find", func(L *lua.LState) int { return r.find(L, true) })
	set("match", func(L *lua.LState) int { return r.find(L, false) })
	set("gmatch", r.gmatch)
	set("gsub", r.gsub)
	str.RawSetString("dump", lua.LNil)

	tab := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	tab.RawSetString("concat", L.NewFunction(r.tableConcat))
}

// checkSize raises a limit error when fn would make a string of size bytes.
func (r *Runtime) checkSize(L *lua.LState, fn string, size float64) {
	if size > float64(r.limits.MaxStringBytes) {
		r.limitError(L, "%s: a result of %s is over the %s string limit",
			fn, formatBytes(size), formatBytes(float64(r.limits.MaxStringBytes)))
	}
}

// tableConcat is table.concat(t [, sep [, i [, j]]]) -> string, built in Go
// and capped. Like gopher-lua's, it clamps i and j to the array part.
func (r *Runtime) tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	n := t.Len()
	i, j := L.OptInt(3, 1), L.OptInt(4, n)
	if L.GetTop() == 3 && (i > n || i < 1) {
		L.Push(lua.LString(""))
		return 1
	}
	i, j = max(min(i, n), 1), min(j, n)
	out := &cappedBuilder{r: r, L: L, fn: "table.concat"}
	for k := i; k <= j; k++ {
		v := t.RawGetInt(k)
		if !lua.LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type().String(), k)
		}
		if k > i {
			out.write(sep)
		}
		out.write(lua.LVAsString(v))
	}
	L.Push(lua.LString(out.b.String()))
	return 1
}

// newMatcher checks the sizes and returns a matcher under the run's
// context.
func (r *Runtime) newMatcher(L *lua.LState, fn, subject, pattern string) *matcher {
	if len(subject) > r.limits.MaxPatternInputBytes {
		r.limitError(L, "%s: subject of %s is over the %s pattern input limit; cut it with string.sub, or use string.find(s, text, 1, true) for plain text",
			fn, formatBytes(float64(len(subject))), formatBytes(float64(r.limits.MaxPatternInputBytes)))
	}
	if len(pattern) > r.limits.MaxPatternBytes {
		r.limitError(L, "%s: pattern of %d bytes is over the limit of %d", fn, len(pattern), r.limits.MaxPatternBytes)
	}
	return newMatcher(L.Context(), subject, pattern)
}

// runMatcher runs fn, raising a matcher error in Lua.
func (r *Runtime) runMatcher(L *lua.LState, fn string, m *matcher, body func()) {
	if err := m.run(body); err != nil {
		L.RaiseError("%s: %v", fn, err)
	}
}

// pushCapture pushes one capture value.
func pushCapture(L *lua.LState, c captureValue) {
	if c.position {
		L.Push(lua.LNumber(c.pos))
	} else {
		L.Push(lua.LString(c.s))
	}
}

// startIndex converts Lua's 1-based, possibly negative init to an offset
// in [0, n].
func startIndex(init, n int) int {
	if init < 0 {
		init += n + 1
	}
	return min(max(init-1, 0), n)
}

// find is string.find(s, pattern [, init [, plain]]) -> start, end,
// captures... | nil, and string.match(s, pattern [, init]) -> captures | nil.
func (r *Runtime) find(L *lua.LState, isFind bool) int {
	name := "string.match"
	if isFind {
		name = "string.find"
	}
	src, pat := L.CheckString(1), L.CheckString(2)
	init := startIndex(L.OptInt(3, 1), len(src))
	if isFind && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(pat, "^$*+?.([%-")) {
		i := strings.Index(src[init:], pat) // plain text: a linear search
		if i < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + i + 1))
		L.Push(lua.LNumber(init + i + len(pat)))
		return 2
	}
	m := r.newMatcher(L, name, src, pat)
	var pushed int
	r.runMatcher(L, name, m, func() {
		start, end := m.find(init)
		if start < 0 {
			L.Push(lua.LNil)
			pushed = 1
			return
		}
		if isFind {
			L.Push(lua.LNumber(start + 1))
			L.Push(lua.LNumber(end))
			pushed = 2
			if m.level == 0 {
				return // find returns captures only when there are some
			}
		}
		for _, c := range m.captures(start, end) {
			pushCapture(L, c)
			pushed++
		}
	})
	return pushed
}

// gmatch is string.gmatch(s, pattern) -> iterator over the captures (or
// whole matches) of each successive match.
func (r *Runtime) gmatch(L *lua.LState) int {
	src, pat := L.CheckString(1), L.CheckString(2)
	r.newMatcher(L, "string.gmatch", src, pat) // checks the sizes now
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m := newMatcher(L.Context(), src, pat)
		pushed := 0
		r.runMatcher(L, "string.gmatch", m, func() {
			for ; pos <= len(src); pos++ {
				m.level = 0
				e := m.match(pos, 0)
				if e == -1 {
					continue
				}
				start := pos
				pos = e
				if e == start {
					pos++ // an empty match: move on
				}
				for _, c := range m.captures(start, e) {
					pushCapture(L, c)
					pushed++
				}
				return
			}
		})
		return pushed
	}))
	return 1
}

// gsub is string.gsub(s, pattern, repl [, n]) -> result, matches: repl is a
// string (with %0-%9 and %%), a table indexed by the first capture, or a
// function called with the captures; false or nil keeps the match.
func (r *Runtime) gsub(L *lua.LState) int {
	src, pat := L.CheckString(1), L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LString, lua.LNumber, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected, got "+repl.Type().String())
	}
	limit := len(src) + 1
	if L.Get(4) != lua.LNil {
		limit = L.CheckInt(4)
	}
	m := r.newMatcher(L, "string.gsub", src, pat)
	out := &cappedBuilder{r: r, L: L, fn: "string.gsub"}
	n := 0
	r.runMatcher(L, "string.gsub", m, func() {
		p := 0
		anchor := len(pat) > 0 && pat[0] == '^'
		if anchor {
			p = 1
		}
		s := 0
		for n < limit {
			m.level = 0
			e := m.match(s, p)
			if e != -1 {
				n++
				if !r.replace(out, m, s, e, repl) {
					out.write(src[s:e])
				}
			}
			if e != -1 && e > s {
				s = e
			} else if s < len(src) {
				out.write(src[s : s+1])
				s++
			} else {
				break
			}
			if anchor {
				break
			}
		}
		out.write(src[s:])
	})
	L.Push(lua.LString(out.b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// cappedBuilder builds the result of fn, raising a limit error as soon as
// it would grow past MaxStringBytes.
type cappedBuilder struct {
	r  *Runtime
	L  *lua.LState
	fn string
	b  strings.Builder
}

func (c *cappedBuilder) write(s string) {
	if c.b.Len()+len(s) > c.r.limits.MaxStringBytes {
		c.r.limitError(c.L, "%s: the result grows past the %s string limit", c.fn, formatBytes(float64(c.r.limits.MaxStringBytes)))
	}
	c.b.WriteString(s)
}

// replace writes what replaces the match src[s:e]; false keeps the match.
func (r *Runtime) replace(out *cappedBuilder, m *matcher, s, e int, repl lua.LValue) bool {
	L := out.L
	var v lua.LValue
	switch rv := repl.(type) {
	case lua.LString, lua.LNumber:
		expandReplacement(out, m, s, e, rv.String())
		return true
	case *lua.LTable:
		c := m.captureAt(0, s, e)
		if c.position {
			v = L.GetTable(rv, lua.LNumber(c.pos))
		} else {
			v = L.GetField(rv, c.s)
		}
	case *lua.LFunction:
		caps := m.captures(s, e)
		L.Push(rv)
		for _, c := range caps {
			pushCapture(L, c)
		}
		L.Call(len(caps), 1)
		v = L.Get(-1)
		L.Pop(1)
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return false
	case lua.LBool:
		if !bool(v) {
			return false
		}
	case lua.LString, lua.LNumber:
		out.write(v.String())
		return true
	}
	L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	return false
}

// expandReplacement writes repl with %0-%9 expanded and "%x" as x.
func expandReplacement(out *cappedBuilder, m *matcher, s, e int, repl string) {
	for i := 0; i < len(repl); i++ {
		j := strings.IndexByte(repl[i:], '%')
		if j < 0 || i+j+1 == len(repl) {
			out.write(repl[i:])
			return
		}
		out.write(repl[i : i+j])
		i += j + 1
		switch d := repl[i]; {
		case d == '0':
			out.write(m.src[s:e])
		case d >= '1' && d <= '9':
			c := m.captureAt(int(d-'1'), s, e)
			if c.position {
				out.write(lua.LNumber(c.pos).String())
			} else {
				out.write(c.s)
			}
		default:
			out.write(repl[i : i+1]) // Lua 5.1: "%x" is x, so "%%" is "%"
		}
	}
}
