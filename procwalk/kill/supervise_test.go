//go:build linux

package kill_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// Supervise reaps every child of its process, so it runs in a process of
// its own: this test binary, re-executed with the helper's variable.
const superviseHelperEnv = "PROCWALK_SUPERVISE_HELPER"

func TestSuperviseHelperProcess(t *testing.T) {
	mode := os.Getenv(superviseHelperEnv)
	if mode == "" {
		t.Skip("helper process of TestIntegrationSupervise")
	}
	fs, err := procwalk.NewFS("/proc")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	cfg := kill.SuperviseConfig{Interval: 50 * time.Millisecond, Grace: 500 * time.Millisecond, Name: "sh",
		Log: func(msg string) { fmt.Println("log:", msg) }}
	var cmd *exec.Cmd
	switch mode {
	case "timeout":
		cfg.Timeout = 300 * time.Millisecond
		cmd = exec.Command("sh", "-c", "exec sleep 30")
	case "exit":
		cmd = exec.Command("sh", "-c", "exit 3")
		cfg.Clock = fixedClock(time.Unix(1700000000, 0))
	case "leftover":
		// A daemon that double-forks stays in the tree (subreaper): it is
		// ended when the command exits, and reaped here. The subshell has
		// forked it before sh goes on to exit.
		cmd = exec.Command("sh", "-c", "(sleep 30 &); exit 0")
	}
	res, err := kill.Supervise(context.Background(), fs, cmd, cfg)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	status := "never reaped"
	if res.Status != nil {
		status = fmt.Sprintf("exit %d signaled %v", res.Status.ExitStatus(), res.Status.Signaled())
	}
	fmt.Printf("enforced=%q status=%s leftovers=%v orphans=%d abandoned=%d\n", res.Enforced, status, res.Leftovers, res.OrphansReaped, res.Abandoned)
	if mode == "exit" {
		fmt.Printf("start=%d end=%d\n", res.Start.Unix(), res.End.Unix())
	}
	os.Exit(0)
}

func TestIntegrationSupervise(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("runs and ends real processes: set PROCWALK_INTEGRATION=1")
	}
	for _, tt := range []struct{ mode, want string }{
		{"timeout", `enforced="timeout 300ms reached" status=exit -1 signaled true leftovers=false orphans=0 abandoned=0`},
		{"exit", `enforced="" status=exit 3 signaled false leftovers=false orphans=0 abandoned=0`},
		{"leftover", `enforced="" status=exit 0 signaled false leftovers=true orphans=1 abandoned=0`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSuperviseHelperProcess$")
		cmd.Env = append(os.Environ(), superviseHelperEnv+"="+tt.mode)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s: %v, want %q in:\n%s", tt.mode, err, tt.want, out)
		}
		// Start and End come from the injected clock.
		if tt.mode == "exit" && !strings.Contains(string(out), "start=1700000000 end=1700000000") {
			t.Errorf("%s: start and end not from the injected clock:\n%s", tt.mode, out)
		}
		if tt.mode == "timeout" && !strings.Contains(string(out), "log: timeout 300ms reached: terminating the tree of sh") {
			t.Errorf("%s: no log line of the action in:\n%s", tt.mode, out)
		}
	}
}

// fixedClock is a clock stopped at one time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }
