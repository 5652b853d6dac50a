//go:build linux

package procwalk

import (
	"os"
	"syscall"
	"unsafe"
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

// pathError builds the error for a failed read of root/rel; cold path only.
func pathError(op, root string, rel []byte, err error) error {
	p := string(rel)
	if n := len(p); n > 0 && p[n-1] == 0 {
		p = p[:n-1]
	}
	return Classify(&os.PathError{Op: op, Path: root + "/" + p, Err: err})
}
