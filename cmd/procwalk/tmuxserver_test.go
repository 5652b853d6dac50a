//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testTmux is a tmux server of a test's own (-L socket, no config file),
// killed with its socket when the test ends: a real terminal to type into
// (send-keys) and read (capture-pane).
type testTmux struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, socket string) *testTmux {
	t.Helper()
	x := &testTmux{t: t, socket: socket}
	t.Cleanup(func() {
		exec.Command("tmux", "-L", socket, "kill-server").Run()
		// kill-server, or a server whose last pane ended, may leave the
		// socket; discovery would dial it later. Where tmux puts it:
		dir := os.Getenv("TMUX_TMPDIR")
		if dir == "" {
			dir = "/tmp"
		}
		os.Remove(filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), socket))
	})
	return x
}

// out runs tmux args on the server and returns what it printed.
func (x *testTmux) out(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x *testTmux) run(args ...string) { x.t.Helper(); x.out(args...) }

// screen is the pane's screen, and its history with history.
func (x *testTmux) screen(history bool) string {
	x.t.Helper()
	if history {
		return x.out("capture-pane", "-p", "-J", "-S", "-")
	}
	return x.out("capture-pane", "-p")
}

// waitFor polls the screen until ok says it is what the test waits for; a
// loaded machine is slow, so the wait is long and ends as soon as ok.
func (x *testTmux) waitFor(what string, ok func(screen string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := x.screen(false)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the screen never showed %s:\n%s", what, x.screen(true))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLines waits until the pane's history holds n whole lines starting
// with prefix, and returns them. A line is whole once something was
// written below it (the shell's next prompt): a program may write one line
// in several writes, and the screen read between two of them shows part.
func (x *testTmux) waitLines(prefix string, n int) []string {
	x.t.Helper()
	var lines []string
	x.waitFor(fmt.Sprintf("%d lines starting %q", n, prefix), func(string) bool {
		lines = lines[:0]
		all := strings.Split(strings.TrimRight(x.screen(true), " \n"), "\n")
		for _, l := range all[:len(all)-1] { // the last line may be unfinished
			if strings.HasPrefix(l, prefix) {
				lines = append(lines, strings.TrimRight(l, " "))
			}
		}
		return len(lines) >= n
	})
	return lines
}
