//go:build linux

package procwalk_test

import (
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// Example scans the fixture /proc under testdata, prints what could not be
// seen, then the tmux server's tree with each process's PSS and the tree's
// totals. On a live host the root is procwalk.DefaultRoot.
func Example() {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	s, err := fs.Snapshot(procwalk.FieldCmdline | procwalk.FieldSmaps)
	if err != nil {
		log.Fatal(err)
	}
	v := s.Visibility
	fmt.Printf("%d processes of %d listed; %d gone, %d malformed\n", len(s.Procs), v.Listed, v.Gone, v.Malformed)

	s.Walk(100, func(p *procwalk.Process, depth int) bool {
		pss := "-" // a zombie has no memory map
		if p.Read&procwalk.FieldSmaps != 0 {
			pss = fmt.Sprintf("%d KiB", p.Smaps.PSSBytes>>10)
		}
		fmt.Printf("%s%d %s [%c] pss %s, started %s\n", strings.Repeat("  ", depth),
			p.ID.PID, p.Name(), p.State, pss, p.Start.UTC().Format(time.TimeOnly))
		return true
	})
	t := s.Subtree(100)
	fmt.Printf("subtree: %d procs, %d zombie, PSS %d KiB over %d, CPU %.2f s\n",
		t.Procs, t.Zombies, t.PSSBytes>>10, t.SmapsRead, t.CPUSeconds)
	// Output:
	// 18 processes of 21 listed; 1 gone, 2 malformed
	// 100 tmux [S] pss 2000 KiB, started 22:38:20
	//   101 -bash [S] pss 1200 KiB, started 22:38:20
	//     110 make [S] pss 5000 KiB, started 22:40:00
	//       111 cc1 [R] pss 100000 KiB, started 22:40:01
	//   102 -bash [S] pss 1300 KiB, started 22:38:20
	//     120 python3 [S] pss 15000 KiB, started 22:41:40
	//       121 defunct [Z] pss -, started 22:41:45
	// subtree: 7 procs, 1 zombie, PSS 124500 KiB over 6, CPU 1127.32 s
}

// ExampleSampler shows that rates need two snapshots: the first sight of a
// process is not measured.
func ExampleSampler() {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	sc := procwalk.NewScanner(fs)
	var sampler procwalk.Sampler
	for i := range 2 {
		s, err := sc.Snapshot(0)
		if err != nil {
			log.Fatal(err)
		}
		sampler.Observe(s)
		if r := s.Process(111).Rates; r.Measured {
			fmt.Printf("scan %d: cc1 uses %.0f%% of a core\n", i+1, r.CPUPercent)
		} else {
			fmt.Printf("scan %d: cc1 not measured yet\n", i+1)
		}
	}
	// Output:
	// scan 1: cc1 not measured yet
	// scan 2: cc1 uses 0% of a core
}
