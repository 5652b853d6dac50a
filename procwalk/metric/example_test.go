//go:build linux

package metric_test

import (
	"fmt"
	"log"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// Example ranks the fixture's processes by PSS with the catalogue's one
// rule, and prints each value with the metric's name and unit. Processes
// whose smaps_rollup was not read (a zombie has none) have no PSS: they come
// last, never ranked as 0.
func Example() {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		log.Fatal(err)
	}
	s, err := fs.Snapshot(procwalk.FieldSmaps)
	if err != nil {
		log.Fatal(err)
	}
	pss, ok := metric.Lookup("pss") // a short name finds pss_bytes
	if !ok {
		log.Fatal("no pss")
	}
	procs := make([]*procwalk.Process, len(s.Procs))
	for i := range s.Procs {
		procs[i] = &s.Procs[i]
	}
	for _, p := range metric.Top(s, procs, 3, &pss) {
		v, _ := pss.Process(s, p)
		fmt.Printf("%d %s %s=%.0f %s (%s)\n", p.ID.PID, p.Comm, pss.Name, v, pss.Unit, pss.Kind)
	}
	// Output:
	// 111 cc1 pss_bytes=102400000 bytes (gauge)
	// 120 python3 pss_bytes=15360000 bytes (gauge)
	// 1 systemd pss_bytes=7168000 bytes (gauge)
}
