//go:build linux

package kill_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// A dry run over a fixture tree: the plan says what would be signalled and
// what is left alone; Execute reports it without sending anything. On a
// live system use procwalk.NewFS(procwalk.DefaultRoot) and drop DryRun.
func ExampleKiller_Plan() {
	fs, err := procwalk.NewFS("testdata/kill/proc")
	if err != nil {
		panic(err)
	}
	k, err := kill.NewKiller(fs, kill.Config{DryRun: true, Requester: "example"})
	if err != nil {
		panic(err)
	}
	// The tmux session's build window: a shell, make, its compilers and a
	// Jupyter server.
	plan, err := k.Plan(kill.TreeScope{Root: procwalk.ProcID{PID: 80, StartTicks: 220}})
	if err != nil {
		panic(err)
	}
	for _, t := range plan.Targets {
		fmt.Println("target:", t.ID, t.Args)
	}
	for _, o := range plan.Skipped {
		fmt.Println("left alone:", o.ID.PID, o.Result)
	}
	report := k.Execute(context.Background(), plan)
	for _, o := range report.Outcomes {
		if o.Result == kill.ResultDryRun {
			var sigs []string
			for _, s := range o.Planned {
				sigs = append(sigs, kill.SignalName(s))
			}
			fmt.Println(o.ID.PID, o.Result, strings.Join(sigs, ","))
		}
	}
	// Output:
	// target: 80@220 -bash
	// target: 81@400 make -j2
	// target: 82@410 /usr/lib/gcc/cc1 big.c
	// target: 84@430 sleep 60
	// left alone: 83 refused_protected
	// 80 dry_run TERM,KILL
	// 81 dry_run TERM,KILL
	// 82 dry_run TERM,KILL
	// 84 dry_run TERM,KILL
}

// The biggest processes of a session by PSS: the snapshot reads what the
// metric needs (smaps_rollup), and Killer.Check keeps the killable ones.
// Here the members are the tree of the fixture's tmux server.
func ExampleBiggestIn() {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		panic(err)
	}
	pss, _ := metric.Lookup("pss")
	snap, err := fs.Snapshot(pss.Needs)
	if err != nil {
		panic(err)
	}
	k, err := kill.NewKiller(fs, kill.Config{Protected: []string{"make"}})
	if err != nil {
		panic(err)
	}
	var members []procwalk.ProcID // a Session's Members
	for _, p := range snap.Descendants(100) {
		members = append(members, p.ID)
	}
	for _, p := range kill.BiggestIn(snap, members, 3, &pss) {
		if err := k.Check(p); err != nil {
			fmt.Println("skip", p.ID.PID, p.Comm)
			continue
		}
		fmt.Println(p.ID.PID, p.Comm, procwalk.FormatBytes(p.Smaps.PSSBytes))
	}
	// Output:
	// 111 cc1 97.7 MiB
	// 120 python3 14.6 MiB
	// skip 110 make
}
