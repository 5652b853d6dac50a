//go:build linux

package scripting

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/procwalk/textwidth"
	"github.com/procwalk/procwalk/scripts"
)

// Every bundled script's report fits an 80-column terminal on the fixture
// /proc, with the arguments that make it print the most: agents with
// rates, growth-watch catching two processes, memory-guard over every kind
// (the pod's long ref), session-report of every kind. Widths are counted
// in cells, as a terminal shows them (a CJK character takes two). A word
// or a path is never cut: one longer than the width is a line of its own,
// whole, and only such a line is wider.
func TestBundledReportsFit80Columns(t *testing.T) {
	args := map[string][]string{
		"agents":         nil,
		"growth-watch":   {"rate=50MiB", "min=1GiB"},
		"memory-guard":   {"limit=1GiB", "kinds=tmux,agent,cgroup,user,tree,group"},
		"pod-pressure":   nil,
		"session-report": {"kind=all"},
		"zombies":        nil,
	}
	// The fixture's names, then each session's name and agent project 90
	// runes longer (a deep cgroup path, a long project directory): what
	// does not fit breaks onto more lines, and is all still there.
	const long = "/a-deep-cgroup-path-of-ninety-runes-as-kubepods-make-them/cri-containerd-0123456789abcdef"
	for _, suffix := range []string{"", long, "-日本語のプロジェクト"} {
		longNames := suffix != ""
		for _, s := range scripts.List() {
			a, ok := args[s.Name]
			if !ok {
				t.Errorf("%s: a bundled script this test does not run: give it its arguments here", s.Name)
				continue
			}
			w := newWorld(t)
			w.cfg.DryRun = true
			for _, pid := range []int{110, 111, 112} {
				w.snap.Process(pid).Rates = procwalk.Rates{Measured: true, CPUPercent: 10, RSSGrowthBytesPerMinute: 100 << 20}
			}
			w.snap.Process(201).Rates = procwalk.Rates{Measured: true, RSSGrowthBytesPerMinute: 300 << 20}
			group := grouper(t, w.users)(w.snap)
			w.in.Sessions = func() ([]session.Session, error) {
				sessions, err := group()
				for i := range sessions {
					if s := &sessions[i]; longNames {
						s.Name += suffix
						if p, ok := s.Attrs["project"]; ok {
							s.Attrs["project"] = p + suffix
						}
					}
				}
				return sessions, err
			}
			out := runBundled(t, w, s.Name, a...)
			if strings.Count(out, "\n") < 2 {
				t.Errorf("%s %v: printed too little to tell:\n%s", s.Name, a, out)
			}
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := textwidth.Width(l); n > 80 && strings.Contains(strings.TrimSpace(l), " ") {
					t.Errorf("%s %v (names + %q): a line of %d cells:\n%s", s.Name, a, suffix, n, l)
				}
				for _, w := range strings.Fields(l) {
					if strings.Contains(w, "…") {
						t.Errorf("%s %v (names + %q): a cut word %q", s.Name, a, suffix, w)
					}
				}
			}
			if longNames && !strings.Contains(out, suffix) {
				t.Errorf("%s %v: a long name lost:\n%s", s.Name, a, out)
			}
			t.Logf("%s %v (names + %q):\n%s", s.Name, a, suffix, out)
		}
	}
}
