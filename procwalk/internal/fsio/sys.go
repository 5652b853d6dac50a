//go:build linux

package fsio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxFileBytes bounds any single /proc file we read. cmdline can be as long as
// ARG_MAX allows; we keep the first 256 KiB and mark the rest as truncated.
const MaxFileBytes = 256 << 10

// Openat opens path under dirfd. O_NONBLOCK: a FIFO planted in a fake
// root (or any special file) must not block the open or the reads.
func Openat(dirfd int, path []byte, flags int) (int, error) {
	for {
		r, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags|syscall.O_CLOEXEC|syscall.O_NONBLOCK), 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

// ReadAllFD reads fd to EOF into buf (reusing its capacity), at most
// maxFileBytes; truncated reports a longer file. With oneRecord, a read that
// leaves room in buf ends it without the read that would return 0: for /proc
// files made of a single seq_file record (stat, statm, status, io, cgroup,
// oom_score, smaps_rollup) a short read is the whole file, as it is for a
// regular file, and the extra syscall per file is a tenth of a scan's cost.
// Multi-record files (mountinfo) and cmdline may return short reads before
// their end and are read until a read returns 0.
func ReadAllFD(fd int, buf []byte, oneRecord bool) (out []byte, truncated bool, err error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= MaxFileBytes {
				return buf, true, nil
			}
			buf = append(buf, 0)[:len(buf)]
		}
		room := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, false, err
		}
		if n == 0 {
			return buf, false, nil
		}
		buf = buf[:len(buf)+n]
		if oneRecord && n < room {
			return buf, false, nil
		}
	}
}

// OwnerAt returns the uid owning path under dirfd (NUL-terminated, not
// followed if a link), asking statx for the owner alone: one system call
// and no allocation, where unix.Fstatat copies the path.
func OwnerAt(dirfd int, path []byte) (uint32, error) {
	var st unix.Statx_t
	for {
		_, _, e := syscall.Syscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			unix.AT_SYMLINK_NOFOLLOW, unix.STATX_UID, uintptr(unsafe.Pointer(&st)), 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return 0, e
		case st.Mask&unix.STATX_UID == 0:
			return 0, syscall.EOPNOTSUPP // the filesystem has no owner to give
		}
		return st.Uid, nil
	}
}
