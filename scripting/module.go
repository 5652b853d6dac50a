//go:build linux

package scripting

import (
	"context"
	"fmt"
	"strings"
	"time"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// module.go is the procwalk Lua module: `local procwalk = require "procwalk"`.
// It holds the Go values its functions need; the Runtime points it at each
// run's snapshot before the script starts.

const moduleName = "procwalk"

// Userdata type names, also the keys of their metatables in the registry.
const (
	processType = "procwalk.process"
	sessionType = "procwalk.session"
)

type module struct {
	r *Runtime
	// metrics are the numeric fields of processes and sessions, by name
	// and alias.
	metrics *metric.Catalogue

	// Per Lua state: made by Loader.
	procMT, sessionMT *lua.LTable
	procMethods       *lua.LTable
	sessionMethods    *lua.LTable
	state             *lua.LTable
	table             *lua.LTable // the module table

	// Across runs: debounce counters, kept in Go so that a state rebuilt
	// after a limit error still counts.
	held    map[string]int
	since   map[string]time.Time // debounce with a duration: held since
	touched map[string]bool

	// Per run.
	ctx      context.Context // the caller's: kills wait under it
	script   *Script
	snap     *procwalk.Snapshot
	group    func() ([]session.Session, error)
	readMore func([]*procwalk.Process, procwalk.Fields) error
	one      [1]*procwalk.Process // readMore's argument, without an allocation
	grouped  bool
	sessions []session.Session
	groupErr error
	members  map[string]map[procwalk.ProcID]int // kind -> member -> index in sessions
	deadline *deadline
	// killsLeft is how many more processes this run's kills may signal;
	// graceLeft how much longer they may wait for targets to exit.
	killsLeft int
	graceLeft time.Duration
}

// forgetState drops the tables of a closed Lua state.
func (m *module) forgetState() {
	m.procMT, m.sessionMT, m.procMethods, m.sessionMethods, m.state, m.table = nil, nil, nil, nil, nil, nil
}

func newModule(r *Runtime) *module {
	return &module{r: r, metrics: metric.NewCatalogue(), held: make(map[string]int), since: make(map[string]time.Time), touched: make(map[string]bool)}
}

// begin points the module at one run's input.
func (m *module) begin(ctx context.Context, s *Script, in Input) {
	m.ctx, m.script, m.snap, m.group, m.readMore = ctx, s, in.Snapshot, in.Sessions, in.ReadMore
	if m.table != nil {
		m.table.RawSetString("script", lua.LString(s.Name))
	}
	m.grouped, m.sessions, m.groupErr, m.members = false, nil, nil, nil
	clear(m.touched)
}

// end forgets the run's input, and the debounce keys the run did not ask
// about: a condition not checked this tick did not hold.
func (m *module) end() {
	for k := range m.held {
		if !m.touched[k] {
			delete(m.held, k)
		}
	}
	for k := range m.since {
		if !m.touched[k] {
			delete(m.since, k)
		}
	}
	m.ctx, m.snap, m.group, m.readMore, m.sessions, m.members, m.deadline = nil, nil, nil, nil, nil, nil, nil
}

// need reads fields f of p when the scan did not and p belongs to this
// run's snapshot (a process kept from an earlier run is as it was then).
// A failed read leaves the field unread: it shows as nil.
func (m *module) need(snap *procwalk.Snapshot, p *procwalk.Process, f procwalk.Fields) {
	if m.readMore == nil || snap != m.snap || f&^(p.Read|p.Denied|p.Malformed) == 0 {
		return
	}
	m.one[0] = p
	m.readMore(m.one[:], f)
	m.one[0] = nil
}

// Loader builds the module table; given to L.PreloadModule.
func (m *module) Loader(L *lua.LState) int {
	// The functions and methods are the API's table (api.go), which
	// procwalk run --api prints.
	m.procMethods = L.SetFuncs(L.NewTable(), m.funcsOn(onProcess))
	m.procMT = newType(L, processType, m.procIndex, m.procString, procEqual)

	m.sessionMethods = L.SetFuncs(L.NewTable(), m.funcsOn(onSession))
	m.sessionMT = newType(L, sessionType, m.sessionIndex, sessionString, sessionEqual)

	mod := L.SetFuncs(L.NewTable(), m.funcsOn(onModule))
	for name, v := range map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40} {
		mod.RawSetString(name, lua.LNumber(v))
	}
	m.state = L.NewTable()
	mod.RawSetString("state", m.state)
	mod.RawSetString("args", m.argsTable(L))
	mod.RawSetString("dry_run", lua.LBool(m.r.cfg.DryRun))
	mod.RawSetString("mode", lua.LString(m.r.cfg.Mode))
	mod.RawSetString("script", lua.LString(m.script.Name))
	m.table = mod
	L.Push(mod)
	return 1
}

// argsTable holds the arguments in order, and each "key=value" argument
// also under its key ("--key=value" too), so scripts read options as
// procwalk.args.limit.
func (m *module) argsTable(L *lua.LState) *lua.LTable {
	t := L.CreateTable(len(m.r.cfg.Args), 0)
	for i, a := range m.r.cfg.Args {
		t.RawSetInt(i+1, lua.LString(a))
		if k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok && k != "" {
			t.RawSetString(k, lua.LString(v))
		}
	}
	return t
}

// newType makes the metatable of a userdata type: fields and methods come
// from index, writes are refused, and getmetatable gives the type's name
// instead of the table (so scripts cannot change it).
func newType(L *lua.LState, name string, index, tostring, eq lua.LGFunction) *lua.LTable {
	mt := L.NewTypeMetatable(name)
	L.SetFuncs(mt, map[string]lua.LGFunction{
		"__index":    index,
		"__newindex": readOnly,
		"__tostring": tostring,
		"__eq":       eq,
	})
	mt.RawSetString("__metatable", lua.LString(name))
	return mt
}

// readOnly is __newindex of every userdata: objects describe a snapshot,
// they cannot be changed.
func readOnly(L *lua.LState) int {
	L.RaiseError("%s objects are read-only (field %q)", typeName(L.Get(1)), L.ToString(2))
	return 0
}

// pushOpt pushes v when ok, nil otherwise: an unmeasured value is nil, never
// a misleading zero.
func pushOpt(L *lua.LState, v float64, ok bool) {
	if ok {
		L.Push(lua.LNumber(v))
	} else {
		L.Push(lua.LNil)
	}
}

// unknownField raises an error naming the known fields.
func unknownField(L *lua.LState, what, key string, known []string) {
	L.RaiseError("%s has no field %q; fields are %s", what, key, strings.Join(known, ", "))
}

// checkInteger returns argument n as an integer, raising when it is not a
// whole number (CheckInt would truncate 12.7 to 12).
func checkInteger(L *lua.LState, n int) int {
	v := L.CheckNumber(n)
	if float64(v) != float64(int64(v)) {
		L.ArgError(n, fmt.Sprintf("integer expected, got %v", v))
	}
	return int(v)
}

// optTable returns argument n as a table, or nil when it is absent or nil.
func optTable(L *lua.LState, n int) *lua.LTable {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return nil
	case *lua.LTable:
		return v
	}
	L.TypeError(n, lua.LTTable)
	return nil
}
