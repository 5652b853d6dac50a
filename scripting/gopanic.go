//go:build linux

package scripting

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// gopanic.go turns a Go panic inside the Lua VM (a runtime error: an index
// out of range, a nil dereference) into an error at the script's line that
// ends the run and drops the state: after one, the VM's stacks cannot be
// trusted. gopher-lua recovers such panics as ordinary Lua errors (pcall
// returned false, "runtime error: ..." and the state went on), or lets them
// escape its protected call without a position.

// errGoPanic is the cancel cause of a run whose VM panicked.
type errGoPanic struct{ where, msg string }

func (e errGoPanic) Error() string {
	return fmt.Sprintf("a Go panic in the Lua VM (%s): the run was stopped and the script's state dropped", e.msg)
}

func (e errGoPanic) Unwrap() error { return ErrLimit }

// goRuntimeError is how the VM's recovery renders a Go runtime panic.
const goRuntimeError = "runtime error: "

// isGoPanic reports whether err, from a protected call, is a Go panic the
// VM recovered: an ApiErrorPanic, or a Go runtime error's text (the form a
// panic in a coroutine takes). A script that raises that text itself only
// drops its own state.
func isGoPanic(err error) (string, bool) {
	var aerr *lua.ApiError
	if !errors.As(err, &aerr) {
		return "", false
	}
	msg := aerr.Object.String()
	first, _, _ := strings.Cut(msg, "\n")
	return first, aerr.Type == lua.ApiErrorPanic || strings.HasPrefix(first, goRuntimeError)
}

// goPanic stops the run for a Go panic msg, at the line of the Lua
// function calling the current Go function. It does not return.
func (r *Runtime) goPanic(L *lua.LState, msg string) {
	err := errGoPanic{where: L.Where(1), msg: msg}
	r.cancel(err)
	L.RaiseError("%v", err)
}

// catchGoPanics replaces pcall, xpcall and coroutine.resume with versions
// that stop the run when what they caught was a Go panic.
func (r *Runtime) catchGoPanics(L *lua.LState) {
	L.SetGlobal("pcall", L.NewFunction(r.pcall))
	L.SetGlobal("xpcall", L.NewFunction(r.xpcall))
	co := L.GetGlobal(lua.CoroutineLibName).(*lua.LTable)
	resume := co.RawGetString("resume").(*lua.LFunction).GFunction
	co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int {
		n := resume(L)
		if n >= 2 && L.Get(-n) == lua.LFalse {
			if s, ok := L.Get(-n + 1).(lua.LString); ok && strings.HasPrefix(string(s), goRuntimeError) {
				r.goPanic(L, string(s))
			}
		}
		return n
	}))
}

// pcall(f, ...) -> true, ... | false, err: Lua 5.1's, but a Go panic in f
// stops the run (goPanic).
func (r *Runtime) pcall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		return r.caught(L, err)
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// xpcall(f, handler) -> true, ... | false, handler(err): Lua 5.1's, but a
// Go panic in f stops the run.
func (r *Runtime) xpcall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	handler := L.CheckFunction(2)
	top := L.GetTop()
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, handler); err != nil {
		return r.caught(L, err)
	}
	L.Insert(lua.LTrue, top+1)
	return L.GetTop() - top
}

// caught pushes false and the error object of a protected call that
// failed, or stops the run when it was a Go panic.
func (r *Runtime) caught(L *lua.LState, err error) int {
	if msg, ok := isGoPanic(err); ok {
		r.goPanic(L, msg)
	}
	L.Push(lua.LFalse)
	var aerr *lua.ApiError
	if errors.As(err, &aerr) {
		L.Push(aerr.Object)
	} else {
		L.Push(lua.LString(err.Error()))
	}
	return 2
}

// luaPosition returns the "file:line:" of the innermost Lua frame of L
// with a line, or "" (also when L is too broken to tell, after a panic
// that escaped the VM).
func luaPosition(L *lua.LState) (pos string) {
	defer func() {
		if recover() != nil {
			pos = ""
		}
	}()
	for level := 0; level < maxTracebackLevels; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			return fmt.Sprintf("%s:%d:", dbg.Source, dbg.CurrentLine)
		}
	}
	return ""
}
