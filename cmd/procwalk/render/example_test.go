//go:build linux

package render_test

import (
	"fmt"
	"os"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// The three largest processes by PSS, in three columns: the scan reads
// stat and statm alone; smaps_rollup, which takes each target's mmap lock,
// is read after it (of every match, to sort them; sorted by another key,
// of the rows shown alone).
func ExampleProcessQuery() {
	fsys, err := procwalk.NewFS("../../../procwalk/testdata/proc")
	if err != nil {
		fmt.Println(err)
		return
	}
	order, _ := metric.ParseProcessOrder("pss")
	q, err := render.NewProcessQuery(order, "pid,pss,comm", false, false, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	q.Limit = 3
	scan, later := q.Fields()
	fmt.Printf("scan reads %q, then %q\n", scan, later)
	f, err := frame.New(fsys, frame.Config{Fields: scan, NoRates: true}).Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	procs, err := q.Rows(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	render.ProcessTable(f.Snapshot, q.Columns, procs, nil, false).Write(os.Stdout, 0)
	// Output:
	// scan reads "", then "smaps"
	// PID       PSS  COMM
	// 111  97.7 MiB  cc1
	// 120  14.6 MiB  python3
	//   1   6.8 MiB  systemd
}
