//go:build linux

package kill

import (
	"context"
	"errors"
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
// process: cgroup.freeze around each signal, the cgroup's remains after
// the end, and tmux kill-session afterwards. They reach beyond the pidfds,
// so they are taken only when they hit nothing but what the plan meant to
// end.

// freezeCgroup stops a cgroup v2 scope with cgroup.freeze, instead of
// SIGSTOP to each member, when the part of the cgroup tree that is the
// scope lists no process outside procwalk's pid namespace and no refused
// member, and nothing below it belongs to another scope. Frozen, no member
// can fork; one walk then finds them all and enlists them, and the signal
// that follows goes to each through its own pidfd before thaw. It returns
// false, leaving the scope as it was, when the scope is not such a cgroup,
// the sentinel cannot hold it (see Sentinel) or it did not report frozen
// within stopWait (a member in uninterruptible sleep): then the members
// are stopped one by one (freeze).
func (x *execution) freezeCgroup(ctx context.Context, stage string) bool {
	cs := cgroupOf(x.plan.scope)
	dir := x.plan.cgroupDir
	if cs == nil || !cs.v2() || dir == "" || len(x.live) == 0 {
		return false
	}
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
	if why := cgroupLists(dir, cs, func(pid int) bool { return pid == 0 || refused[pid] }); why != "" {
		x.note("cgroup.freeze not used, members stopped one by one: " + why)
		return false
	}
	if !x.holdCgroup(dir) {
		return false
	}
	if err := os.WriteFile(f, []byte("1"), 0); err != nil {
		x.note(fmt.Sprintf("cgroup.freeze failed, members stopped one by one: %v", err))
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
			x.note(dir + " did not freeze within " + stopWait.String() + ": members stopped one by one")
			return false
		}
	}
	x.note("froze " + dir + " with cgroup.freeze for " + stage)
	if x.k.hooks.stopped != nil {
		x.k.hooks.stopped()
	}
	for _, t := range x.newcomers() {
		x.enlist(t)
	}
	return true
}

// cgroupLists reads cgroup.procs of dir, the directory of scope cs's
// cgroup, and of every cgroup below it, and says why when one lists a pid
// that bad refuses (0 is a process outside this pid namespace, any other
// pid one that is not a target), or a cgroup below that is not of the
// scope lists any (a plain path's child cgroup is a session of its own).
// "" when none does.
func cgroupLists(dir string, cs *CgroupScope, bad func(pid int) bool) string {
	var why string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		pids, err := readCgroupProcs(path)
		if err != nil {
			return err
		}
		mine := cs == nil || cs.inScope(strings.TrimSuffix(cs.Path, "/")+strings.TrimPrefix(path, dir))
		for _, pid := range pids {
			switch {
			case pid < 0:
				why = fmt.Sprintf("%s/cgroup.procs holds something that is not a pid", path)
			case !mine:
				why = fmt.Sprintf("%s holds pid %d, which belongs to another cgroup session", path, pid)
			case !bad(pid):
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

// readCgroupProcs reads the pids a cgroup.procs file lists; -1 stands for
// a line that is not one.
func readCgroupProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, field := range strings.Fields(string(b)) {
		pid, err := strconv.ParseUint(field, 10, 31)
		if err != nil {
			pids = append(pids, -1)
			continue
		}
		pids = append(pids, int(pid))
	}
	return pids, nil
}

// cgroupLeft reads, after the end, what the scope's part of the cgroup
// tree still holds that a walk of /proc cannot report: processes outside
// procwalk's pid namespace (listed as 0) and processes /proc does not
// show (hidepid). seen are the pids the last walk saw.
func (x *execution) cgroupLeft(seen func(pid int) bool) {
	cs := cgroupOf(x.plan.scope)
	dir := x.plan.cgroupDir
	if cs == nil || dir == "" {
		return
	}
	outside, hidden := 0, 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || !cs.inScope(strings.TrimSuffix(cs.Path, "/")+strings.TrimPrefix(path, dir)) {
			return nil
		}
		pids, err := readCgroupProcs(path)
		if err != nil {
			return err
		}
		for _, pid := range pids {
			switch {
			case pid == 0:
				outside++
			case pid > 0 && !seen(pid) && x.k.fs.Hidden(pid):
				hidden++
			}
		}
		return nil
	})
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		x.report.Left = append(x.report.Left, fmt.Sprintf("cannot read what %s still holds: %v", dir, err))
	case outside > 0:
		x.report.Left = append(x.report.Left, fmt.Sprintf("%s still holds %d processes outside procwalk's pid namespace (cgroup.procs lists them as 0): procwalk cannot verify them, so it signalled none of them", dir, outside))
	}
	if hidden > 0 {
		x.report.Left = append(x.report.Left, fmt.Sprintf("%s still holds %d processes that /proc hides from this user (hidepid): run as root", dir, hidden))
	}
}

// cgroupOf returns the cgroup of a cgroup or cgroup session scope.
func cgroupOf(s Scope) *CgroupScope {
	switch s := s.(type) {
	case *CgroupScope:
		return s
	case *SessionScope:
		return s.Cgroup
	}
	return nil
}

// cgroupDir finds the directory of cgroup scope cs in this mount
// namespace, on the hierarchy of its members' lines ("" when it is not
// mounted here or, for a v1 session, no member shows the hierarchy).
func (k *Killer) cgroupDir(cs *CgroupScope, members []*procwalk.Process) string {
	line := procwalk.CgroupLine{Controllers: cs.Hierarchy, Path: cs.Path}
	switch {
	case cs.v2() && cs.Mount != "":
		return filepath.Join(cs.Mount, cs.Path)
	case !cs.v2() && cs.session:
		line.HierarchyID = -1
		for _, m := range members {
			if l, ok := cs.line(m); ok {
				line.HierarchyID, line.Controllers = l.HierarchyID, l.Controllers
				break
			}
		}
		if line.HierarchyID < 0 {
			return ""
		}
	case !cs.v2():
		line.HierarchyID = 1 // any v1 hierarchy: found by its controllers
	}
	dir, ok := k.fs.CgroupDir(line)
	if !ok {
		return ""
	}
	return dir
}

// noteScopeActions says, in a dry run, which scope-wide actions a real run
// may take besides the signals.
func (x *execution) noteScopeActions() {
	if len(x.plan.Targets) == 0 {
		return
	}
	if cs := cgroupOf(x.plan.scope); cs != nil && cs.v2() && x.plan.cgroupDir != "" {
		x.note("would freeze " + x.plan.cgroupDir + " with cgroup.freeze around each signal, if it then holds only processes of the scope that procwalk can see and may signal")
	}
	if s, ok := x.plan.scope.(*SessionScope); ok && s.Tmux {
		x.note("would run tmux kill-session -t " + s.Name + " once every member is gone")
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
			x.note("tmux session " + s.Name + " kept: not every member is gone")
			return
		}
	}
	socket := s.Attrs[session.AttrSocket]
	// "=" asks tmux for an exact name match, not a prefix.
	if err := x.k.tmux(ctx, "-S", socket, "kill-session", "-t", "="+s.Name); err != nil {
		if tmuxSessionGone(err) {
			// tmux ends a session with its last pane, and the server with
			// its last session: what kill-session was for is done.
			x.note("tmux session " + s.Name + " ended with its last pane")
			return
		}
		x.note(fmt.Sprintf("tmux kill-session -t %s: %v", s.Name, err))
		return
	}
	x.note("tmux kill-session -t " + s.Name)
}

// tmuxSessionGone reports whether a failed tmux command says its session
// or its server no longer exists. tmux says so only in words (3.x: "can't
// find session: NAME", "no server running on PATH", "error connecting to
// PATH (No such file or directory)" once the server removed its socket, or
// "(Connection refused)" before; "server exited unexpectedly" or "lost
// server" when the server exits, its last session gone, while the command
// talks to it; "no current target" from a server whose last session ended
// and that has not exited yet: tmux's cmd-find finds no session at all to
// start from). A server that is gone, or has no session, holds none.
func tmuxSessionGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "can't find session") || strings.Contains(msg, "no server running") ||
		strings.Contains(msg, "no current target") ||
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

// holdCgroup has the keeper hold the cgroup at dir before it is frozen.
func (x *execution) holdCgroup(dir string) bool {
	kp := x.keep()
	if kp == nil {
		return false
	}
	if err := kp.cgroup(dir); err != nil {
		x.note("cgroup.freeze not used: " + err.Error())
		return false
	}
	return true
}
