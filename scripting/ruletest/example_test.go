//go:build linux

package ruletest_test

import (
	"context"
	"fmt"

	"github.com/procwalk/procwalk/scripting/ruletest"
	"github.com/procwalk/procwalk/scripts"
)

// A test of the bundled zombies report: one parent holding three zombies
// alerts; the test pins it.
func Example() {
	test, err := ruletest.Parse("zombies.ruletest", []byte(`
rule zombies -- alert=3
mode run
at 0s
  session tmux:build
    100 make
      101 cc1 state=Z
      102 cc1 state=Z
      103 ld state=Z
expect 0s print "3 zombies under 1 parent"
expect 0s alert session=build pid=100 value=3
`))
	if err != nil {
		panic(err)
	}
	r, err := ruletest.Run(context.Background(), test, ruletest.Options{Bundled: func(name string) ([]byte, bool) {
		s, ok := scripts.Lookup(name)
		return s.Source, ok
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Pass(), r.Frames, r.Checked)
	// Output: true 1 2
}
