package scripts_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/scripts"
)

func ExampleLookup() {
	s, ok := scripts.Lookup("zombies")
	fmt.Println(ok, s.Name+":", s.Description)
	// Output:
	// true zombies: zombie processes and the parents that do not reap them, per session
}

// Each script on a line: its name, padded to the longest, and what it does.
func TestWriteList(t *testing.T) {
	var b strings.Builder
	scripts.WriteList(&b, 0)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(scripts.List()) || len(lines) < 2 {
		t.Fatalf("%d lines for %d scripts:\n%s", len(lines), len(scripts.List()), b.String())
	}
	width := 0
	for _, n := range scripts.Names() {
		width = max(width, len(n))
	}
	for i, s := range scripts.List() {
		if want := s.Name + strings.Repeat(" ", width-len(s.Name)+2) + s.Description; lines[i] != want {
			t.Errorf("line %d: %q; want %q", i, lines[i], want)
		}
	}
	// One line as a person reads it, whatever the rule above computes.
	if want := "memory-guard    kill the biggest process of a tmux or agent session whose memory stays over a limit for N ticks"; !slices.Contains(lines, want) {
		t.Errorf("no line %q in:\n%s", want, b.String())
	}
}

// In an 80-column terminal each description wraps under itself at spaces:
// the terminal breaks no word (it broke "wit|h status" and "suc|h as").
func TestWriteListFits80(t *testing.T) {
	var b strings.Builder
	scripts.WriteList(&b, 80)
	want := `agents          AI coding agent sessions (Claude Code, Codex, Gemini, Aider)
                with status, model, context use, project, tmux pane, duration,
                memory and CPU
growth-watch    processes whose memory grows faster than a rate for N ticks,
                such as leaking agents
memory-guard    kill the biggest process of a tmux or agent session whose memory
                stays over a limit for N ticks
pod-pressure    pods and cgroups against their memory and CPU limits, the 80 %
                threshold and their top offenders
session-report  every session by kind, with its members' memory, CPU, age and
                biggest processes
zombies         zombie processes and the parents that do not reap them, per
                session
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
