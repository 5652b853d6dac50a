//go:build linux

package scripting

import (
	"fmt"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// process.go exposes a process as userdata whose fields are read lazily:
// making an object costs one allocation, and only the fields a rule reads
// are converted. A process object keeps the snapshot it came from, so one
// kept in procwalk.state describes that older snapshot.

// procRef is the userdata value of a process object.
type procRef struct {
	snap *procwalk.Snapshot
	p    *procwalk.Process
}

// processFields lists the fields, for error messages and the README.
func processFields() []string {
	return append(numericFields(),
		"id", "comm", "name", "cmdline", "argv", "exe", "cwd", "user", "state", "kernel", "zombie", "cgroup")
}

// numericFields are the numeric fields: the names of the catalogue's
// metrics of a process (each metric's short names work too, e.g. rss for
// rss_bytes).
func numericFields() []string { return metric.Names(metric.Processes()) }

// procObject is a process object: the userdata and its value in one
// allocation, and a list of them in one block, so that
// procwalk.processes() over 10,000 processes allocates twice, not 20,000
// times.
type procObject struct {
	ud  lua.LUserData
	ref procRef
}

func (m *module) initProcess(L *lua.LState, o *procObject, snap *procwalk.Snapshot, p *procwalk.Process) *lua.LUserData {
	o.ref = procRef{snap: snap, p: p}
	o.ud = lua.LUserData{Value: &o.ref, Env: L.Env, Metatable: m.procMT}
	return &o.ud
}

func (m *module) newProcess(L *lua.LState, snap *procwalk.Snapshot, p *procwalk.Process) *lua.LUserData {
	return m.initProcess(L, new(procObject), snap, p)
}

// pushProcess pushes p as a process object, or nil.
func (m *module) pushProcess(L *lua.LState, snap *procwalk.Snapshot, p *procwalk.Process) {
	if p == nil {
		L.Push(lua.LNil)
		return
	}
	L.Push(m.newProcess(L, snap, p))
}

// processList returns procs as a Lua array of process objects.
func (m *module) processList(L *lua.LState, snap *procwalk.Snapshot, procs []*procwalk.Process) *lua.LTable {
	t := L.CreateTable(len(procs), 0)
	objs := make([]procObject, len(procs))
	for i, p := range procs {
		t.RawSetInt(i+1, m.initProcess(L, &objs[i], snap, p))
	}
	return t
}

// checkProcess returns argument n as a process, raising an argument error
// otherwise.
func checkProcess(L *lua.LState, n int) *procRef {
	if ud, ok := L.Get(n).(*lua.LUserData); ok {
		if ref, ok := ud.Value.(*procRef); ok {
			return ref
		}
	}
	L.ArgError(n, "process expected, got "+typeName(L.Get(n)))
	return nil
}

// typeName names a Lua value's type, telling our userdata apart.
func typeName(v lua.LValue) string {
	if ud, ok := v.(*lua.LUserData); ok {
		switch ud.Value.(type) {
		case *procRef:
			return "process"
		case *sessionRef:
			return "session"
		}
	}
	return v.Type().String()
}

// procIndex is __index: a field, else a method.
func (m *module) procIndex(L *lua.LState) int {
	ref := checkProcess(L, 1)
	key := L.CheckString(2)
	if m.procField(L, ref, key) {
		return 1
	}
	if fn := m.procMethods.RawGetString(key); fn != lua.LNil {
		L.Push(fn)
		return 1
	}
	unknownField(L, "process", key, processFields())
	return 0
}

// procField pushes field key of the process and reports whether it exists.
func (m *module) procField(L *lua.LState, ref *procRef, key string) bool {
	p := ref.p
	switch key {
	case "id":
		L.Push(lua.LString(p.ID.String()))
	case "comm":
		L.Push(lua.LString(p.Comm))
	case "name":
		m.need(ref.snap, p, procwalk.FieldCmdline)
		L.Push(lua.LString(p.Name()))
	case "cmdline":
		m.need(ref.snap, p, procwalk.FieldCmdline)
		pushString(L, strings.Join(p.Cmdline, " "), p.Read&procwalk.FieldCmdline != 0)
	case "argv":
		m.need(ref.snap, p, procwalk.FieldCmdline)
		if p.Read&procwalk.FieldCmdline == 0 {
			L.Push(lua.LNil)
			break
		}
		t := L.CreateTable(len(p.Cmdline), 0)
		for i, a := range p.Cmdline {
			t.RawSetInt(i+1, lua.LString(a))
		}
		L.Push(t)
	case "exe":
		m.need(ref.snap, p, procwalk.FieldExe)
		pushString(L, p.Exe, p.Read&procwalk.FieldExe != 0)
	case "cwd":
		m.need(ref.snap, p, procwalk.FieldCwd)
		pushString(L, p.Cwd, p.Read&procwalk.FieldCwd != 0)
	case "user":
		// The effective user, as uid, ps and JSON have it.
		m.need(ref.snap, p, procwalk.FieldOwner)
		pushString(L, m.r.cfg.Users.Name(p.EffectiveUID), p.Read&procwalk.FieldOwner != 0)
	case "state":
		L.Push(lua.LString(string(rune(p.State))))
	case "kernel":
		L.Push(lua.LBool(p.Kernel))
	case "zombie":
		L.Push(lua.LBool(p.Zombie()))
	case "cgroup":
		m.need(ref.snap, p, procwalk.FieldCgroup)
		pushString(L, cgroupPath(p), p.Read&procwalk.FieldCgroup != 0 && len(p.Cgroups) > 0)
	default:
		d, known := m.metrics.Lookup(key)
		if !known || !d.OfProcess() {
			return false
		}
		if d.Kind != metric.Rate { // a rate needs its field in both samples
			m.need(ref.snap, p, d.Needs)
		}
		v, ok := d.Process(ref.snap, p)
		pushOpt(L, v, ok)
	}
	return true
}

func pushString(L *lua.LState, s string, ok bool) {
	if ok {
		L.Push(lua.LString(s))
	} else {
		L.Push(lua.LNil)
	}
}

// cgroupPath is the unified (v2) path when there is one, else the memory
// controller's, else the first line's.
func cgroupPath(p *procwalk.Process) string {
	for _, l := range p.Cgroups {
		if l.HierarchyID == 0 && l.Path != "/" {
			return l.Path
		}
	}
	for _, l := range p.Cgroups {
		for _, c := range strings.Split(l.Controllers, ",") {
			if c == "memory" {
				return l.Path
			}
		}
	}
	if len(p.Cgroups) > 0 {
		return p.Cgroups[0].Path
	}
	return ""
}

// procString is __tostring: "process 1234 (bash)".
func (m *module) procString(L *lua.LState) int {
	ref := checkProcess(L, 1)
	L.Push(lua.LString(fmt.Sprintf("process %d (%s)", ref.p.ID.PID, ref.p.Comm)))
	return 1
}

// procEqual is __eq: the same process (pid and start time).
func procEqual(L *lua.LState) int {
	a, b := checkProcess(L, 1), checkProcess(L, 2)
	L.Push(lua.LBool(a.p.ID == b.p.ID))
	return 1
}

// p:parent() -> process|nil
func (m *module) procParent(L *lua.LState) int {
	ref := checkProcess(L, 1)
	m.pushProcess(L, ref.snap, ref.snap.Parent(ref.p.ID.PID))
	return 1
}

// p:children() -> {process}
func (m *module) procChildren(L *lua.LState) int {
	ref := checkProcess(L, 1)
	L.Push(m.processList(L, ref.snap, ref.snap.Children(ref.p.ID.PID)))
	return 1
}

// p:descendants() -> {process}, depth first
func (m *module) procDescendants(L *lua.LState) int {
	ref := checkProcess(L, 1)
	L.Push(m.processList(L, ref.snap, ref.snap.Descendants(ref.p.ID.PID)))
	return 1
}

// p:tree() -> {{process=, depth=}}: p (depth 0) and its descendants, depth
// first in pid order.
func (m *module) procTree(L *lua.LState) int {
	ref := checkProcess(L, 1)
	t := L.NewTable()
	ref.snap.Walk(ref.p.ID.PID, func(p *procwalk.Process, depth int) bool {
		t.Append(m.treeEntry(L, ref.snap, p, depth))
		return true
	})
	L.Push(t)
	return 1
}

func (m *module) treeEntry(L *lua.LState, snap *procwalk.Snapshot, p *procwalk.Process, depth int) *lua.LTable {
	e := L.CreateTable(0, 2)
	e.RawSetString("process", m.newProcess(L, snap, p))
	e.RawSetString("depth", lua.LNumber(depth))
	return e
}

// p:session(kind) -> session|nil: the session of that kind holding p.
func (m *module) procSession(L *lua.LState) int {
	ref := checkProcess(L, 1)
	kind := checkKind(L, 2)
	if ref.snap != m.snap {
		L.RaiseError("process %d comes from an earlier run; look it up again with procwalk.process(pid)", ref.p.ID.PID)
	}
	sessions, err := m.groupSessions()
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	idx := m.memberIndex(kind, sessions)
	if i, ok := idx[ref.p.ID]; ok {
		L.Push(m.newSession(L, &sessions[i]))
	} else {
		L.Push(lua.LNil)
	}
	return 1
}
