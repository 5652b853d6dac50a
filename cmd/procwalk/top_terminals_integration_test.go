//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The live view in a real terminal, a tmux pane of the test's own server,
// as people run it: under NO_COLOR the selected row is still marked
// (reverse video, no colour); on TERM=dumb, which shows no attributes, a
// marker; with stdin not a terminal (</dev/null) it reads keys from the
// terminal; a mouse click (an SGR mouse report, as the terminal sends it)
// selects a row; LANG=C draws ASCII.
func TestIntegrationTopTerminals(t *testing.T) {
	integration(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	bin := buildProcwalk(t)
	for _, tt := range []struct {
		name, env, redirect string
		check               func(t *testing.T, x *testTmux, plain, styled string)
	}{
		{"NO_COLOR", "TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=yes", "", func(t *testing.T, x *testTmux, plain, styled string) {
			if !regexp.MustCompile(`\x1b\[(\d+;)*7m`).MatchString(styled) {
				t.Errorf("no reverse video under NO_COLOR:\n%q", styled)
			}
			for _, colour := range []string{"\x1b[31m", "\x1b[34m", ";31m", ";34m", "38;5;", "38;2;"} {
				if strings.Contains(styled, colour) {
					t.Errorf("a colour (%q) under NO_COLOR", colour)
				}
			}
		}},
		{"TERM=dumb", "TERM=dumb LANG=C.UTF-8", "", func(t *testing.T, x *testTmux, plain, styled string) {
			marked := 0
			for _, l := range strings.Split(plain, "\n") {
				if strings.HasPrefix(l, "▶") {
					marked++
				}
			}
			if marked != 1 {
				t.Errorf("%d rows marked on TERM=dumb, want 1:\n%s", marked, plain)
			}
		}},
		{"stdin /dev/null, LANG=C", "TERM=xterm-256color LANG=C", "</dev/null", func(t *testing.T, x *testTmux, plain, styled string) {
			for _, r := range plain {
				if r > 0x7e && r != '…' { // a name cut by tmux's own width is not ours to judge
					t.Errorf("a non-ASCII glyph %q under LANG=C:\n%s", r, plain)
					break
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newTmux(t, fmt.Sprintf("pwterm-%d-%d", os.Getpid(), len(tt.name)))
			x.run("new-session", "-d", "-x", "100", "-y", "30", "-s", "top",
				// Should top end too soon, its message and status stay on screen.
				fmt.Sprintf("env %s %s top --interval 1h %s; echo top ended: $?; sleep 600", tt.env, bin, tt.redirect))
			plain := x.waitFor("the status line", func(s string) bool {
				if strings.Contains(s, "top ended") {
					t.Fatalf("top ended:\n%s", s)
				}
				return strings.Contains(s, "q quit")
			})
			styled := x.out("capture-pane", "-p", "-e")
			tt.check(t, x, plain, styled)
			// A click on the table's fifth row (y 9 counted from 0: four
			// header lines, the titles, rows from y 5; SGR reports count
			// from 1), as an SGR mouse report: press, release.
			// In the tree, whose order no refresh changes (the selection
			// follows its process when the order does).
			x.run("send-keys", "Tab")
			x.waitFor("the sessions view", func(s string) bool { return strings.Contains(s, "sessions 1/") })
			x.run("send-keys", "Tab")
			x.waitFor("the tree", func(s string) bool { return strings.Contains(s, "tree 1/") })
			// Sent as bytes (-H): tmux would read a literal string as keys.
			report := []string{"send-keys", "-H"}
			for _, b := range []byte("\x1b[<0;10;10M\x1b[<0;10;10m") {
				report = append(report, fmt.Sprintf("%02x", b))
			}
			x.run(report...)
			x.waitFor("the fifth row selected", func(s string) bool { return strings.Contains(s, " 5/") })
			x.run("send-keys", "q")
			x.waitFor("top to quit", func(s string) bool { return strings.Contains(s, "top ended: 0") })
		})
	}
}
