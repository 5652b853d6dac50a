package procwalk

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
	"unsafe"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// sys.go wraps the few syscalls of the scan loop so that they take paths as
// reused NUL-terminated byte slices: the string-taking wrappers allocate a
// copy per call, and a scan makes several calls per process.

func readlinkat(dirfd int, path []byte, buf []byte) (int, error) {
	r, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
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

// parseDirents calls fn with the NUL-terminated name of each record in b. A
// record too short or running past b ends the walk and an empty name is
// skipped: the kernel writes neither, and neither may panic.
func parseDirents(b []byte, fn func(name []byte)) {
	for len(b) >= fsio.DirentNameOffset {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < fsio.DirentNameOffset || reclen > len(b) {
			return
		}
		name := b[fsio.DirentNameOffset:reclen]
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
