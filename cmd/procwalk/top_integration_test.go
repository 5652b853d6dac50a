//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// TestIntegrationTopInTmux runs procwalk top in an 80×24 pane of a tmux
// server of the test's own, drives it with send-keys and reads the screen
// with capture-pane: the test's own processes appear with their RSS, USS
// and PSS, the filter works, k
// then n spares one and k then y ends it, a protected process (the test's
// tmux server) is refused with a warning, and no line is wider than the
// pane.
func TestIntegrationTopInTmux(t *testing.T) {
	integration(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	bin := buildProcwalk(t)
	dir := t.TempDir()
	// Two victims with a name of their own: copies of sleep.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	victim := filepath.Join(dir, "pwtopvictim")
	if out, err := exec.Command("cp", sleep, victim).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	var victims []*exec.Cmd
	for range 2 {
		c := exec.Command(victim, "600")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		victims = append(victims, c)
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	exited := make(chan int, 2)
	for _, c := range victims {
		go func() { c.Wait(); exited <- c.Process.Pid }()
	}

	socket := fmt.Sprintf("pwtop-%d", os.Getpid())
	tmux := newTmux(t, socket).out
	tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "top",
		"env", "TERM=xterm-256color", "LANG=C.UTF-8", bin, "top", "--interval", "300ms")

	screen := func() string { return tmux("capture-pane", "-p", "-t", "top") }
	// waitFor polls the screen until it holds want; a loaded machine is
	// slow, so the wait is long and ends as soon as the text is there.
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, want) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", want, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitForMatch := func(re *regexp.Regexp) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for s := screen(); !re.MatchString(s); s = screen() {
			if time.Now().After(deadline) {
				t.Fatalf("the screen never matched %s:\n%s", re, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "top"}, k...)...) }

	// The status line shows once the first frame is drawn and top reads
	// keys (sent earlier, they would reach a terminal not yet in raw mode).
	s := waitFor("q quit")
	for i, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("line %d is %d wide: %q", i, len([]rune(line)), line)
		}
	}

	keys("-l", `\pwtopvictim`)
	keys("Enter")
	waitFor(`processes, filter "pwtopvictim" 1/2`)
	// The rows' owners are read once they are on screen: at once, or a
	// refresh later.
	for _, v := range victims {
		waitFor(fmt.Sprintf("%d root", v.Process.Pid))
	}
	// The right numbers: a victim's RSS as its statm says (a sleeping
	// sleep's resident pages do not move).
	statm, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", victims[0].Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var size, resident uint64
	fmt.Sscan(string(statm), &size, &resident)
	rss := procwalk.FormatBytes(resident * uint64(os.Getpagesize()))
	waitFor(fmt.Sprintf("%d root     pwtopvictim", victims[0].Process.Pid))
	if row := regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d root .*\b%s\b`, victims[0].Process.Pid, regexp.QuoteMeta(rss))); !row.MatchString(screen()) {
		t.Errorf("pid %d: no RSS %s on its row:\n%s", victims[0].Process.Pid, rss, screen())
	}

	// USS and PSS are read for the rows on screen, on the frame before it
	// is shown: a victim's USS as its smaps_rollup says (a sleeping
	// sleep's private pages do not move), and a PSS (it moves as other
	// processes map libc): never "-", which top showed on every row when
	// it built its rows before reading them.
	smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", victims[0].Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var ussKB uint64
	for _, line := range strings.Split(string(smaps), "\n") {
		var kb uint64
		for _, key := range []string{"Private_Clean:", "Private_Dirty:", "Private_Hugetlb:"} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				fmt.Sscan(rest, &kb)
				ussKB += kb
			}
		}
	}
	uss := procwalk.FormatBytes(ussKB << 10)
	waitForMatch(regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d root\s+pwtopvictim\s+\S+\s+%s\s+\d[\d.]* [KMG]?i?B\s`,
		victims[0].Process.Pid, regexp.QuoteMeta(uss))))

	// The cursor is on the first row: the lower pid (CPU% ties).
	first := min(victims[0].Process.Pid, victims[1].Process.Pid)
	keys("k")
	waitFor(fmt.Sprintf("kill pid %d (pwtopvictim)? y TERM", first))
	keys("n")
	waitFor("kill cancelled")
	keys("k")
	waitFor("? y TERM")
	keys("y")
	waitFor(fmt.Sprintf("pid %d (pwtopvictim): exited", first))
	select {
	case pid := <-exited:
		if pid != first {
			t.Errorf("pid %d ended, want %d", pid, first)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("pid %d still runs after top said it exited", first)
	}
	select {
	case pid := <-exited:
		t.Errorf("pid %d ended too; n spared nothing? only %d was killed", pid, first)
	default:
	}

	// Sort: three s from CPU% is RSS, the arrow on its heading.
	keys("s")
	keys("s")
	keys("s")
	waitFor("RSS↓")

	// The sessions view holds the test's own tmux session, with its one
	// pane's processes (top itself, under env). Named alone, or with its
	// server when another has a "top" too. Its first frame groups every
	// kind, which takes a while on a busy host: until then it says so.
	keys("Tab")
	waitFor("KIND")
	keys("-l", `\top`)
	keys("Enter")
	row := regexp.MustCompile(`(?m)^tmux\s+(\S+/)?top\s+([1-9]\d*)\s`)
	waitForMatch(row)
	// The row is there without the filter too: wait until top took the
	// filter and Enter, or Escape below would reach it before them, and
	// "sessions 1/" would be the screen before them (on a loaded machine
	// Escape then arrived with the Tab after it, as alt+Tab).
	waitFor(`sessions, filter "top" 1/`)
	keys("Escape")
	waitFor("sessions 1/") // filter cleared; a key right after Escape would read as Alt-key
	keys("Tab")            // the tree
	waitFor("tree 1/")
	keys("Tab") // back to processes
	// The switch selects the first row, and the selection then follows its
	// process: the next frame may move it down the RSS order (the go
	// command and this test grow and shrink), so any row will do.
	waitForMatch(regexp.MustCompile(`processes \d+/\d+ `))

	// The test's own tmux server is protected: a warning, then a refusal.
	keys("-l", `\`+socket)
	keys("Enter")
	waitFor(`filter "` + socket + `" 1/1`) // the server's command line names the socket
	keys("k")
	waitFor("SYSTEM PROCESS, killing it may break the session")
	keys("y")
	waitFor("refused_protected")
	if err := exec.Command("tmux", "-L", socket, "has-session").Run(); err != nil {
		t.Errorf("the tmux server is gone after a refused kill: %v", err)
	}

	keys("q")
	deadline := time.Now().Add(30 * time.Second)
	for exec.Command("tmux", "-L", socket, "has-session").Run() == nil && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if exec.Command("tmux", "-L", socket, "has-session").Run() == nil {
		t.Errorf("q did not end top (its pane is still there):\n%s", screen())
	}
}
