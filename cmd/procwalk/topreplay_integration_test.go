//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestIntegrationTopReplayInTmux steps through a recording in the live
// view on a real terminal (a tmux pane of the test's own server): ] and }
// forward, [ back, k refused, q quits. The server is killed when the test
// ends, so a view that would hang costs no more than the test's waits.
func TestIntegrationTopReplayInTmux(t *testing.T) {
	integration(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	bin := buildProcwalk(t)
	rec := writeRecording(t, time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC), 5, nil)
	socket := fmt.Sprintf("pwreplay-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "24", "-s", "replay",
		"env", "TERM=xterm-256color", bin, "top", "--replay", rec, "--interval", "300ms"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	socketPath, _ := tmux("display-message", "-p", "#{socket_path}")
	t.Cleanup(func() {
		tmux("kill-server")
		os.Remove(strings.TrimSpace(socketPath))
	})
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s, _ := tmux("capture-pane", "-p", "-t", "replay")
			if strings.Contains(s, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", want, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("frame 1 of 5")
	for _, c := range []struct{ keys, want string }{
		{"]", "frame 2 of 5"},
		{"}", "frame 5 of 5"},
		{"[", "frame 4 of 5"},
		{"k", "a replay: its processes are not this host's"},
	} {
		if _, err := tmux("send-keys", "-t", "replay", "-l", c.keys); err != nil {
			t.Fatal(err)
		}
		waitFor(c.want)
	}
	tmux("send-keys", "-t", "replay", "q")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := tmux("has-session", "-t", "replay"); err != nil {
			return // q ended the view, and its pane with it
		}
		if time.Now().After(deadline) {
			s, _ := tmux("capture-pane", "-p", "-t", "replay")
			t.Fatalf("q did not end the view:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
