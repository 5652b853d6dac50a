//go:build linux

package scripting

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// query.go selects processes: procwalk.processes(filter), procwalk.process(pid)
// and the top-N of a metric, shared with session:top.

// filterKeys are the keys a filter table may hold.
func filterKeys() []string {
	return []string{"comm", "name", "user", "uid", "state", "ppid", "kernel", "cmdline", "session"}
}

// procwalk.processes([filter]) -> {process}: every process in pid order, or
// those the filter keeps. filter is a function(process) -> bool or a table
// of exact matches (comm, name, user, uid, state, ppid, kernel, session =
// "KIND:NAME") and cmdline = plain substring.
func (m *module) luaProcesses(L *lua.LState) int {
	procs := m.selectProcesses(L, 1)
	L.Push(m.processList(L, m.snap, procs))
	return 1
}

// selectProcesses applies the filter at argument n.
func (m *module) selectProcesses(L *lua.LState, n int) []*procwalk.Process {
	snap := m.snap
	keep := func(*procwalk.Process) bool { return true }
	switch f := L.Get(n).(type) {
	case *lua.LNilType:
	case *lua.LFunction:
		keep = func(p *procwalk.Process) bool {
			L.Push(f)
			L.Push(m.newProcess(L, snap, p)) // the filter may keep it
			L.Call(1, 1)
			ok := lua.LVAsBool(L.Get(-1))
			L.Pop(1)
			return ok
		}
	case *lua.LTable:
		keep = m.tableFilter(L, n, f)
	default:
		L.ArgError(n, "filter must be a table or a function, got "+typeName(f))
	}
	procs := make([]*procwalk.Process, 0, len(snap.Procs))
	for i := range snap.Procs {
		if p := &snap.Procs[i]; keep(p) {
			procs = append(procs, p)
		}
	}
	return procs
}

// tableFilter compiles a filter table into a predicate.
func (m *module) tableFilter(L *lua.LState, n int, t *lua.LTable) func(*procwalk.Process) bool {
	var tests []func(*procwalk.Process) bool
	str := func(key string, v lua.LValue) string {
		s, ok := v.(lua.LString)
		if !ok {
			L.ArgError(n, fmt.Sprintf("filter %s must be a string, got %s", key, typeName(v)))
		}
		return string(s)
	}
	num := func(key string, v lua.LValue) int {
		x, ok := v.(lua.LNumber)
		if !ok || float64(x) != float64(int64(x)) {
			L.ArgError(n, fmt.Sprintf("filter %s must be an integer, got %s", key, v.String()))
		}
		return int(x)
	}
	t.ForEach(func(k, v lua.LValue) {
		key, _ := k.(lua.LString)
		switch key {
		case "comm":
			s := str("comm", v)
			tests = append(tests, func(p *procwalk.Process) bool { return p.Comm == s })
		case "name":
			s := str("name", v)
			tests = append(tests, func(p *procwalk.Process) bool {
				m.need(m.snap, p, procwalk.FieldCmdline)
				return p.Name() == s
			})
		case "cmdline":
			s := str("cmdline", v)
			tests = append(tests, func(p *procwalk.Process) bool {
				m.need(m.snap, p, procwalk.FieldCmdline)
				return strings.Contains(strings.Join(p.Cmdline, " "), s)
			})
		case "state":
			s := str("state", v)
			tests = append(tests, func(p *procwalk.Process) bool { return string(rune(p.State)) == s })
		case "user":
			s := str("user", v)
			tests = append(tests, func(p *procwalk.Process) bool {
				m.need(m.snap, p, procwalk.FieldOwner)
				return p.Read&procwalk.FieldOwner != 0 && m.r.cfg.Users.Name(p.EffectiveUID) == s
			})
		case "uid":
			uid := num("uid", v)
			tests = append(tests, func(p *procwalk.Process) bool {
				m.need(m.snap, p, procwalk.FieldOwner)
				return p.Read&procwalk.FieldOwner != 0 && p.EffectiveUID == uid
			})
		case "ppid":
			ppid := num("ppid", v)
			tests = append(tests, func(p *procwalk.Process) bool { return p.PPID == ppid })
		case "kernel":
			want := lua.LVAsBool(v)
			tests = append(tests, func(p *procwalk.Process) bool { return p.Kernel == want })
		case "session":
			ids := m.sessionMembers(L, n, str("session", v))
			tests = append(tests, func(p *procwalk.Process) bool { return ids[p.ID] })
		default:
			L.ArgError(n, fmt.Sprintf("unknown filter key %s; keys are %s", k.String(), strings.Join(filterKeys(), ", ")))
		}
	})
	return func(p *procwalk.Process) bool {
		for _, test := range tests {
			if !test(p) {
				return false
			}
		}
		return true
	}
}

// sessionMembers returns the members of the session ref names.
func (m *module) sessionMembers(L *lua.LState, n int, ref string) map[procwalk.ProcID]bool {
	sessions, err := m.groupSessions()
	if err != nil {
		L.RaiseError("filter session=%q: %v", ref, err)
	}
	s, err := session.Find(sessions, ref)
	if err != nil {
		L.ArgError(n, err.Error())
	}
	ids := make(map[procwalk.ProcID]bool, len(s.Members))
	for _, id := range s.Members {
		ids[id] = true
	}
	return ids
}

// procwalk.process(pid | "PID@STARTTICKS") -> process | nil, err: by pid,
// or by the identity a process's id field gives, which finds it only while
// that very process lives (not a later one with the same pid).
func (m *module) luaProcess(L *lua.LState) int {
	if id, ok := L.Get(1).(lua.LString); ok {
		return m.processByID(L, string(id))
	}
	pid := checkInteger(L, 1)
	if pid <= 0 {
		L.ArgError(1, fmt.Sprintf("pid must be positive, got %d", pid))
	}
	p := m.snap.Process(pid)
	if p == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("no process %d", pid)))
		return 2
	}
	m.pushProcess(L, m.snap, p)
	return 1
}

func (m *module) processByID(L *lua.LState, s string) int {
	pidText, ticksText, ok := strings.Cut(s, "@")
	pid, err1 := strconv.Atoi(pidText)
	ticks, err2 := strconv.ParseUint(ticksText, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		L.ArgError(1, fmt.Sprintf("want a pid or an id \"PID@STARTTICKS\", got %q", s))
	}
	p := m.snap.Lookup(procwalk.ProcID{PID: pid, StartTicks: ticks})
	if p == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("process %s has exited", s)))
		return 2
	}
	m.pushProcess(L, m.snap, p)
	return 1
}

// procwalk.top(metric [, n [, filter]]) -> {process}: the n (default 5)
// processes with the highest metric, highest first; processes without a
// value for it (cpu before a rate is measured, pss without --pss) are left
// out.
func (m *module) luaTop(L *lua.LState) int {
	metric := m.checkMetric(L, 1)
	n := optCount(L, 2)
	procs := m.selectProcesses(L, 3)
	L.Push(m.processList(L, m.snap, topN(m.snap, procs, metric, n)))
	return 1
}

// checkMetric returns argument n as a metric of the catalogue, by name or
// short name (rss_bytes or rss).
func (m *module) checkMetric(L *lua.LState, n int) *metric.Desc {
	name := L.CheckString(n)
	d, ok := m.metrics.Lookup(name)
	if !ok || !d.OfProcess() {
		L.ArgError(n, fmt.Sprintf("unknown metric %q; metrics are %s (short names such as rss for rss_bytes work too)",
			name, strings.Join(numericFields(), ", ")))
	}
	return d
}

// optCount reads an optional positive count, default 5.
func optCount(L *lua.LState, n int) int {
	if L.Get(n) == lua.LNil {
		return 5
	}
	c := checkInteger(L, n)
	if c <= 0 {
		L.ArgError(n, fmt.Sprintf("count must be positive, got %d", c))
	}
	return c
}

// topN returns up to n of procs with the highest metric d, in the
// catalogue's order (highest first, ties by pid); processes without a value
// for it are left out.
func topN(snap *procwalk.Snapshot, procs []*procwalk.Process, d *metric.Desc, n int) []*procwalk.Process {
	with := make([]*procwalk.Process, 0, len(procs))
	for _, p := range procs {
		if _, ok := d.Process(snap, p); ok {
			with = append(with, p)
		}
	}
	return metric.Top(snap, with, n, d)
}
