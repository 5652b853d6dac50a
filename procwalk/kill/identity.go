//go:build linux

package kill

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// identity.go closes what (pid, start ticks) leaves open: two processes
// that get the same pid within one clock tick (10 ms at USER_HZ 100) have
// the same start ticks. That can only happen to a target the plan's walk
// saw less than one tick after it started: the new process must start in
// the same tick, after the old one has died, which is after the walk saw
// it. For such a young target the plan also records its executable's
// device and inode, and at action time, after the pidfd is open, the comm
// and the executable must still match. The remaining limit: a young target
// that exec'd meanwhile is refused (it looks like another process), and a
// new process of the same program with the same comm that gets the pid
// within the same tick would pass (README "Safe kill").

// exeID is an executable's device and inode.
type exeID struct{ dev, ino uint64 }

// bootClock is CLOCK_BOOTTIME, which stat's start time counts from (since
// Linux 5.5; before, CLOCK_MONOTONIC, the same unless the host suspended).
func bootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0 // every target then counts as young: the stricter check
	}
	return time.Duration(ts.Nano())
}

// pinYoung marks t young when its start tick ends after before (the boot
// clock when the walk that saw it began), and records its executable.
func (k *Killer) pinYoung(t *Target, before time.Duration, hz uint64) {
	if hz == 0 || time.Duration(t.ID.StartTicks+1)*time.Second/time.Duration(hz) <= before {
		return
	}
	t.young = true
	t.exe, _ = k.exeOf(t.ID.PID) // unreadable (another user's): comm alone
}

// exeOf reads the device and inode of pid's executable. The stat follows
// /proc/<pid>/exe to the file itself, which may ask its filesystem (a hung
// FUSE or NFS mount never answers): it is given procwalk's read timeout,
// after which it is left blocked on a goroutine of its own and the
// executable counts as unreadable (the young check then has the comm
// alone).
func (k *Killer) exeOf(pid int) (exeID, error) {
	type result struct {
		id  exeID
		err error
	}
	done := make(chan result, 1)
	go func() {
		var st syscall.Stat_t
		if err := syscall.Stat(k.fs.Path(strconv.Itoa(pid), "exe"), &st); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{id: exeID{uint64(st.Dev), st.Ino}}
	}()
	timer := time.NewTimer(procwalk.DefaultReadTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.id, r.err
	case <-timer.C:
		return exeID{}, fmt.Errorf("pid %d: stat of its executable blocked for more than %s: %w", pid, procwalk.DefaultReadTimeout, os.ErrDeadlineExceeded)
	}
}

// sameYoung checks, for a young target whose pid is open, that comm and
// executable are still the ones the plan saw.
func (k *Killer) sameYoung(t Target) error {
	if !t.young {
		return nil
	}
	st, err := k.fs.ReadStat(t.ID.PID)
	if err != nil {
		return err
	}
	exe, _ := k.exeOf(t.ID.PID)
	if st.Comm != t.Comm || t.exe != (exeID{}) && exe != t.exe {
		return fmt.Errorf("%w: pid %d started in the same clock tick as the target but is now %s (was %s, or another executable)",
			ErrIdentityChanged, t.ID.PID, st.Comm, t.Comm)
	}
	return nil
}
