//go:build linux

package session_test

import (
	"fmt"
	"log"
	"os"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// ExampleGrouper groups the session fixture's processes into tmux sessions
// and agents. Its one tmux server is answered from a file here; on a live
// host leave ListPanes nil (tmux runs) and Sockets empty (they are found).
func ExampleGrouper() {
	fs, err := procwalk.NewFS("testdata/sessions/proc")
	if err != nil {
		log.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		Kinds: []string{session.KindTmux, session.KindAgent},
		Tmux: session.TmuxConfig{
			Sockets:   []string{"/tmp/tmux-1000/default"},
			ListPanes: func(string) ([]byte, error) { return os.ReadFile("testdata/sessions/tmux/default.txt") },
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The Monitor plans the scan with g: tmux is asked while /proc is read.
	s, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g).Gather()
	if err != nil {
		log.Fatal(err)
	}
	sessions, notes := g.Group(s)
	for _, ss := range sessions {
		pages := ss.Totals.RSSBytes / uint64(os.Getpagesize()) // the fixture's statm counts pages
		fmt.Printf("%-20s %d procs, roots %v, %d pages RSS", ss.Ref(), ss.Totals.Procs, ss.Roots, pages)
		if t := ss.Attrs[session.AttrTmuxTarget]; t != "" {
			fmt.Printf(", pane %s", t)
		}
		fmt.Println()
	}
	fmt.Println("notes:", notes)
	web, err := session.Find(sessions, "tmux:web")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tmux:web members:", web.Members)
	_, err = session.Find(sessions, "tmux:nope")
	fmt.Println(err)
	// Output:
	// tmux:build           8 procs, roots [101@1001 104@1002 130@5000], 86000 pages RSS, pane build:0.0
	// tmux:web             4 procs, roots [110@1003 120@4100], 4000 pages RSS, pane web:0.0
	// agent:claude/work/app 2 procs, roots [105@3000], 51000 pages RSS, pane build:1.0
	// agent:claude/other/app 3 procs, roots [203@8100], 62000 pages RSS
	// agent:codex/work/app 1 procs, roots [206@8400], 1000 pages RSS
	// agent:claude/other/app#2 1 procs, roots [207@8500], 1000 pages RSS
	// notes: []
	// tmux:web members: [110@1003 111@4000 120@4100 121@4200]
	// no such session tmux:nope: tmux sessions are build, web
}
