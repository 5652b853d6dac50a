//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// TestIntegrationKillSecondSignal: timeout(1) sends its TERM to procwalk
// and to procwalk's process group, two at once; a user presses Ctrl-C
// twice. The first asks for a clean stop, the second ends procwalk by that
// signal, after the sentinel has continued whatever is stopped: nothing
// of the tree may be left stopped, whichever stage the signals hit. The
// tree keeps forking (a storm below a TERM-ignoring shell; the test ends
// it within seconds: ulimit -u does not bind root), so its stop-and-walk
// rounds hold it stopped for much of the time. Its children stay below
// the shell: an orphan in the tree's process group would be no target,
// and a group holding one is not stopped (see kill's mixedGroups). The
// one child that obeys TERM makes the first line, early in the grace.
func TestIntegrationKillSecondSignal(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tree := startGroup(t, `trap "" TERM INT; ulimit -u 400 2>/dev/null; env --default-signal=TERM sleep 299 & while :; do sleep 300 & sleep 0.01; done`, "kill-second-signal-test")
			waitChildren(t, tree.Process.Pid, 1)
			cmd := exec.Command(bin, "kill", "--yes", "--grace", "30s", "--tree", strconv.Itoa(tree.Process.Pid))
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			lines := bufio.NewReader(out)
			if _, err := lines.ReadString('\n'); err != nil {
				t.Fatalf("no first line: %v", err)
			}
			// Two in a row, as timeout(1) sends them; the second once the
			// first is delivered (two pending ones would merge into one).
			cmd.Process.Signal(sig)
			waitDelivered(t, cmd.Process.Pid, sig)
			cmd.Process.Signal(sig)
			go func() {
				for {
					if _, err := lines.ReadString('\n'); err != nil {
						return
					}
				}
			}()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("procwalk still runs 60 s after two signals")
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			t.Logf("procwalk ended: %v", err)
			// By the second signal, or, when the clean stop the first asked
			// for was done before the second came, exit 1 (interrupted).
			if ws.Signaled() && ws.Signal() != sig || !ws.Signaled() && ws.ExitStatus() != exitError {
				t.Errorf("procwalk ended with %v after two %v, want death by the second or exit 1", err, sig)
			}
			var stopped []int
			for _, pid := range liveDescendants(t, tree.Process.Pid) {
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
					s := string(b)
					if i := lastParen(s); i > 0 && i+2 < len(s) && s[i+2] == 'T' {
						stopped = append(stopped, pid)
					}
				}
			}
			if st := stateLetter(tree.Process.Pid); st == 'T' {
				stopped = append(stopped, tree.Process.Pid)
			}
			if len(stopped) > 0 {
				t.Errorf("%d processes left stopped after procwalk ended: %v", len(stopped), stopped)
			}
		})
	}
}

func lastParen(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' {
			return i
		}
	}
	return -1
}

func stateLetter(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return '?'
	}
	s := string(b)
	i := lastParen(s)
	if i < 0 || i+2 >= len(s) {
		return '?'
	}
	return s[i+2]
}

// waitDelivered waits until sig is no longer pending for pid (its
// handler, Go's, has taken it).
func waitDelivered(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (sig - 1)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			return
		}
		pending := uint64(0)
		for _, line := range strings.Split(string(b), "\n") {
			for _, key := range []string{"SigPnd:", "ShdPnd:"} {
				if v, ok := strings.CutPrefix(line, key); ok {
					n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
					pending |= n
				}
			}
		}
		if pending&bit == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v still pending for pid %d after 60 s", sig, pid)
		}
	}
}

// The sentinel says what it did on procwalk's stderr, which runEnv wraps
// in the line cap: the sentinel gets the file below it. (It got none, and
// its word that it continued a stopped tree after procwalk died was lost.)
func TestSentinelCommandStderr(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		name   string
		stderr io.Writer
		want   *os.File
	}{
		{"the file", f, f},
		{"the file under the line cap", procwalk.CapLines(f), f},
		{"no file", procwalk.CapLines(&strings.Builder{}), nil},
	} {
		e := &env{stderr: tt.stderr, sentinel: kill.SentinelCommand{Path: "/proc/self/exe", Args: []string{sentinelArg}}}
		if got := e.sentinelCommand().Stderr; got != tt.want {
			t.Errorf("%s: the sentinel's stderr is %v, want %v", tt.name, got, tt.want)
		}
	}
}
