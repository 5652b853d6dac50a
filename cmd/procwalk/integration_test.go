package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests read the real /proc and the processes they start themselves;
// .ci/run sets PROCWALK_INTEGRATION=1.
func integration(t *testing.T) {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("set PROCWALK_INTEGRATION=1 to run tests on the real /proc")
	}
}

// startGroup starts sh -c script with marker as its $0, in its own process
// group, and kills that group (only our own processes) when the test ends.
func startGroup(t *testing.T, script, marker string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script, marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

func TestIntegrationPSMeasuresCPU(t *testing.T) {
	integration(t)
	clearEnv(t)
	marker := fmt.Sprintf("procwalk-test-busy-%d", os.Getpid())
	busy := startGroup(t, "while :; do :; done", marker)
	time.Sleep(100 * time.Millisecond) // let sh exec and start spinning

	r := cli(t, "ps", "--json", "--pss", "--filter", marker, "--interval", "500ms")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		IntervalSeconds float64 `json:"interval_seconds"`
		Processes       []struct {
			PID        int      `json:"pid"`
			UID        *int     `json:"uid"`
			CPUPercent *float64 `json:"cpu_percent"`
			RSSBytes   uint64   `json:"rss_bytes"`
			PSSBytes   *uint64  `json:"pss_bytes"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Processes) != 1 || doc.Processes[0].PID != busy.Process.Pid {
		t.Fatalf("want only pid %d, got %+v", busy.Process.Pid, doc.Processes)
	}
	p := doc.Processes[0]
	// A spinning shell uses a core when it can get one; on a shared
	// 2-core machine it still gets a good part of it.
	if p.CPUPercent == nil || *p.CPUPercent < 10 || *p.CPUPercent > 105 {
		t.Errorf("busy loop cpu_percent = %v over %vs, want 10..105", p.CPUPercent, doc.IntervalSeconds)
	}
	if p.UID == nil || *p.UID != os.Geteuid() {
		t.Errorf("uid = %v, want %d", p.UID, os.Geteuid())
	}
	if p.PSSBytes == nil || *p.PSSBytes == 0 || *p.PSSBytes > p.RSSBytes {
		t.Errorf("pss_bytes = %v with rss_bytes %d: want 0 < PSS <= RSS", p.PSSBytes, p.RSSBytes)
	}
}

// residentBytes reads /proc/<pid>/statm's resident pages, in bytes.
func residentBytes(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * uint64(os.Getpagesize())
}

func TestIntegrationTreeOfOwnProcesses(t *testing.T) {
	integration(t)
	clearEnv(t)
	marker := fmt.Sprintf("procwalk-test-tree-%d", os.Getpid())
	parent := startGroup(t, "sleep 60 & sleep 60 & wait", marker)
	pid := strconv.Itoa(parent.Process.Pid)

	var r result
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = cli(t, "tree", pid)
		if r.code == exitOK && strings.Count(r.stdout, "sleep") == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != exitOK || len(lines) != 4 {
		t.Fatalf("exit %d, want a header and 3 lines:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// PID RSS PROCS TREE-RSS COMMAND: the shell with 3 processes, then
	// its two sleeps.
	root := strings.Fields(lines[1])
	if root[0] != pid || root[len(root)-1] != "sh" || root[3] != "3" {
		t.Errorf("root line %q: want pid %s, 3 processes, sh", lines[1], pid)
	}
	if !strings.Contains(lines[2], "├─ sleep") || !strings.Contains(lines[3], "└─ sleep") {
		t.Errorf("children lines:\n%s\n%s", lines[2], lines[3])
	}
	// The subtree RSS is the sum over the processes we started (idle, so
	// their RSS holds still).
	sum := residentBytes(t, parent.Process.Pid)
	for _, l := range lines[2:] {
		child, err := strconv.Atoi(strings.Fields(l)[0])
		if err != nil {
			t.Fatal(err)
		}
		sum += residentBytes(t, child)
	}
	if got, want := strings.Join(root[4:6], " "), formatBytes(sum); got != want {
		t.Errorf("TREE-RSS %s, want %s (sum of statm)", got, want)
	}
}

// ps on the real host, with rates: a table that includes the test itself.
func TestIntegrationPSRealHost(t *testing.T) {
	integration(t)
	clearEnv(t)
	r := cli(t, "--interval", "200ms", "ps")
	if header := strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0]); r.code != exitOK || len(header) == 0 || header[0] != "PID" {
		t.Fatalf("exit %d:\n%.500s\n%s", r.code, r.stdout, r.stderr)
	}
	self := strconv.Itoa(os.Getpid())
	found := false
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == self {
			found = true
		}
	}
	if !found {
		t.Errorf("the test process %s is not in the table", self)
	}
}
