//go:build linux

package scripting

import (
	"fmt"
	"slices"
	"strings"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// session.go exposes sessions (tmux sessions, sids, cgroups, users, agents
// ...) as userdata: kind, name, attrs and the totals of their members.

// sessionRef is the userdata value of a session object.
type sessionRef struct {
	snap *procwalk.Snapshot
	s    *session.Session
}

// sessionFields lists the fields, for error messages and the README.
func sessionFields() []string {
	return []string{
		"kind", "name", "ref", "attrs", "totals", "procs", "threads", "zombies",
		"rss", "pss", "uss", "swap", "cpu", "cpu_time", "read_bytes", "write_bytes",
		"read_rate", "write_rate", "growth", "pss_growth", "age", "start_time",
		"cumulative_cpu_time", "cumulative_read_bytes", "cumulative_write_bytes",
		"smaps_read", "io_read", "cgroup", "agent",
	}
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
		for _, f := range sessionFields() {
			if f == "kind" || f == "name" || f == "ref" || f == "attrs" || f == "totals" {
				continue
			}
			if m.sessionTotal(L, ref, f) {
				t.RawSetString(f, L.Get(-1))
				L.Pop(1)
			}
		}
		L.Push(t)
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

// sessionTotal pushes one total and reports whether key is one: a name or
// alias of the session metric catalogue (session.Metrics), absent
// as nil, or one of the fields below. Those keep the meaning they had
// before the catalogue: cpu_time, read_bytes and write_bytes are the
// members' counters now (they drop when a member exits), where the
// catalogue's cpu_time_seconds, read_bytes and write_bytes are the
// session's cumulative ones (cumulative_cpu_time ...).
func (m *module) sessionTotal(L *lua.LState, ref *sessionRef, key string) bool {
	t := &ref.s.Totals
	rates := t.RatesMeasured > 0
	switch key {
	case "cpu_time":
		L.Push(lua.LNumber(t.CPUSeconds))
	case "read_bytes":
		pushOpt(L, float64(t.ReadBytes), t.IORead > 0)
	case "write_bytes":
		pushOpt(L, float64(t.WriteBytes), t.IORead > 0)
	case "start_time":
		pushOpt(L, float64(t.OldestStart.UnixNano())/1e9, !t.OldestStart.IsZero())
	case "smaps_read":
		L.Push(lua.LNumber(t.SmapsRead))
	case "io_read":
		L.Push(lua.LNumber(t.IORead))
	case "cgroup":
		if t.Cgroup == nil {
			L.Push(lua.LNil)
		} else {
			L.Push(cgroupTable(L, t.Cgroup, rates))
		}
	case "agent":
		if ref.s.Agent == nil {
			L.Push(lua.LNil)
		} else {
			L.Push(agentTable(L, ref.s, ref.snap))
		}
	default:
		d, ok := m.sessionMetrics[key]
		if !ok {
			return false
		}
		v, ok := d.Value(ref.s, ref.snap.Fields, ref.snap.Time)
		switch {
		case !ok:
			L.Push(lua.LNil)
		case d.Flag:
			L.Push(lua.LBool(v != 0))
		default:
			L.Push(lua.LNumber(v))
		}
	}
	return true
}

// cgroupTable converts cgroupfs usage and limits; a limit that does not
// apply, or a CPU figure before rates are measured, is nil.
func cgroupTable(L *lua.LState, c *session.CgroupUsage, rates bool) *lua.LTable {
	t := L.NewTable()
	set := func(k string, v float64, ok bool) {
		if ok {
			t.RawSetString(k, lua.LNumber(v))
		}
	}
	t.RawSetString("version", lua.LNumber(c.Version))
	set("memory_usage", float64(c.MemoryUsageBytes), c.HaveMemoryUsage)
	set("memory_limit", float64(c.MemoryLimitBytes), c.MemoryLimitBytes > 0)
	set("memory_percent", c.MemoryPercent, c.MemoryLimitBytes > 0 && c.HaveMemoryUsage)
	set("cpu_quota", c.CPUQuotaCores, c.CPUQuotaCores > 0)
	set("cpu_used", c.CPUCoresUsed, rates)
	set("cpu_percent", c.CPUQuotaPercent, rates && c.CPUQuotaCores > 0)
	t.RawSetString("danger", lua.LBool(c.Danger))
	if c.MemoryLimitPath != "" {
		t.RawSetString("memory_limit_path", lua.LString(c.MemoryLimitPath))
	}
	if c.CPUQuotaPath != "" {
		t.RawSetString("cpu_quota_path", lua.LString(c.CPUQuotaPath))
	}
	return t
}

// agentTable converts an agent session's status and transcript figures:
// {status, why, status_since, the strings of session.AgentStrings (model,
// session_id, transcript, title ...), and the session metrics marked
// Agent}; what is unknown is nil.
func agentTable(L *lua.LState, s *session.Session, snap *procwalk.Snapshot) *lua.LTable {
	a := s.Agent
	t := L.NewTable()
	t.RawSetString("status", lua.LString(a.Status))
	t.RawSetString("why", lua.LString(a.Why))
	if !a.StatusSince.IsZero() {
		t.RawSetString("status_since", lua.LNumber(float64(a.StatusSince.UnixNano())/1e9))
	}
	for _, attr := range session.AgentStrings() {
		if v := s.Attrs[attr]; v != "" {
			t.RawSetString(attr, lua.LString(v))
		}
	}
	for _, d := range session.Metrics() {
		if !d.Agent {
			continue
		}
		if v, ok := d.Value(s, snap.Fields, snap.Time); ok {
			t.RawSetString(d.Name, lua.LNumber(v))
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
