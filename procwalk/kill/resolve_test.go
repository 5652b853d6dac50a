//go:build linux

package kill_test

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// A pid resolves to its process's identity (pid and start ticks, field 22
// of its stat); a pid not running is an error naming the root.
func TestResolvePID(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/kill/proc")
	if err != nil {
		t.Fatal(err)
	}
	id, err := kill.ResolvePID(fs, 1)
	if err != nil || id != (procwalk.ProcID{PID: 1, StartTicks: 5}) {
		t.Errorf("pid 1: %+v, %v; want start ticks 5", id, err)
	}
	if _, err := kill.ResolvePID(fs, 4242); err == nil || !strings.Contains(err.Error(), "pid 4242 is not running (not in testdata/kill/proc)") {
		t.Errorf("pid 4242: %v", err)
	}
}
