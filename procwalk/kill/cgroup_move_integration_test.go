//go:build linux

package kill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cgroup_move_integration_test.go: issue 22, class 4. From inside a pid
// namespace, a process of the host moved into the cgroup being killed
// after the last check and before SIGKILL must not be killed: the test's
// hook (Killer.hooks.beforeKill) asks the host side to move its sleeper in
// at exactly that point and waits until it has. Before, cgroup.kill was
// written there and killed it, exit 0.

const moveHelperEnv = "PROCWALK_MOVE_HELPER" // "<cgroup path>|<signal>"

func TestLiveCgroupMoveInBeforeKill(t *testing.T) {
	if env := os.Getenv(moveHelperEnv); env != "" {
		moveInNamespace(t, env)
		return
	}
	needIntegration(t)
	mount := mustFS(t).Cgroup2Mount()
	if mount == "" || os.Geteuid() != 0 {
		t.Skip("needs root and a cgroup2 mount")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare (util-linux)")
	}
	for i, tt := range []struct {
		name   string
		signal string // the first signal
		sub    string // where the host's process is moved, below the cgroup
	}{
		{"KILL at once", "KILL", ""},
		{"TERM then KILL", "TERM", ""},
		{"into a child cgroup", "KILL", "child"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("procwalk-test-move-%d-%d", os.Getpid(), i)
			dir := filepath.Join(mount, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Skipf("cannot create a cgroup: %v", err)
			}
			t.Cleanup(func() { removeTestCgroup(t, dir) })
			target := dir
			if tt.sub != "" {
				target = filepath.Join(dir, tt.sub)
				if err := os.Mkdir(target, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { removeTestCgroup(t, target) }) // runs before dir's: LIFO
			}
			host := startOwn(t, "sleep", "300")
			hostStart := liveStat(t, host.Process.Pid).StartTicks
			// Two pipes: the helper asks for the move on one, the host
			// answers once it is done on the other.
			askR, askW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			doneR, doneW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "--kill-child", os.Args[0],
				"-test.run=^TestLiveCgroupMoveInBeforeKill$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), moveHelperEnv+"=/"+name+"|"+tt.signal)
			cmd.ExtraFiles = []*os.File{askW, doneR} // fds 3 and 4
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			askW.Close()
			doneR.Close()
			moved := false
			if _, err := bufio.NewReader(askR).ReadString('\n'); err == nil {
				if err := os.WriteFile(filepath.Join(target, "cgroup.procs"), []byte(strconv.Itoa(host.Process.Pid)), 0); err != nil {
					t.Errorf("moving the host's sleeper in: %v", err)
				}
				moved = true
			}
			doneW.Close() // the answer: EOF
			askR.Close()
			err = cmd.Wait()
			t.Logf("in the namespace:\n%s", out)
			if !moved {
				t.Fatal("the hook never asked for the move")
			}
			st := liveStat(t, host.Process.Pid)
			if st.StartTicks != hostStart || st.State == 'Z' || st.State == 'T' {
				t.Errorf("the host's sleeper moved in before SIGKILL is in state %c, want it alive and running", st.State)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.freeze")); strings.TrimSpace(string(b)) != "0" {
				t.Errorf("%s/cgroup.freeze is %q after the kill, want 0", dir, b)
			}
			if err != nil || !strings.Contains(out.String(), "--- PASS") {
				t.Fatalf("the namespace side failed: %v", err)
			}
		})
	}
}

// moveInNamespace is the namespace side: a TERM-ignoring sleeper of its
// own in the cgroup, killed with the hook asking the host to move its
// sleeper in right before SIGKILL.
func moveInNamespace(t *testing.T, env string) {
	cg, sigName, _ := strings.Cut(env, "|")
	sig, err := ParseSignal(sigName)
	if err != nil {
		t.Fatal(err)
	}
	ask, done := os.NewFile(3, "ask"), os.NewFile(4, "done")
	fs := mustFS(t)
	dir := filepath.Join(fs.Cgroup2Mount(), cg)
	inner := startOwn(t, "sh", "-c", fmt.Sprintf(`trap "" TERM; echo $$ > %s/cgroup.procs && exec sleep 300`, dir))
	waitComm(t, inner.Process.Pid, "sleep")
	k := liveKiller(t, Config{Signal: sig, Grace: 200 * time.Millisecond})
	k.hooks.beforeKill = func() {
		fmt.Fprintln(ask, "move")
		done.Read(make([]byte, 1)) // EOF once the host has moved its sleeper
	}
	var plan *Plan
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if plan, err = k.Plan(&CgroupScope{Path: cg}); err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) == 1 && plan.Targets[0].Comm == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %+v, want the namespace's sleeper alone", plan.Targets)
		}
	}
	r := k.Execute(context.Background(), plan)
	t.Logf("notes %q; left %q; err %v", r.Notes, r.Left, r.Err())
	if len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultKilled {
		t.Errorf("outcomes %+v, want the namespace's sleeper killed", r.Outcomes)
	}
	if !errors.Is(r.Err(), ErrLeft) || len(r.Left) != 1 || !strings.Contains(r.Left[0], "1 processes outside procwalk's pid namespace") {
		t.Errorf("err %v, left %q: want the host's process reported as left in the cgroup", r.Err(), r.Left)
	}
	if sig := exitSignal(t, inner); sig != syscall.SIGKILL {
		t.Errorf("the namespace's sleeper died of %v, want SIGKILL", sig)
	}
}
