package kill

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// scope_actions.go holds what acts on a scope as a whole rather than on one
// process: cgroup.freeze around the first signal, cgroup.kill at the KILL
// stage and tmux kill-session afterwards. They reach beyond the pidfds, so
// they are taken only when they hit nothing but what the plan meant to end.

// freezeCgroup stops a cgroup v2 scope with cgroup.freeze, instead of
// SIGSTOP to each member, when the cgroup and those below it list no
// process outside procwalk's pid namespace and no refused member. Frozen,
// no member can fork; one walk then finds them all, and the first signal
// is sent to each before thaw. It returns false, leaving the scope as it
// was, when the scope is not such a cgroup or it did not report frozen
// within stopWait (a member in uninterruptible sleep): then the members
// are stopped one by one (freeze).
func (x *execution) freezeCgroup(ctx context.Context) bool {
	cs := cgroupOf(x.plan.scope)
	if cs == nil || len(x.live) == 0 {
		return false
	}
	kill := x.cgroupKillFile(cs)
	if kill == "" {
		return false
	}
	dir := filepath.Dir(kill)
	f := filepath.Join(dir, "cgroup.freeze")
	if _, err := os.Stat(f); err != nil {
		return false
	}
	refused := make(map[int]bool, len(x.refused))
	for id := range x.refused {
		refused[id.PID] = true
	}
	// Members that joined since the plan are in the scope (it is the
	// cgroup) and are found by the walk below; only a process procwalk
	// cannot see or has refused must not be frozen.
	if why := cgroupLists(dir, func(pid int) bool { return pid == 0 || refused[pid] }); why != "" {
		x.report.Notes = append(x.report.Notes, "cgroup.freeze not used, members stopped one by one: "+why)
		return false
	}
	if err := os.WriteFile(f, []byte("1"), 0); err != nil {
		x.report.Notes = append(x.report.Notes, fmt.Sprintf("cgroup.freeze failed, members stopped one by one: %v", err))
		return false
	}
	x.frozen = f
	events := filepath.Join(dir, "cgroup.events")
	for deadline := time.Now().Add(stopWait); ; time.Sleep(stopPoll) {
		if b, err := os.ReadFile(events); err == nil && strings.Contains("\n"+string(b), "\nfrozen 1\n") {
			break
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			x.thaw()
			x.report.Notes = append(x.report.Notes, dir+" did not freeze within "+stopWait.String()+": members stopped one by one")
			return false
		}
	}
	x.report.Notes = append(x.report.Notes, "froze "+dir+" with cgroup.freeze for the first signal")
	for _, t := range x.newcomers() {
		x.enlist(t)
	}
	return true
}

// cgroupToKill returns the cgroup.kill file to write, or "" when the scope
// is not a cgroup v2 one, the file is missing, or the write would hit a
// process that is not one of the live victims. cgroup.kill kills every
// process in the cgroup and its descendants, unchecked: it is used only
// when a fresh, complete scan finds nothing else there (a refused member,
// a process outside the session, one hidden from us).
func (x *execution) cgroupToKill() string {
	cs := cgroupOf(x.plan.scope)
	if cs == nil || len(x.live) == 0 {
		return ""
	}
	f := x.cgroupKillFile(cs)
	if f == "" {
		return ""
	}
	live := make(map[int]bool, len(x.live))
	for _, v := range x.live {
		live[v.out.ID.PID] = true
	}
	// cgroup.procs lists every member, those /proc cannot show included:
	// a process outside procwalk's pid namespace is listed as 0.
	if why := cgroupLists(filepath.Dir(f), func(pid int) bool { return !live[pid] }); why != "" {
		x.report.Notes = append(x.report.Notes, "cgroup.kill not used, members signalled one by one: "+why)
		return ""
	}
	if !x.cgroupHoldsOnlyVictims(cs) {
		x.report.Notes = append(x.report.Notes, "cgroup.kill not used, members signalled one by one: /proc shows a process in the cgroup that is not a live target, or hides some")
		return ""
	}
	return f
}

// cgroupLists reads cgroup.procs of dir and of every cgroup below it, and
// says why when one lists a pid that bad refuses: 0 is a process outside
// this pid namespace, any other pid one that is not a target. "" when no
// pid listed is bad.
func cgroupLists(dir string, bad func(pid int) bool) string {
	var why string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return err
		}
		for _, field := range strings.Fields(string(b)) {
			pid, err := strconv.ParseUint(field, 10, 31)
			switch {
			case err != nil:
				why = fmt.Sprintf("%s/cgroup.procs holds %q, not a pid", path, field)
			case !bad(int(pid)):
			case pid == 0:
				why = path + " holds a process outside procwalk's pid namespace (listed as pid 0)"
			default:
				why = fmt.Sprintf("%s holds pid %d, which is not a target", path, pid)
			}
			if why != "" {
				return fs.SkipAll
			}
		}
		return nil
	})
	if err != nil && why == "" {
		why = "cannot read its members: " + err.Error()
	}
	return why
}

// cgroupOf returns the v2 cgroup of a cgroup or cgroup session scope.
func cgroupOf(s Scope) *CgroupScope {
	var cs *CgroupScope
	switch s := s.(type) {
	case *CgroupScope:
		cs = s
	case *SessionScope:
		cs = s.Cgroup
	}
	if cs == nil || cs.Hierarchy != "" {
		return nil
	}
	return cs
}

// cgroupKillFile is the cgroup.kill file of cs, or "" when there is none.
func (x *execution) cgroupKillFile(cs *CgroupScope) string {
	mount := cs.Mount
	if mount == "" {
		mount = x.k.fs.Cgroup2Mount()
	}
	if mount == "" {
		return ""
	}
	f := strings.TrimSuffix(mount, "/") + "/" + strings.Trim(cs.Path, "/") + "/cgroup.kill"
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// cgroupHoldsOnlyVictims scans /proc and reports whether every live
// process in cs is a live victim, and the scan saw every process.
func (x *execution) cgroupHoldsOnlyVictims(cs *CgroupScope) bool {
	snap, err := x.k.fs.Snapshot(procwalk.FieldCgroup)
	if err != nil || hidesProcesses(snap.Visibility) {
		return false
	}
	live := make(map[procwalk.ProcID]bool, len(x.live))
	for _, v := range x.live {
		live[v.out.ID] = true
	}
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if p.Kernel || p.Zombie() {
			continue
		}
		if p.Read&procwalk.FieldCgroup == 0 || cs.contains(p) && !live[p.ID] {
			return false // not ours, or we cannot tell
		}
	}
	return true
}

// noteScopeActions says, in a dry run, which scope-wide actions a real run
// may take besides the signals.
func (x *execution) noteScopeActions() {
	if len(x.plan.Targets) == 0 {
		return
	}
	if cs := cgroupOf(x.plan.scope); cs != nil {
		if f := x.cgroupKillFile(cs); f != "" {
			x.report.Notes = append(x.report.Notes, "would write 1 to "+f+" at the KILL stage, if the cgroup then holds only these targets")
		}
	}
	if s, ok := x.plan.scope.(*SessionScope); ok && s.Tmux {
		x.report.Notes = append(x.report.Notes, "would run tmux kill-session -t "+s.Name+" once every member is gone")
	}
}

// afterwards runs scope-wide clean-up: tmux kill-session once every member
// of a tmux session is gone.
func (x *execution) afterwards(ctx context.Context) {
	s, ok := x.plan.scope.(*SessionScope)
	if !ok || !s.Tmux {
		return
	}
	for _, o := range x.report.Outcomes {
		if !o.Result.Done() {
			x.report.Notes = append(x.report.Notes, "tmux session "+s.Name+" kept: not every member is gone")
			return
		}
	}
	socket := s.Attrs[session.AttrSocket]
	// "=" asks tmux for an exact name match, not a prefix.
	if err := x.k.tmux(ctx, "-S", socket, "kill-session", "-t", "="+s.Name); err != nil {
		if tmuxSessionGone(err) {
			// tmux ends a session with its last pane, and the server with
			// its last session: what kill-session was for is done.
			x.report.Notes = append(x.report.Notes, "tmux session "+s.Name+" ended with its last pane")
			return
		}
		x.report.Notes = append(x.report.Notes, fmt.Sprintf("tmux kill-session -t %s: %v", s.Name, err))
		return
	}
	x.report.Notes = append(x.report.Notes, "tmux kill-session -t "+s.Name)
}

// tmuxSessionGone reports whether a failed tmux command says its session
// or its server no longer exists. tmux says so only in words (3.x: "can't
// find session: NAME", "no server running on PATH", "error connecting to
// PATH (No such file or directory)" once the server removed its socket, or
// "(Connection refused)" before; "server exited unexpectedly" or "lost
// server" when the server exits, its last session gone, while the command
// talks to it; "no current target" from a server left with no session at
// all, on its way out). A server that is gone holds no session.
func tmuxSessionGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "can't find session") || strings.Contains(msg, "no server running") ||
		strings.Contains(msg, "server exited unexpectedly") || strings.Contains(msg, "lost server") ||
		strings.Contains(msg, "no current target") ||
		strings.Contains(msg, "error connecting to") &&
			(strings.Contains(msg, "No such file or directory") || strings.Contains(msg, "Connection refused"))
}

func runTmux(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "tmux", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
