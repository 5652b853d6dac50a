//go:build linux

package scripting

import (
	"context"
	"errors"
	"fmt"
)

// pattern.go is a Lua 5.1 pattern matcher (the manual's section 5.4.1) that
// can be interrupted. Lua patterns backtrack: string.find(("a"):rep(1000),
// "(.-)(.-)b") makes about n³ steps and took 31 s in gopher-lua's matcher,
// inside one Go call where the run's deadline cannot reach it (gopher-lua
// #521). This matcher counts its steps and looks at the run's context every
// few thousand, so a hostile pattern ends with the deadline like any loop.

// Capture lengths with a special meaning.
const (
	capUnfinished = -1
	capPosition   = -2
)

// maxCaptures is Lua's LUA_MAXCAPTURES.
const maxCaptures = 32

// maxMatchDepth bounds the matcher's recursion, as Lua 5.2's MAXCCALLS does;
// a real pattern nests a few levels per quantified item.
const maxMatchDepth = 200

// stepsPerCheck is how many steps run between two looks at the context:
// a look costs a channel poll, a step a few nanoseconds.
const stepsPerCheck = 4096

type capture struct{ init, len int }

// matcher matches one pattern against one subject. Errors (malformed
// pattern, interrupted) are raised as panics of type matchError and turned
// into Lua errors by the string functions.
type matcher struct {
	src, pat string
	level    int
	capture  [maxCaptures]capture
	depth    int
	steps    int
	done     <-chan struct{} // the run's context; nil never interrupts
	ctx      context.Context
}

type matchError struct{ err error }

func newMatcher(ctx context.Context, src, pat string) *matcher {
	m := &matcher{src: src, pat: pat, ctx: ctx}
	if ctx != nil {
		m.done = ctx.Done()
	}
	return m
}

// fail stops the match with one of Lua 5.1's own messages.
func (m *matcher) fail(msg string) {
	panic(matchError{errors.New(msg)})
}

// step counts work and stops when the run's context is done.
func (m *matcher) step() {
	m.steps++
	if m.steps%stepsPerCheck != 0 || m.done == nil {
		return
	}
	select {
	case <-m.done:
		panic(matchError{fmt.Errorf("pattern matching stopped after %d steps: %w", m.steps, context.Cause(m.ctx))})
	default:
	}
}

// run calls fn, returning a matcher panic as an error.
func (m *matcher) run(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			me, ok := v.(matchError)
			if !ok {
				panic(v)
			}
			err = me.err
		}
	}()
	fn()
	return nil
}

// classEnd returns the index just past the single-character class at p.
func (m *matcher) classEnd(p int) int {
	c := m.pat[p]
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(m.pat) && m.pat[p] == '^' {
			p++
		}
		for { // the first character, even ']', is part of the set
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' && p < len(m.pat) {
				p++ // an escape such as %]
			}
			if p < len(m.pat) && m.pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchClass reports whether c is in class cl (%a, %d ...; upper case
// negates); any other cl matches itself. Classes are those of the C locale.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 0x20 || c == 0x7f
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || c >= '\t' && c <= '\r'
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || c >= '0' && c <= '9'
	case 'x':
		res = c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'A' && cl <= 'Z' {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isAlpha(c) && !(c >= '0' && c <= '9')
}

// matchSet reports whether c is in the set pat[p:end], p at '[' and end at
// the closing ']'.
func (m *matcher) matchSet(c byte, p, end int) bool {
	want := true
	if m.pat[p+1] == '^' {
		want = false
		p++
	}
	for p++; p < end; p++ {
		switch {
		case m.pat[p] == '%':
			p++
			if matchClass(c, m.pat[p]) {
				return want
			}
		case p+2 < end && m.pat[p+1] == '-':
			if m.pat[p] <= c && c <= m.pat[p+2] {
				return want
			}
			p += 2
		case m.pat[p] == c:
			return want
		}
	}
	return !want
}

// single reports whether src[s] matches the class pat[p:ep].
func (m *matcher) single(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchSet(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match matches pat[p:] at src[s:], returning the end of the match or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxMatchDepth {
		m.fail("pattern too complex")
	}
	for {
		m.step()
		if p == len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if p+1 < len(m.pat) && m.pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 >= len(m.pat) {
				m.fail("malformed pattern (ends with '%')")
			}
			switch c := m.pat[p+1]; {
			case c == 'b':
				if s = m.matchBalance(s, p+2); s == -1 {
					return -1
				}
				p += 4
				continue
			case c == 'f':
				p += 2
				if p >= len(m.pat) || m.pat[p] != '[' {
					m.fail("missing '[' after '%f' in pattern")
				}
				ep := m.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = m.src[s-1]
				}
				if s < len(m.src) {
					cur = m.src[s]
				}
				if m.matchSet(prev, p, ep-1) || !m.matchSet(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			case c >= '0' && c <= '9':
				if s = m.matchCapture(s, c); s == -1 {
					return -1
				}
				p += 2
				continue
			}
		}
		// A single-character class, maybe followed by a quantifier.
		ep := m.classEnd(p)
		ok := m.single(s, p, ep)
		if ep < len(m.pat) {
			switch m.pat[ep] {
			case '?':
				if ok {
					if r := m.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return m.maxExpand(s, p, ep)
			case '+':
				if !ok {
					return -1
				}
				return m.maxExpand(s+1, p, ep)
			case '-':
				return m.minExpand(s, p, ep)
			}
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

// maxExpand matches as many as possible, then backs off.
func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.single(s+i, p, ep) {
		m.step()
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

// minExpand matches as few as possible, then extends.
func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.single(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level] = capture{init: s, len: what}
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

// matchBalance matches %bxy at src[s:], p at x.
func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close := m.pat[p], m.pat[p+1]
	depth := 1
	for s++; s < len(m.src); s++ {
		m.step()
		switch m.src[s] {
		case close:
			if depth--; depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

// matchCapture matches a back reference %1-%9 (or %0, refused).
func (m *matcher) matchCapture(s int, digit byte) int {
	l := int(digit - '1')
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	c := m.capture[l]
	if c.len == capPosition {
		return -1 // as in Lua 5.1: a position is not text to repeat
	}
	if len(m.src)-s >= c.len && m.src[c.init:c.init+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// find looks for the pattern from init on, anchored when it starts with
// '^'. It returns the match's start and end, or -1.
func (m *matcher) find(init int) (start, end int) {
	p := 0
	anchor := len(m.pat) > 0 && m.pat[0] == '^'
	if anchor {
		p = 1
	}
	for s := init; s <= len(m.src); s++ {
		m.level = 0
		if e := m.match(s, p); e != -1 {
			return s, e
		}
		if anchor {
			break
		}
	}
	return -1, -1
}

// captureValue is capture i of the last match src[s:e]: a string, or a
// 1-based position for "()". With no captures, capture 0 is the match.
type captureValue struct {
	s        string
	pos      int
	position bool
}

func (m *matcher) captureAt(i, s, e int) captureValue {
	if i >= m.level {
		if i == 0 {
			return captureValue{s: m.src[s:e]}
		}
		m.fail("invalid capture index")
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return captureValue{pos: c.init + 1, position: true}
	}
	return captureValue{s: m.src[c.init : c.init+c.len]}
}

// captures returns every capture of the last match (the match itself when
// the pattern has none).
func (m *matcher) captures(s, e int) []captureValue {
	n := max(m.level, 1)
	out := make([]captureValue, n)
	for i := range out {
		out[i] = m.captureAt(i, s, e)
	}
	return out
}
