//go:build linux

package scripting

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestVMInitAllocatesLittle checks luapatches' 0006-static-tables: the Lua
// VM's package initialisation, which runs at the start of every procwalk
// process (--version too), makes no tables of library functions and no
// boxed numbers (upstream: 168 allocations, 8.5 kB). It runs this test
// binary again, running no test, with GODEBUG=inittrace=1, which prints
// each package's initialisation with its allocations.
func TestVMInitAllocatesLittle(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	line := regexp.MustCompile(`init github\.com/procwalk/procwalk/scripting/internal/_luavm @.* (\d+) bytes, (\d+) allocs`)
	m := line.FindSubmatch(out)
	if m == nil {
		if !regexp.MustCompile(`init runtime @`).Match(out) {
			t.Fatalf("no inittrace output from %s:\n%s", cmd, out)
		}
		return // no initialisation work at all
	}
	allocs, _ := strconv.Atoi(string(m[2]))
	// What is left: LUA_PATH's default and the like, a few strings.
	const maxAllocs = 8
	if allocs > maxAllocs {
		t.Errorf("the Lua VM's package initialisation made %d allocations (%s bytes), want at most %d", allocs, m[1], maxAllocs)
	}
}
