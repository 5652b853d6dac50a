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

	"github.com/procwalk/procwalk/procwalk"
)

// scope_actions.go holds what acts on a scope as a whole rather than on one
// process: cgroup.kill at the KILL stage and tmux kill-session afterwards.
// Both reach beyond the pidfds, so both are taken only when they hit
// nothing but what the plan meant to end.

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
	if why := cgroupListsOnly(filepath.Dir(f), live); why != "" {
		x.report.Notes = append(x.report.Notes, "cgroup.kill not used, members signalled one by one: "+why)
		return ""
	}
	if !x.cgroupHoldsOnlyVictims(cs) {
		x.report.Notes = append(x.report.Notes, "cgroup.kill not used, members signalled one by one: /proc shows a process in the cgroup that is not a live target, or hides some")
		return ""
	}
	return f
}

// cgroupListsOnly reads cgroup.procs of dir and of every cgroup below it,
// and says why not when one lists a pid that is not in live: 0 for a
// process outside this pid namespace, or a process that is not a target.
// "" when every pid listed is a live target.
func cgroupListsOnly(dir string, live map[int]bool) string {
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
			case pid == 0:
				why = path + " holds a process outside procwalk's pid namespace (listed as pid 0)"
			case !live[int(pid)]:
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
	socket := s.Attrs[procwalk.AttrSocket]
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
// talks to it). A server that is gone holds no session.
func tmuxSessionGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "can't find session") || strings.Contains(msg, "no server running") ||
		strings.Contains(msg, "server exited unexpectedly") || strings.Contains(msg, "lost server") ||
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
