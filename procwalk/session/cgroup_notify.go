//go:build linux

package session

import (
	"bytes"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cgroup_notify.go watches the walked cgroups for what would change their
// membership, so that a walk stands from gather to gather until it does
// (cgroup_walk.go).
//
// Invalidation rule: membership changes only by a write to a cgroup's
// cgroup.procs (v1 tasks, v2 cgroup.threads for threads), which the
// kernel reports to inotify watchers of the cgroup's directory as a
// modification of that file, whichever mount or namespace wrote it (every
// mount of a hierarchy is one superblock). A fork joins its parent's
// cgroup without a write, and clone3's CLONE_INTO_CGROUP places a new
// process without one, but a new process is a new identity, whose cgroup
// file the walk leaves to be read (cgroupWalk.fill). A cgroup made or
// removed, a watched directory gone, and an overflow of the event queue
// count as changes too. The modification time of cgroup.procs is no sign:
// it moves only when the writer truncates (a shell's >), not for
// systemd's, runc's or a plain write.

// cgroupNotify is one inotify instance watching the directories of a walk.
type cgroupNotify struct {
	fd  int
	buf []byte
}

// cgroupWatchMask is what makes a watched cgroup changed: a file in it
// written (filtered to the membership files), a sub-cgroup made,
// removed or renamed, the cgroup itself removed.
const cgroupWatchMask = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// newCgroupNotify starts an inotify instance; nil when the kernel or the
// limits (fs.inotify.max_user_instances) refuse one.
func newCgroupNotify() *cgroupNotify {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &cgroupNotify{fd: fd, buf: make([]byte, 4096)}
}

// watch watches the cgroup directory at path; false when it cannot (the
// watch limit, fs.inotify.max_user_watches, reached): the walk then
// cannot stand.
func (n *cgroupNotify) watch(path string) bool {
	_, err := unix.InotifyAddWatch(n.fd, path, cgroupWatchMask)
	return err == nil
}

// close ends the instance and its watches.
func (n *cgroupNotify) close() { unix.Close(n.fd) }

// changed reads every event queued since the last call and reports
// whether one may have changed membership.
func (n *cgroupNotify) changed() bool {
	changed := false
	for {
		k, err := unix.Read(n.fd, n.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || k <= 0 {
			return changed // EAGAIN: nothing more queued
		}
		changed = changed || membershipEvents(n.buf[:k])
	}
}

// membershipEvents reports whether a read of inotify events holds one
// that may change membership.
func membershipEvents(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true // cut: assume the worst
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[end:]
		switch {
		case ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
			return true
		case ev.Mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0 && ev.Mask&unix.IN_ISDIR != 0:
			return true
		case ev.Mask&unix.IN_MODIFY != 0 && membershipFile(name):
			return true
		}
	}
	return false
}

// membershipFile reports whether writing the file named name moves
// processes or threads between cgroups.
func membershipFile(name []byte) bool {
	switch string(name) {
	case "cgroup.procs", "tasks", "cgroup.threads":
		return true
	}
	return false
}
