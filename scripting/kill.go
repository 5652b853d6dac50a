//go:build linux

package scripting

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// kill.go is procwalk.kill and the :kill methods. Scripts never signal a
// pid themselves: every kill names a scope of ProcIDs taken from the
// snapshot and goes through a Killer, which verifies each identity with a
// pidfd and refuses protected processes.

// Killer carries out the kills scripts ask for. It must verify identities
// and apply the protections; EngineKiller does, with procwalk's Killer.
type Killer interface {
	Kill(ctx context.Context, scope kill.Scope, opts KillOptions) (*kill.Report, error)
}

// KillOptions are what a script may choose per kill. It can neither force
// past the protected list nor skip the identity checks.
type KillOptions struct {
	Signal    syscall.Signal // 0 means the Killer's default (TERM)
	Grace     time.Duration  // 0 means the Killer's default
	DryRun    bool
	Requester string // "rule:<script>"
	// MaxTargets is the most processes this kill may signal (what is left
	// of the script's kill budget): a plan with more targets is refused
	// whole, each target kill.ResultBudget with Budget's text. A dry run is
	// never refused. Negative: no bound.
	MaxTargets int
	Budget     string // says which budget MaxTargets is, for the refusal
}

// EngineKiller is the Killer of procwalk's engine: each kill runs a
// kill.Killer built from Base with the call's options. Base.DryRun
// makes every kill a dry run.
type EngineKiller struct {
	FS   procwalk.FS
	Base kill.Config
}

// Kill plans and executes one termination.
func (k EngineKiller) Kill(ctx context.Context, scope kill.Scope, opts KillOptions) (*kill.Report, error) {
	cfg := k.Base
	if opts.Signal != 0 {
		cfg.Signal = opts.Signal
	}
	if opts.Grace > 0 {
		cfg.Grace = opts.Grace
	}
	cfg.DryRun = cfg.DryRun || opts.DryRun
	if opts.Requester != "" {
		cfg.Requester = opts.Requester
	}
	killer, err := kill.NewKiller(k.FS, cfg)
	if err != nil {
		return nil, err
	}
	plan, err := killer.Plan(scope)
	if err != nil {
		return nil, err
	}
	if !cfg.DryRun && opts.MaxTargets >= 0 && len(plan.Targets) > opts.MaxTargets {
		return killer.Refuse(plan, fmt.Errorf("%w: %d processes to signal, %s", kill.ErrBudget, len(plan.Targets), opts.Budget)), nil
	}
	return killer.Execute(ctx, plan), nil
}

// errNoKiller is returned to scripts when the host gave no Killer.
var errNoKiller = errors.New("killing is not available here")

// killOptionKeys are the keys of a kill options table.
func killOptionKeys() []string { return []string{"signal", "grace", "scope", "dry_run"} }

// maxGrace bounds a script's grace period: the run waits that long.
const maxGrace = 5 * time.Minute

// killOpts reads the options table at argument n. scope is "" when the
// table has none.
func (m *module) killOpts(L *lua.LState, n int) (KillOptions, string) {
	opts := KillOptions{DryRun: m.r.cfg.DryRun, Requester: "rule:" + m.script.Name}
	scope := ""
	t := optTable(L, n)
	if t == nil {
		return opts, scope
	}
	t.ForEach(func(k, v lua.LValue) {
		switch key, _ := k.(lua.LString); key {
		case "signal":
			sig, err := kill.ParseSignal(v.String())
			if err != nil {
				L.ArgError(n, err.Error())
			}
			opts.Signal = sig
		case "grace":
			s, ok := v.(lua.LNumber)
			if !ok || s <= 0 || time.Duration(float64(s)*float64(time.Second)) > maxGrace {
				L.ArgError(n, fmt.Sprintf("grace must be seconds, more than 0 and at most %s; got %s", maxGrace, v.String()))
			}
			opts.Grace = time.Duration(float64(s) * float64(time.Second))
		case "scope":
			scope = v.String()
			if scope != "process" && scope != "tree" && scope != "group" {
				L.ArgError(n, fmt.Sprintf("scope must be process, tree or group; got %q", scope))
			}
		case "dry_run":
			opts.DryRun = opts.DryRun || lua.LVAsBool(v)
		default:
			L.ArgError(n, fmt.Sprintf("unknown kill option %s; options are %s", k.String(), strings.Join(killOptionKeys(), ", ")))
		}
	})
	return opts, scope
}

// processScope is the scope of a process kill.
func processScope(p *procwalk.Process, scope string) kill.Scope {
	switch scope {
	case "tree":
		return kill.TreeScope{Root: p.ID}
	case "group":
		return kill.GroupScope{PGRP: p.PGRP}
	}
	return kill.ProcessScope{ID: p.ID}
}

// procwalk.kill(target [, opts]) -> report | nil, err; report, err when
// some target was not terminated. target is a process, a session, a pid or
// "KIND:NAME"; opts are signal, grace (seconds), scope (process, tree or
// group; processes only) and dry_run.
func (m *module) luaKill(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case *lua.LUserData:
		switch ref := v.Value.(type) {
		case *procRef:
			return m.killProcess(L, ref.p, 2)
		case *sessionRef:
			return m.killSession(L, ref.s, 2)
		}
	case lua.LNumber:
		pid := checkInteger(L, 1)
		p := m.snap.Process(pid)
		if p == nil {
			m.killOpts(L, 2) // misused options raise all the same
			L.Push(lua.LNil)
			L.Push(lua.LString(fmt.Sprintf("no process %d", pid)))
			return 2
		}
		return m.killProcess(L, p, 2)
	case lua.LString:
		sessions, err := m.groupSessions()
		var s *session.Session
		if err == nil {
			s, err = session.Find(sessions, string(v))
		}
		if err != nil {
			m.killOpts(L, 2) // misused options raise all the same
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		return m.killSession(L, s, 2)
	}
	L.ArgError(1, "process, session, pid or \"KIND:NAME\" expected, got "+typeName(L.Get(1)))
	return 0
}

// p:kill([opts]) -> report | nil, err
func (m *module) procKill(L *lua.LState) int {
	return m.killProcess(L, checkProcess(L, 1).p, 2)
}

// killProcess kills p with the options at argument n.
func (m *module) killProcess(L *lua.LState, p *procwalk.Process, n int) int {
	opts, scope := m.killOpts(L, n)
	return m.kill(L, processScope(p, scope), opts)
}

// s:kill([opts]) -> report | nil, err: every member, and what they fork
// while being terminated.
func (m *module) sessionKill(L *lua.LState) int {
	ref := checkSession(L, 1)
	return m.killSession(L, ref.s, 2)
}

// killSession kills s with the options at argument n, which may not name a
// scope: a session is its own scope.
func (m *module) killSession(L *lua.LState, s *session.Session, n int) int {
	opts, scope := m.killOpts(L, n)
	if scope != "" {
		L.ArgError(n, fmt.Sprintf("scope %q applies to processes; a session kill takes its members", scope))
	}
	return m.kill(L, kill.NewSessionScope(s, false), opts)
}

// kill runs the Killer within the run's budgets. The time it waits for its
// targets to exit, from its first signal, is not counted against the
// deadline, up to what is left of the run's grace budget; the rest of the
// call (planning, refusals, signalling) is. Its grace is cut to what is
// left of that budget, and it may signal no more processes than are left
// of the kill budget.
func (m *module) kill(L *lua.LState, scope kill.Scope, opts KillOptions) int {
	if m.r.cfg.Killer == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(errNoKiller.Error()))
		return 2
	}
	lim := m.r.limits
	opts.MaxTargets = m.killsLeft
	opts.Budget = fmt.Sprintf("%d left of the script's %d a run and %d an hour (--script-kills-per-run, --script-kills-per-hour)", m.killsLeft, lim.KillsPerRun, lim.KillsPerHour)
	grace := cmp.Or(opts.Grace, kill.DefaultGrace)
	if !opts.DryRun && opts.Signal != syscall.SIGKILL {
		if m.graceLeft <= 0 {
			L.Push(lua.LNil)
			L.Push(lua.LString(fmt.Sprintf("kill %s refused: this run's kills have waited the whole grace budget of %s (--script-grace-budget); the next run may kill again", scope, lim.GraceBudget)))
			return 2
		}
		grace = min(grace, m.graceLeft)
		opts.Grace = grace
	}
	// The most this call may wait, within the budget: the grace, then the
	// wait after KILL.
	most := kill.DefaultKillWait
	if opts.Signal != syscall.SIGKILL {
		most += grace
	}
	allow := min(most, max(m.graceLeft, 0))
	if opts.DryRun {
		allow = 0
	}
	m.deadline.move(allow)
	report, err := m.r.cfg.Killer.Kill(m.ctx, scope, opts)
	end := time.Now()
	waited, signalled := waitedFor(report, end)
	waited = min(waited, allow)
	m.graceLeft -= waited
	m.deadline.move(waited - allow)
	m.killsLeft = max(m.killsLeft-signalled, 0)
	m.r.cfg.KillBudget.Spend(signalled)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("kill %s: %v", scope, err)))
		return 2
	}
	L.Push(reportTable(L, report))
	if err := report.Err(); err != nil {
		L.Push(lua.LString(err.Error()))
		return 2
	}
	return 1
}

// waitedFor returns how long a kill waited for its targets to exit, from
// its first signal to end, and how many processes it signalled.
func waitedFor(r *kill.Report, end time.Time) (waited time.Duration, signalled int) {
	if r == nil {
		return 0, 0
	}
	var first time.Time
	for _, o := range r.Outcomes {
		if len(o.Signals) == 0 {
			continue
		}
		signalled++
		if !o.SignalledAt.IsZero() && (first.IsZero() || o.SignalledAt.Before(first)) {
			first = o.SignalledAt
		}
	}
	if first.IsZero() {
		return 0, signalled
	}
	return max(end.Sub(first), 0), signalled
}

// reportTable converts a Report:
// {ok, dry_run, scope, session, notes = {...}, outcomes = {{pid, comm, ...}}}.
func reportTable(L *lua.LState, r *kill.Report) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("ok", lua.LBool(r.Err() == nil))
	t.RawSetString("dry_run", lua.LBool(r.DryRun))
	t.RawSetString("scope", lua.LString(r.Scope))
	if r.Session != "" {
		t.RawSetString("session", lua.LString(r.Session))
	}
	notes := L.NewTable()
	for _, n := range r.Notes {
		notes.Append(lua.LString(n))
	}
	t.RawSetString("notes", notes)
	outcomes := L.CreateTable(len(r.Outcomes), 0)
	for i := range r.Outcomes {
		outcomes.Append(outcomeTable(L, &r.Outcomes[i]))
	}
	t.RawSetString("outcomes", outcomes)
	return t
}

func outcomeTable(L *lua.LState, o *kill.Outcome) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pid", lua.LNumber(o.ID.PID))
	t.RawSetString("id", lua.LString(o.ID.String()))
	t.RawSetString("comm", lua.LString(o.Comm))
	if o.Args != "" {
		t.RawSetString("cmdline", lua.LString(o.Args))
	}
	t.RawSetString("result", lua.LString(o.Result.String()))
	t.RawSetString("done", lua.LBool(o.Result.Done()))
	t.RawSetString("refused", lua.LBool(o.Result.Refused()))
	t.RawSetString("rss", lua.LNumber(o.RSSBytes))
	t.RawSetString("signals", signalList(L, o.Signals))
	if len(o.Planned) > 0 {
		t.RawSetString("planned", signalList(L, o.Planned))
	}
	if o.GoneAfter > 0 {
		t.RawSetString("gone_after", lua.LNumber(o.GoneAfter.Seconds()))
	}
	if o.KillAfter > 0 {
		t.RawSetString("kill_after", lua.LNumber(o.KillAfter.Seconds()))
	}
	if o.Err != nil {
		t.RawSetString("error", lua.LString(o.Err.Error()))
	} else if o.Note != "" {
		t.RawSetString("note", lua.LString(o.Note))
	}
	return t
}

func signalList(L *lua.LState, sigs []syscall.Signal) *lua.LTable {
	t := L.CreateTable(len(sigs), 0)
	for _, s := range sigs {
		t.Append(lua.LString(kill.SignalName(s)))
	}
	return t
}
