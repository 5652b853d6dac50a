//go:build linux

package procwalk

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pid.go reads what one pid is now, outside a scan: its identity, whether
// hidepid hides it, its ancestors, whether it still holds memory, and
// whether the FS's pids are the ones this process can signal.

// Errors of the pid reads.
var (
	// ErrForeignProc means the FS root is not the procfs of our own pid
	// namespace, so its pids are not the ones kill(2) would reach.
	ErrForeignProc = errors.New("procfs root belongs to another pid namespace")
	// ErrBadTarget means a pid that no signal may be aimed at (<= 0 would
	// address process groups or every process).
	ErrBadTarget = errors.New("invalid target pid")
)

// ReadProcID reads the identity of the process with pid now: one stat
// read, for callers that know a pid (a child they started) and need the
// ProcID to act on it.
func (fs FS) ReadProcID(pid int) (ProcID, error) {
	if pid <= 0 {
		return ProcID{}, fmt.Errorf("%w %d", ErrBadTarget, pid)
	}
	st, err := fs.ReadStat(pid)
	if err != nil {
		return ProcID{}, err
	}
	return ProcID{PID: pid, StartTicks: st.StartTicks}, nil
}

// Hidden reports whether pid runs in this pid namespace although fs does
// not show it: /proc mounted hidepid (or ProtectProc=) hides other users'
// processes, and a missing /proc/<pid> then means nothing. kill(2) with
// signal 0 sends nothing and still tells: ESRCH means no such process.
// Under a foreign root (a fixture) it is always false.
func (fs FS) Hidden(pid int) bool {
	if pid <= 0 || fs.CheckOwnNamespace() != nil {
		return false
	}
	if _, err := os.Stat(fs.PIDPath(pid, "stat")); err == nil {
		return false // shown
	}
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// CheckOwnNamespace makes sure the pids under the root are the ones this
// process can signal: <root>/self must name our own pid. A procfs of
// another pid namespace (a host's /proc bind-mounted into a container, or
// the reverse) fails, as does a fixture tree.
func (fs FS) CheckOwnNamespace() error {
	link, err := os.Readlink(fs.Path("self"))
	if err != nil {
		return fmt.Errorf("%w: cannot read %s: %v", ErrForeignProc, fs.Path("self"), err)
	}
	if link != strconv.Itoa(os.Getpid()) {
		return fmt.Errorf("%w: %s is pid %s there but %d here; run procwalk in the namespace whose processes it acts on",
			ErrForeignProc, fs.Path("self"), link, os.Getpid())
	}
	return nil
}

// HoldsMemory reports whether id still exists with resident pages: it is
// not gone, its pid not reused, and a zombie still holds memory until its
// resident set is empty.
func (fs FS) HoldsMemory(id ProcID) (bool, error) {
	st, err := fs.ReadStat(id.PID)
	if IsGone(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.StartTicks != id.StartTicks {
		return false, nil
	}
	if st.State != 'Z' && st.State != 'X' {
		return true, nil
	}
	b, err := readFile(fs.PIDPath(id.PID, "statm"))
	if IsGone(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sm, err := parseStatm(b)
	if err != nil {
		return false, fmt.Errorf("pid %d: %w", id.PID, err)
	}
	return sm.ResidentPages > 0, nil
}

// Ancestors reads the ppid chain of pid from stat files: the pids above it,
// up to but not including pid 1.
func (fs FS) Ancestors(pid int) map[int]bool {
	out := make(map[int]bool)
	for i := 0; i < 4096 && pid > 1; i++ { // 4096: bounds a corrupt cycle
		st, err := fs.ReadStat(pid)
		if err != nil || st.PPID <= 0 {
			break
		}
		pid = st.PPID
		out[pid] = true
	}
	return out
}
