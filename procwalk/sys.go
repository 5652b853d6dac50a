package procwalk

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
	"unsafe"
)

// sys.go wraps the few syscalls of the scan loop so that they take paths as
// reused NUL-terminated byte slices: the string-taking wrappers allocate a
// copy per call, and a scan makes several calls per process.

// openat opens path under dirfd. O_NONBLOCK: a FIFO planted in a fake
// root (or any special file) must not block the open or the reads.
func openat(dirfd int, path []byte, flags int) (int, error) {
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

func readlinkat(dirfd int, path []byte, buf []byte) (int, error) {
	r, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// readAllFD reads fd to EOF into buf (reusing its capacity), at most
// maxFileBytes; truncated reports a longer file. With oneRecord, a read that
// leaves room in buf ends it without the read that would return 0: for /proc
// files made of a single seq_file record (stat, statm, status, io, cgroup,
// oom_score, smaps_rollup) a short read is the whole file, as it is for a
// regular file, and the extra syscall per file is a tenth of a scan's cost.
// Multi-record files (mountinfo) and cmdline may return short reads before
// their end and are read until a read returns 0.
func readAllFD(fd int, buf []byte, oneRecord bool) (out []byte, truncated bool, err error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxFileBytes {
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

// eachDirent calls fn with the name of every entry of the open directory fd,
// using buf for getdents64 records. Names alias buf: copy to keep.
func eachDirent(fd int, buf []byte, fn func(name []byte)) error {
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		parseDirents(buf[:n], fn)
	}
}

// direntNameOffset is where the name starts in a getdents64 record:
// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }.
const direntNameOffset = 19

// parseDirents calls fn with the NUL-terminated name of each record in b. A
// record too short or running past b ends the walk and an empty name is
// skipped: the kernel writes neither, and neither may panic.
func parseDirents(b []byte, fn func(name []byte)) {
	for len(b) >= direntNameOffset {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < direntNameOffset || reclen > len(b) {
			return
		}
		name := b[direntNameOffset:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) > 0 {
			fn(name)
		}
		b = b[reclen:]
	}
}

// pathError builds the error for a failed read of root/rel; cold path only.
func pathError(op, root string, rel []byte, err error) error {
	p := string(rel)
	if n := len(p); n > 0 && p[n-1] == 0 {
		p = p[:n-1]
	}
	return Classify(&os.PathError{Op: op, Path: root + "/" + p, Err: err})
}
