//go:build linux

package frame_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Example gathers one frame of the session fixture: its tmux sessions, the
// biggest member of each with its command line read after the scan. On a
// live host the root is procwalk.DefaultRoot, ListPanes is left nil (tmux
// runs) and Sockets empty (they are found).
func Example() {
	fs, err := procwalk.NewFS("../session/testdata/sessions/proc")
	if err != nil {
		log.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		Kinds: []string{session.KindTmux},
		Tmux: session.TmuxConfig{
			Sockets:   []string{"/tmp/tmux-1000/default"},
			ListPanes: func(string) ([]byte, error) { return os.ReadFile("../session/testdata/sessions/tmux/default.txt") },
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	p := frame.New(fs, frame.Config{Grouper: g, NoRates: true})
	f, err := p.Gather()
	if err != nil {
		log.Fatal(err)
	}
	rss, _ := metric.Lookup("rss_bytes")
	for _, s := range f.Sessions {
		var members []*procwalk.Process
		for _, id := range s.Members {
			members = append(members, f.Snapshot.Lookup(id))
		}
		top := metric.Top(f.Snapshot, members, 1, &rss)
		if err := f.ReadMore(top, procwalk.FieldCmdline); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d processes, biggest %d %q\n", s.Ref(), s.Totals.Procs, top[0].ID.PID, top[0].Cmdline)
	}
	fmt.Println("notes:", f.Notes)
	// Output:
	// tmux:build: 8 processes, biggest 105 ["claude"]
	// tmux:web: 4 processes, biggest 110 ["bash"]
	// notes: []
}

// ExamplePipeline_Run drives a pipeline: a frame each time the trigger
// fires (here every millisecond, three times), each with rates from the
// frame before.
func ExamplePipeline_Run() {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	p := frame.New(fs, frame.Config{})
	n := 0
	err = p.Run(context.Background(), frame.Count(frame.Every(time.Millisecond, true), 3), func(f frame.Frame, err error) error {
		if err != nil {
			return err
		}
		n++
		fmt.Printf("frame %d: %d processes, pid 1 measured: %v\n", n, len(f.Snapshot.Procs), f.Snapshot.Process(1).Rates.Measured)
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// frame 1: 18 processes, pid 1 measured: false
	// frame 2: 18 processes, pid 1 measured: true
	// frame 3: 18 processes, pid 1 measured: true
	// err: <nil>
}
