//go:build linux

package scripting

import (
	"io"
	"math"
	"strconv"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"
)

// sandbox.go builds the Lua state scripts run in. Scripts are rules users
// write or download; a broken or hostile one must not reach files, other
// processes (except through procwalk.kill and its protections), the
// process's stdout (the line-protocol stream), or the host's memory.
//
// Only package, base, table, string, math, capped coroutines and a cut-down
// os (clock, date, difftime, time) are opened; io, debug, channel and the
// rest of os never are, so neither globals nor require nor package.loaded
// can reach them.

// removedGlobals load code from disk or from strings, hand out the real
// globals of other functions, or act on the whole Go process (a GC).
func removedGlobals() []string {
	return []string{
		"dofile", "loadfile", "load", "loadstring", "module",
		"collectgarbage", "getfenv", "setfenv", "newproxy", "_printregs",
	}
}

// allowedModules are the only entries package.loaded may hold (besides the
// procwalk module once required).
func allowedModules() map[string]bool {
	return map[string]bool{
		"_G": true, lua.LoadLibName: true, lua.TabLibName: true, lua.StringLibName: true,
		lua.MathLibName: true, lua.CoroutineLibName: true, lua.OsLibName: true,
	}
}

// maxDateFormatBytes bounds os.date's format: each directive expands to at
// most a few dozen bytes, so the output stays small.
const maxDateFormatBytes = 256

// registryGrowStep is how many value-stack slots each growth adds.
const registryGrowStep = 1024

// newState returns a fresh sandboxed state with the procwalk module
// preloaded. print writes to w.
func (r *Runtime) newState(w io.Writer) *lua.LState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:    true,
		CallStackSize:   r.limits.CallStackSize,
		RegistrySize:    r.limits.RegistrySize,
		RegistryMaxSize: r.limits.RegistryMaxSize,
		// Grow the value stack in big steps: gopher-lua copies it whole on
		// every growth, so its default of 32 slots is quadratic.
		RegistryGrowStep: registryGrowStep,
		ConcatCheck:      r.checkConcat,
		GrowCheck:        r.checkGrow,
	})
	open := func(name string, fn lua.LGFunction) {
		L.Push(L.NewFunction(fn))
		L.Push(lua.LString(name))
		L.Call(1, 0)
	}
	// package first: PreloadModule and require need it.
	open(lua.LoadLibName, lua.OpenPackage)
	open(lua.BaseLibName, lua.OpenBase)
	open(lua.TabLibName, lua.OpenTable)
	open(lua.StringLibName, lua.OpenString)
	open(lua.MathLibName, lua.OpenMath)
	open(lua.CoroutineLibName, lua.OpenCoroutine)
	open(lua.OsLibName, lua.OpenOs) // cut down below, before any script runs

	for _, name := range removedGlobals() {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("print", L.NewFunction(r.printTo(w)))
	r.checkError(L)

	r.cutOS(L)
	r.lockPackage(L)
	r.wrapStrings(L)
	r.capCoroutines(L)
	r.catchGoPanics(L) // after capCoroutines: its resume is wrapped
	r.capResults(L)
	math := L.GetGlobal(lua.MathLibName).(*lua.LTable)
	math.RawSetString("random", L.NewFunction(mathRandom))
	// math.random draws from math/rand/v2, which needs no seed; gopher-lua's
	// randomseed seeded the whole process's math/rand.
	math.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		L.CheckNumber(1)
		return 0
	}))

	L.PreloadModule(moduleName, r.mod.Loader)
	return L
}

// checkError makes error(message) check the copy it makes of a string
// message to put the position in front: error(s) of a 60 MiB s made 60 MiB
// more in one step.
func (r *Runtime) checkError(L *lua.LState) {
	raise := L.GetGlobal("error").(*lua.LFunction).GFunction
	L.SetGlobal("error", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok && len(s) >= concatCheckBytes && L.OptInt(2, 1) > 0 {
			r.checkAlloc(L, "error would copy a message of", len(s))
		}
		return raise(L)
	}))
}

// lockPackage leaves require able to load preloaded modules only: the file
// searcher (package.loaders[2], ./?.lua and $LUA_PATH) is dropped, and
// package.loaded keeps only the opened libraries.
func (r *Runtime) lockPackage(L *lua.LState) {
	pkg := L.GetGlobal(lua.LoadLibName).(*lua.LTable)
	// require reads the registry's _LOADERS, the same table as
	// package.loaders: truncate it to the preload searcher.
	loaders := L.GetField(L.Get(lua.RegistryIndex), "_LOADERS").(*lua.LTable)
	for i := loaders.Len(); i > 1; i-- {
		loaders.RawSetInt(i, lua.LNil)
	}
	for _, name := range []string{"loadlib", "seeall"} {
		pkg.RawSetString(name, lua.LNil)
	}
	pkg.RawSetString("path", lua.LString(""))
	pkg.RawSetString("cpath", lua.LString(""))

	loaded := L.GetField(L.Get(lua.RegistryIndex), "_LOADED").(*lua.LTable)
	allowed := allowedModules()
	var drop []lua.LValue
	loaded.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); !ok || !allowed[string(s)] {
			drop = append(drop, k)
		}
	})
	for _, k := range drop {
		loaded.RawSet(k, lua.LNil)
	}
	for _, name := range []string{lua.IoLibName, lua.DebugLibName, lua.ChannelLibName} {
		loaded.RawSetString(name, lua.LNil)
		L.SetGlobal(name, lua.LNil)
	}
}

// cutOS replaces os with a table of its harmless clock functions; os.exit
// would end the whole Go process and os.execute's children would write into
// our stdout.
func (r *Runtime) cutOS(L *lua.LState) {
	full := L.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := L.NewTable()
	for _, name := range []string{"clock", "difftime", "time"} {
		safe.RawSetString(name, full.RawGetString(name))
	}
	date := full.RawGetString("date").(*lua.LFunction).GFunction
	safe.RawSetString("date", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok && len(s) > maxDateFormatBytes {
			r.limitError(L, "os.date: format of %d bytes is over the limit of %d", len(s), maxDateFormatBytes)
		}
		return date(L)
	}))
	L.SetGlobal(lua.OsLibName, safe)
	loaded := L.GetField(L.Get(lua.RegistryIndex), "_LOADED").(*lua.LTable)
	loaded.RawSetString(lua.OsLibName, safe)
}

// capCoroutines counts coroutines created in a run: each one is a new Lua
// state with its own stacks, and nested ones grew to gigabytes in seconds.
// It also points a coroutine at the current run's context before each
// resume: gopher-lua gives a coroutine the context of the run that created
// it, so one kept in procwalk.state failed ("context canceled") in every
// later run.
func (r *Runtime) capCoroutines(L *lua.LState) {
	co := L.GetGlobal(lua.CoroutineLibName).(*lua.LTable)
	orig := func(name string) lua.LGFunction { return co.RawGetString(name).(*lua.LFunction).GFunction }
	create, resume, wrap := orig("create"), orig("resume"), orig("wrap")
	count := func(L *lua.LState, name string) {
		if r.coroutines >= r.limits.MaxCoroutines {
			r.limitError(L, "coroutine.%s: more than %d coroutines in one run", name, r.limits.MaxCoroutines)
		}
		r.coroutines++
	}
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		count(L, "create")
		return create(L)
	}))
	co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int {
		if th, ok := L.Get(1).(*lua.LState); ok {
			if resuming(L, th) {
				L.Push(lua.LFalse)
				L.Push(lua.LString(errNotSuspended))
				return 2
			}
			th.SetContext(L.Context())
		}
		defer r.nest(L, "resume")()
		return resume(L)
	}))
	co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
		count(L, "wrap")
		wrap(L) // pushes a Go closure whose upvalue is the coroutine
		inner := L.Get(-1).(*lua.LFunction)
		L.Pop(1)
		th := inner.Upvalues[0].Value()
		L.Push(L.NewClosure(func(L *lua.LState) int {
			if resuming(L, th.(*lua.LState)) {
				L.RaiseError("%s", errNotSuspended)
			}
			th.(*lua.LState).SetContext(L.Context())
			defer r.nest(L, "wrap")()
			return inner.GFunction(L) // reads the coroutine from this closure's upvalue
		}, th))
		return 1
	}))
}

// nest counts a coroutine resumed inside the ones running, and returns
// the count's undo. Each such resume recurses in Go: coroutines kept from
// run to run could nest without end, until Go's stack limit (a fatal
// error no recover catches). At most Limits.MaxCoroutines nest.
func (r *Runtime) nest(L *lua.LState, fn string) func() {
	if r.nested >= r.limits.MaxCoroutines {
		r.limitError(L, "coroutine.%s: more than %d coroutines resumed inside each other", fn, r.limits.MaxCoroutines)
	}
	r.nested++
	return func() { r.nested-- }
}

// errNotSuspended is Lua 5.1's word for resuming a coroutine that is
// running or waiting on one it resumed.
const errNotSuspended = "cannot resume non-suspended coroutine"

// resuming reports whether th is L or resumed, directly or not, the
// coroutine L runs in. gopher-lua refuses only L itself: resuming the
// coroutine that resumed L recursed until Go's 1 GB stack overflowed, a
// fatal error no recover catches.
func resuming(L, th *lua.LState) bool {
	for p := L; p != nil; p = p.Parent {
		if p == th {
			return true
		}
	}
	return false
}

// maxResults is how many values one call may return: Lua 5.1's own bound
// (LUAI_MAXCSTACK) on unpack and string.byte, whose results all go on the
// value stack at once.
const maxResults = 8000

// capResults bounds unpack and string.byte: unpack({}, 1, 1e8) would fill
// the value stack, which gopher-lua fails to recover from cleanly.
func (r *Runtime) capResults(L *lua.LState) {
	// In floats: unpack({}, -1e300, 1) overflowed the count in ints.
	check := func(L *lua.LState, fn string, first, last float64) {
		if n := math.Floor(last) - math.Floor(first) + 1; n > maxResults || math.IsNaN(n) {
			r.limitError(L, "%s: %s results are too many (at most %d)", fn, strconv.FormatFloat(n, 'g', 15, 64), maxResults)
		}
	}
	unpack := L.GetGlobal("unpack").(*lua.LFunction).GFunction
	L.SetGlobal("unpack", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		check(L, "unpack", float64(L.OptNumber(2, 1)), float64(L.OptNumber(3, lua.LNumber(t.Len()))))
		return unpack(L)
	}))
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	strByte := str.RawGetString("byte").(*lua.LFunction).GFunction
	str.RawSetString("byte", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		first := float64(L.OptNumber(2, 1))
		last := float64(L.OptNumber(3, lua.LNumber(first)))
		if first < 0 {
			first += float64(len(s) + 1)
		}
		if last < 0 {
			last += float64(len(s) + 1)
		}
		check(L, "string.byte", max(first, 1), min(last, float64(len(s))))
		return strByte(L)
	}))
}

// printTo returns a print that writes to w instead of stdout, which may be
// the line-protocol stream. One call writes at most MaxStringBytes.
func (r *Runtime) printTo(w io.Writer) lua.LGFunction {
	return func(L *lua.LState) int {
		s := r.joinArgs(L, "print", "\t") + "\n"
		r.spendText(L, len(s))
		_, _ = io.WriteString(w, s) // a closed stderr must not fail the script
		return 0
	}
}

// joinArgs converts fn's arguments with tostring and joins them with sep,
// capped at MaxStringBytes: print(s, s, s ...) with one 4 MiB string made
// gigabytes.
func (r *Runtime) joinArgs(L *lua.LState, fn, sep string) string {
	out := &cappedBuilder{r: r, L: L, fn: fn}
	for i := 1; i <= L.GetTop(); i++ {
		if i > 1 {
			out.write(sep)
		}
		out.write(L.ToStringMeta(L.Get(i)).String())
	}
	return out.b.String()
}
