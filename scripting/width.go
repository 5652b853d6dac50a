//go:build linux

package scripting

import (
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// width.go gives reports procwalk's width rule: string.format's %-20s pads
// by bytes, so a CJK or accented name put its row out of line.

// procwalk.width(s) -> the cells s takes on a terminal: a CJK character or
// an emoji two, a combining mark none, other characters one.
func luaWidth(L *lua.LState) int {
	L.Push(lua.LNumber(textwidth.Width(L.CheckString(1))))
	return 1
}

// procwalk.pad(s, width [, "right"]) -> s with spaces after it (before
// it, "right") up to width cells; s as it is when it is as wide or wider
// (a report never cuts a name: it puts a long one on a line of its own).
func (m *module) luaPad(L *lua.LState) int {
	s := L.CheckString(1)
	width := L.CheckInt(2)
	right := false
	switch align := L.OptString(3, "left"); align {
	case "left":
	case "right":
		right = true
	default:
		L.ArgError(3, `want "left" or "right"`)
	}
	room := width - textwidth.Width(s)
	if room <= 0 {
		L.Push(lua.LString(s))
		return 1
	}
	m.r.checkSize(L, "procwalk.pad", float64(len(s)+room))
	spaces := strings.Repeat(" ", room)
	if right {
		L.Push(lua.LString(spaces + s))
	} else {
		L.Push(lua.LString(s + spaces))
	}
	return 1
}
