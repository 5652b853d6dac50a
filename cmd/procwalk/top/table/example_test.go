//go:build linux

package table_test

import (
	"fmt"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// The rows of a frame's processes, largest RSS first: their values sort,
// their cells are formatted when shown.
func Example() {
	snap := &procwalk.Snapshot{Time: time.Unix(1700000000, 0), Procs: []procwalk.Process{
		{ID: procwalk.ProcID{PID: 41}, Comm: "bash", RSSBytes: 4 << 20},
		{ID: procwalk.ProcID{PID: 42}, Comm: "cc1", RSSBytes: 120 << 20, Cmdline: []string{"cc1", "-O2"}, Read: procwalk.FieldCmdline},
	}}
	b := table.NewBuilder(snap, nil, table.Config{}, metric.NewCatalogue())
	for _, r := range b.ProcessRows(nil, "", table.ColRSS, false) {
		c := r.Cells()
		fmt.Println(c[table.ColPID], c[table.ColName], c[table.ColRSS], c[len(c)-1])
	}
	// Output:
	// 42 cc1 120.0 MiB cc1 -O2
	// 41 bash 4.0 MiB -
}
