//go:build linux

package cmdline_test

import (
	"flag"
	"fmt"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
)

// A command that takes its flags after its arguments too: tree 1 --pss.
func ExampleFlagsFirst() {
	fs := flag.NewFlagSet("tree", flag.ContinueOnError)
	fs.Bool("pss", false, "read smaps_rollup")
	fs.String("sort", "rss", "sort by `KEY`")
	fmt.Println(cmdline.FlagsFirst(fs, []string{"1", "--pss", "--sort", "cpu"}))
	// Output: [--pss --sort cpu 1]
}
