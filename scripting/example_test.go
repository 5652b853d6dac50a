//go:build linux

package scripting_test

import (
	"context"
	"fmt"
	"os"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/scripting"
)

// A rule that prints the processes using more than 1 GiB, run against the
// fixture /proc.
func Example() {
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, err := fs.Snapshot(procwalk.AllFields)
	if err != nil {
		fmt.Println(err)
		return
	}
	script, err := scripting.Compile("big.lua", []byte(`
local pw = require "procwalk"
for _, p in ipairs(pw.processes()) do
  if p.rss > pw.GiB then print(p.pid, p.comm, pw.bytes(p.rss)) end
end`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rt := scripting.New(scripting.Config{Print: os.Stdout})
	defer rt.Close()
	if err := rt.Run(context.Background(), script, scripting.Input{Snapshot: snap}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 110	claude	1.5 GiB
	// 201	java	1.8 GiB
}
