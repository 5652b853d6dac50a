//go:build linux

package scripting

import (
	"fmt"
	"slices"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// session.go exposes sessions (tmux sessions, sids, cgroups, users, agents
// ...) as userdata: kind, name, attrs and the totals of their members.

// sessionRef is the userdata value of a session object.
type sessionRef struct {
	snap *procwalk.Snapshot
	s    *session.Session
}

// sessionFields lists the fields, for error messages and the README:
// kind, name, ref, attrs, totals, cgroup, agent, then the names of the
// catalogue's metrics of a session (each metric's short names work too).
func sessionFields() []string {
	return append([]string{"kind", "name", "ref", "attrs", "totals", "cgroup", "agent"}, metric.Names(metric.Sessions())...)
}

func (m *module) newSession(L *lua.LState, s *session.Session) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = &sessionRef{snap: m.snap, s: s}
	ud.Metatable = m.sessionMT
	return ud
}

func checkSession(L *lua.LState, n int) *sessionRef {
	if ud, ok := L.Get(n).(*lua.LUserData); ok {
		if ref, ok := ud.Value.(*sessionRef); ok {
			return ref
		}
	}
	L.ArgError(n, "session expected, got "+typeName(L.Get(n)))
	return nil
}

// checkKind returns argument n as a session kind.
func checkKind(L *lua.LState, n int) string {
	kind := L.CheckString(n)
	if !slices.Contains(session.Kinds(), kind) {
		L.ArgError(n, fmt.Sprintf("unknown session kind %q; kinds are %s", kind, strings.Join(session.Kinds(), ", ")))
	}
	return kind
}

// groupSessions groups the run's snapshot once.
func (m *module) groupSessions() ([]session.Session, error) {
	if !m.grouped {
		m.grouped = true
		if m.group != nil {
			m.sessions, m.groupErr = m.group()
		}
	}
	return m.sessions, m.groupErr
}

// memberIndex maps each member of the sessions of kind to its session.
func (m *module) memberIndex(kind string, sessions []session.Session) map[procwalk.ProcID]int {
	if idx, ok := m.members[kind]; ok {
		return idx
	}
	if m.members == nil {
		m.members = make(map[string]map[procwalk.ProcID]int)
	}
	idx := make(map[procwalk.ProcID]int)
	for i := range sessions {
		if sessions[i].Kind != kind {
			continue
		}
		for _, id := range sessions[i].Members {
			idx[id] = i
		}
	}
	m.members[kind] = idx
	return idx
}

// procwalk.sessions([kind]) -> {session} | nil, err
func (m *module) luaSessions(L *lua.LState) int {
	kind := ""
	if L.Get(1) != lua.LNil {
		kind = checkKind(L, 1)
	}
	sessions, err := m.groupSessions()
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	t := L.NewTable()
	for i := range sessions {
		if kind == "" || sessions[i].Kind == kind {
			t.Append(m.newSession(L, &sessions[i]))
		}
	}
	L.Push(t)
	return 1
}

// procwalk.session(ref) -> session | nil, err: ref is "KIND:NAME".
func (m *module) luaSession(L *lua.LState) int {
	ref := L.CheckString(1)
	sessions, err := m.groupSessions()
	if err == nil {
		var s *session.Session
		if s, err = session.Find(sessions, ref); err == nil {
			L.Push(m.newSession(L, s))
			return 1
		}
	}
	L.Push(lua.LNil)
	L.Push(lua.LString(err.Error()))
	return 2
}

// sessionIndex is __index: a field, else a method.
func (m *module) sessionIndex(L *lua.LState) int {
	ref := checkSession(L, 1)
	key := L.CheckString(2)
	switch key {
	case "kind":
		L.Push(lua.LString(ref.s.Kind))
	case "name":
		L.Push(lua.LString(ref.s.Name))
	case "ref":
		L.Push(lua.LString(ref.s.Ref()))
	case "attrs":
		t := L.CreateTable(0, len(ref.s.Attrs))
		for k, v := range ref.s.Attrs {
			t.RawSetString(k, lua.LString(v))
		}
		L.Push(t)
	case "totals":
		t := L.NewTable()
		for _, d := range metric.Sessions() {
			if v, ok := d.Session(ref.s, ref.snap.Fields, ref.snap.Time); ok {
				t.RawSetString(d.Name, sessionNumber(&d, v))
			}
		}
		L.Push(t)
	case "cgroup":
		if c := ref.s.Totals.Cgroup; c == nil {
			L.Push(lua.LNil)
		} else {
			L.Push(cgroupTable(L, c))
		}
	case "agent":
		if ref.s.Agent == nil {
			L.Push(lua.LNil)
		} else {
			L.Push(agentTable(L, ref.s))
		}
	default:
		if m.sessionTotal(L, ref, key) {
			return 1
		}
		if fn := m.sessionMethods.RawGetString(key); fn != lua.LNil {
			L.Push(fn)
			return 1
		}
		unknownField(L, "session", key, sessionFields())
	}
	return 1
}

// sessionTotal pushes the value of the catalogue's session metric named key
// (by name or short name), nil when absent, and reports whether key names
// one.
func (m *module) sessionTotal(L *lua.LState, ref *sessionRef, key string) bool {
	d, ok := m.metrics.Lookup(key)
	if !ok || !d.OfSession() {
		return false
	}
	if v, ok := d.Session(ref.s, ref.snap.Fields, ref.snap.Time); ok {
		L.Push(sessionNumber(d, v))
	} else {
		L.Push(lua.LNil)
	}
	return true
}

// sessionNumber is value v of metric d in Lua: a flag as a boolean.
func sessionNumber(d *metric.Desc, v float64) lua.LValue {
	if d.Flag {
		return lua.LBool(v != 0)
	}
	return lua.LNumber(v)
}

// cgroupTable is what a cgroup session's numbers (s.memory_usage_bytes,
// s.memory_limit_bytes, s.cpu_quota_cores ...) do not say: the cgroup
// version and the cgroups that set the limits.
func cgroupTable(L *lua.LState, c *session.CgroupUsage) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("version", lua.LNumber(c.Version))
	if c.MemoryLimitPath != "" {
		t.RawSetString("memory_limit_path", lua.LString(c.MemoryLimitPath))
	}
	if c.CPUQuotaPath != "" {
		t.RawSetString("cpu_quota_path", lua.LString(c.CPUQuotaPath))
	}
	return t
}

// agentTable is an agent session's status and what its transcript names:
// {status, why, and the strings of session.AgentStrings (model,
// session_id, transcript, title, git_branch, agent_version,
// permission_mode, last_error)}; what is unknown is nil. Its numbers
// (s.status_seconds, s.context_percent, s.input_tokens ...) are session
// metrics.
func agentTable(L *lua.LState, s *session.Session) *lua.LTable {
	a := s.Agent
	t := L.NewTable()
	t.RawSetString("status", lua.LString(a.Status))
	t.RawSetString("why", lua.LString(a.Why))
	for _, attr := range session.AgentStrings() {
		if v := s.Attrs[attr]; v != "" {
			t.RawSetString(attr, lua.LString(v))
		}
	}
	return t
}

// sessionString is __tostring: "session tmux:build".
func sessionString(L *lua.LState) int {
	L.Push(lua.LString("session " + checkSession(L, 1).s.Ref()))
	return 1
}

// sessionEqual is __eq: the same kind and name.
func sessionEqual(L *lua.LState) int {
	a, b := checkSession(L, 1), checkSession(L, 2)
	L.Push(lua.LBool(a.s.Kind == b.s.Kind && a.s.Name == b.s.Name))
	return 1
}

// memberProcs returns the members present in the session's snapshot.
func memberProcs(ref *sessionRef, ids []procwalk.ProcID) []*procwalk.Process {
	out := make([]*procwalk.Process, 0, len(ids))
	for _, id := range ids {
		if p := ref.snap.Lookup(id); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// s:processes() -> {process}: every member, in pid order.
func (m *module) sessionProcesses(L *lua.LState) int {
	ref := checkSession(L, 1)
	L.Push(m.processList(L, ref.snap, memberProcs(ref, ref.s.Members)))
	return 1
}

// s:roots() -> {process}: the members whose parent is not a member.
func (m *module) sessionRoots(L *lua.LState) int {
	ref := checkSession(L, 1)
	L.Push(m.processList(L, ref.snap, memberProcs(ref, ref.s.Roots)))
	return 1
}

// s:top(metric [, n]) -> {process}: the n (default 5) members with the
// highest metric, highest first.
func (m *module) sessionTop(L *lua.LState) int {
	ref := checkSession(L, 1)
	metric := m.checkMetric(L, 2)
	n := optCount(L, 3)
	L.Push(m.processList(L, ref.snap, topN(ref.snap, memberProcs(ref, ref.s.Members), metric, n)))
	return 1
}

// s:tree() -> {{process=, depth=}}: each root and the members below it,
// depth first; depth counts from the root (0).
func (m *module) sessionTree(L *lua.LState) int {
	ref := checkSession(L, 1)
	member := make(map[procwalk.ProcID]bool, len(ref.s.Members))
	for _, id := range ref.s.Members {
		member[id] = true
	}
	t := L.NewTable()
	for _, root := range memberProcs(ref, ref.s.Roots) {
		ref.snap.Walk(root.ID.PID, func(p *procwalk.Process, depth int) bool {
			if !member[p.ID] {
				return false
			}
			t.Append(m.treeEntry(L, ref.snap, p, depth))
			return true
		})
	}
	L.Push(t)
	return 1
}
