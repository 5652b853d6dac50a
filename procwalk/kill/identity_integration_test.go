//go:build linux

package kill

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// identity_integration_test.go: point 6 of issue 14 on a real kernel. A pid
// reused within one clock tick gives the new process the old one's (pid,
// start ticks). In a user and pid namespace of its own the test is pid 1
// and root of the namespace, so it may write ns_last_pid and have the next
// fork take the pid just freed.

// sameTickHelperEnv marks the test binary re-run inside the namespace.
const sameTickHelperEnv = "PROCWALK_SAME_TICK_HELPER"

// sameTickSkip starts the line by which the namespace side says why it
// could not run the case.
const sameTickSkip = "same-tick: skip: "

// TestIntegrationSameTickReuse: a kill planned while its target A was less
// than one tick old, A gone and its pid taken in that same tick by B, a
// process of another program: executing the plan refuses the target as
// refused_identity and B is not signalled.
func TestIntegrationSameTickReuse(t *testing.T) {
	if os.Getenv(sameTickHelperEnv) == "1" {
		sameTickInNamespace(t)
		return
	}
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("integration test: set PROCWALK_INTEGRATION=1 to run it")
	}
	for _, tool := range []string{"unshare", "sleep", "cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// --kill-child: if this test dies, the namespace's init goes with it,
	// and every process of the namespace with that.
	cmd := exec.CommandContext(ctx, "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--kill-child",
		os.Args[0], "-test.run=^TestIntegrationSameTickReuse$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), sameTickHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in the namespace:\n%s", out)
	if i := strings.Index(string(out), sameTickSkip); i >= 0 {
		line, _, _ := strings.Cut(string(out[i+len(sameTickSkip):]), "\n")
		t.Skip(line)
	}
	if err != nil {
		t.Fatalf("the namespace side failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatal("the namespace side did not pass")
	}
}

// sameTickInNamespace is the test as pid 1 of its namespace.
func sameTickInNamespace(t *testing.T) {
	if os.Getpid() != 1 {
		t.Fatalf("%s=1 outside a pid namespace of its own (pid %d)", sameTickHelperEnv, os.Getpid())
	}
	skip := func(format string, args ...any) {
		fmt.Printf(sameTickSkip+format+"\n", args...)
		t.SkipNow()
	}
	const lastPID = "/proc/sys/kernel/ns_last_pid"
	if err := os.WriteFile(lastPID, []byte("100"), 0); err != nil {
		skip("cannot write %s as the namespace's root: %v", lastPID, err)
	}
	fs, err := procwalk.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKiller(fs, Config{Requester: "test", Grace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Each attempt needs A's start, the plan's walk, A's end and B's
	// start in one 10 ms tick: on a loaded machine most attempts miss.
	var notYoung, otherPID, otherTick int
	const attempts = 300
	for i := 0; i < attempts; i++ {
		a := exec.Command("sleep", "1000")
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		idA, err := fs.ReadProcID(a.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := k.Plan(ProcessScope{ID: idA})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Targets) != 1 || plan.Targets[0].ID != idA {
			t.Fatalf("plan for %v: targets %v, skipped %v", idA, plan.Targets, plan.Skipped)
		}
		a.Process.Kill()
		a.Wait()
		if !plan.Targets[0].young {
			notYoung++
			continue
		}
		// The next fork takes A's pid.
		if err := os.WriteFile(lastPID, []byte(strconv.Itoa(idA.PID-1)), 0); err != nil {
			t.Fatal(err)
		}
		b := exec.Command("cat")
		stdin, err := b.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		idB, err := fs.ReadProcID(b.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if idB != idA {
			stdin.Close()
			b.Wait()
			if idB.PID != idA.PID {
				otherPID++
			} else {
				otherTick++
			}
			continue
		}
		// B holds A's identity, pid and start tick.
		report := k.Execute(context.Background(), plan)
		stdin.Close()
		err = b.Wait() // cat ends at EOF with status 0, unless it was signalled
		t.Logf("attempt %d: A and B are both %v; outcomes %+v", i+1, idA, report.Outcomes)
		if len(report.Outcomes) != 1 || report.Outcomes[0].Result != ResultIdentityChanged {
			t.Errorf("outcomes %+v, want one refused_identity", report.Outcomes)
		}
		if err != nil {
			t.Errorf("B, which took A's pid in A's tick, was signalled: %v", err)
		}
		return
	}
	skip("in %d attempts A and B never shared a tick (%d plans saw A older than a tick, %d times B got another pid, %d times another tick)",
		attempts, notYoung, otherPID, otherTick)
}
