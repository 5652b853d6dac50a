//go:build linux

package kill

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphan_integration_test.go: a process group that loses its last link to
// its session (its last member whose parent is in another group of the
// session exits) while a member is stopped gets SIGHUP and SIGCONT from
// the kernel, every process of it. A kill that stops targets must not
// bring that about for a process it leaves alone: a refused member of the
// group, or one outside the scope. The leader's death inside the stop
// window is the hook's (the test kills its own child there), so that the
// window is hit every time; in a real kill it is procwalk's own signal to
// the leader, sent before the other members have theirs (a CLI test
// failed 3 of 3 so).

// waitOwnChildren waits until pid has children whose comms are want.
func waitOwnChildren(t *testing.T, pid int, want ...string) []int {
	t.Helper()
	slices.Sort(want)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var comms []string
		pids := childPIDs(t, pid)
		for _, c := range pids {
			comms = append(comms, liveStat(t, c).Comm)
		}
		slices.Sort(comms)
		if slices.Equal(comms, want) {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d has children %q, want %q", pid, comms, want)
		}
	}
}

func TestLiveRefusedGroupMemberNotHungUp(t *testing.T) {
	needIntegration(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	keep := filepath.Join(t.TempDir(), "keepme") // the protected name
	if out, err := exec.Command("cp", sleep, keep).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	for _, scope := range []string{"pgrp", "tree"} {
		t.Run(scope, func(t *testing.T) {
			// The leader links the group to the test's session: its
			// parent, the test, is in another group of it.
			leader := startOwnGroup(t, `trap "" TERM; sleep 300 & sleep 301 & '`+keep+`' 302 & wait`)
			children := waitOwnChildren(t, leader.Process.Pid, "sleep", "sleep", "keepme")
			var kept int
			for _, c := range children {
				if liveStat(t, c).Comm == "keepme" {
					kept = c
				}
			}
			// The hook reaps the leader, so startOwnGroup's cleanup leaves
			// the group alone: keepme is ended through its own pidfd.
			keptProc, err := os.FindProcess(kept)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { keptProc.Kill(); keptProc.Release() })
			keptID := liveID(t, kept)
			k := liveKiller(t, Config{Grace: 200 * time.Millisecond, Protected: []string{"keepme"}, Requester: "test"})
			leaderDied := false
			k.hooks.stopped = func() {
				if leaderDied {
					return
				}
				leaderDied = true
				// The group loses its link now: the leader's parent
				// (the test) reaps it.
				leader.Process.Kill()
				leader.Wait()
			}
			var sc Scope = GroupScope{PGRP: leader.Process.Pid}
			if scope == "tree" {
				sc = TreeScope{Root: liveID(t, leader.Process.Pid)} // the tree is cut at keepme
			}
			rep, err := k.TerminateScope(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			if !leaderDied {
				t.Fatal("the stop window never came")
			}
			// Dead: a zombie, or gone (its new parent reaped it; the pid may
			// be another process's by now, hence the start time).
			if st, err := mustFS(t).ReadStat(kept); err != nil || st.StartTicks != keptID.StartTicks || st.State == 'Z' {
				t.Errorf("the refused member (pid %d) is dead (state %q, %s); notes %q", kept, stateOf(kept), deathOf(kept), rep.Notes)
			}
			for _, o := range rep.Outcomes {
				if o.ID.PID != kept && o.ID.PID != leader.Process.Pid && o.Result != ResultKilled {
					t.Errorf("pid %d (%s): %v, want killed", o.ID.PID, o.Comm, o.Result)
				}
			}
		})
	}
}

// A group whose link to its session the kill does not break (a process
// that is no target, whose parent is no target either: guard, or
// procwalk in its own job's group) is stopped as ever: nothing the kill
// does can orphan it.
func TestLiveGroupWithStableLinkIsStopped(t *testing.T) {
	needIntegration(t)
	// The outer shell is no target and links the group; the inner shell
	// and its sleeps are the tree killed.
	outer := startOwnGroup(t, `sh -c 'trap "" TERM; sleep 300 & sleep 301 & wait' & exec sleep 303`)
	inner := waitOwnChildren(t, outer.Process.Pid, "sh")[0]
	sleeps := waitOwnChildren(t, inner, "sleep", "sleep")
	k := liveKiller(t, Config{Grace: 200 * time.Millisecond, Requester: "test"})
	var states []byte
	k.hooks.stopped = func() {
		if states == nil {
			for _, pid := range append([]int{inner}, sleeps...) {
				states = append(states, stateOf(pid))
			}
		}
	}
	rep, err := k.TerminateScope(context.Background(), TreeScope{Root: liveID(t, inner)})
	if err != nil {
		t.Fatal(err)
	}
	if string(states) != "TTT" {
		t.Errorf("states of the tree while stopped %q, want TTT; notes %q", states, rep.Notes)
	}
	for _, o := range rep.Outcomes {
		if o.Result != ResultKilled {
			t.Errorf("pid %d (%s): %v, want killed", o.ID.PID, o.Comm, o.Result)
		}
	}
	if s := stateOf(outer.Process.Pid); s == '?' || s == 'Z' {
		t.Errorf("the outer shell, no target, is dead (state %q)", s)
	}
}

// deathOf says what ended zombie pid, from the exit code its stat holds
// (field 52, as waitpid reports it): a SIGHUP is the kernel's for an
// orphaned group with a stopped member, a SIGKILL came from elsewhere.
func deathOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(b), ')')
	if err != nil || i < 0 {
		return "its end unknown"
	}
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 50 {
		return "its end unknown"
	}
	var status syscall.WaitStatus
	if _, err := fmt.Sscan(f[49], (*uint32)(&status)); err != nil {
		return "its end unknown"
	}
	if status.Signaled() {
		return "killed by " + status.Signal().String()
	}
	return fmt.Sprintf("exited with %d", status.ExitStatus())
}
