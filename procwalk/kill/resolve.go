//go:build linux

package kill

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// resolve.go finds the process a pid names now: the identity a kill's
// scope pins (ProcessScope, TreeScope), so that a pid reused later is
// never signalled.

// ResolvePID is the identity of the process with pid now, read from fs.
// A pid that hidepid hides, and one not running, are errors that say so
// and what to do.
func ResolvePID(fs procwalk.FS, pid int) (procwalk.ProcID, error) {
	f, err := frame.New(fs, frame.Config{NoRates: true}).Gather()
	if err != nil {
		return procwalk.ProcID{}, err
	}
	p := f.Snapshot.Process(pid)
	if p == nil && fs.Hidden(pid) {
		return procwalk.ProcID{}, fmt.Errorf("pid %d is hidden: it runs, but %s does not show it to this user (hidepid); run as root to act on it", pid, fs.Root())
	}
	if p == nil {
		return procwalk.ProcID{}, fmt.Errorf("pid %d is not running (not in %s); procwalk ps lists the pids", pid, fs.Root())
	}
	return p.ID, nil
}
