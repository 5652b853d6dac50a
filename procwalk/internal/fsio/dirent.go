//go:build linux

package fsio

import (
	"bytes"
	"encoding/binary"
	"syscall"
)

// Where the fields of a getdents64 record sit:
// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }.
const (
	direntReclenOffset = 16
	direntTypeOffset   = 18
	DirentNameOffset   = 19
)

// EachDirent calls fn with the name and type (DT_DIR, DT_UNKNOWN ...) of
// every entry of the open directory fd, using buf for the records. Names
// alias buf: copy to keep.
func EachDirent(fd int, buf []byte, fn func(name []byte, typ byte)) error {
	return EachDirentIno(fd, buf, func(name []byte, typ byte, _ uint64) { fn(name, typ) })
}

// EachDirentIno is EachDirent with each entry's inode number too: a name
// whose inode changed between two listings is another file.
func EachDirentIno(fd int, buf []byte, fn func(name []byte, typ byte, ino uint64)) error {
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

// ParseDirents calls fn with the NUL-terminated name and the type of each
// getdents64 record in b. A record too short or running past b ends the
// walk and an empty name is skipped: the kernel writes neither, and neither
// may panic.
func ParseDirents(b []byte, fn func(name []byte, typ byte)) {
	parseDirents(b, func(name []byte, typ byte, _ uint64) { fn(name, typ) })
}

func parseDirents(b []byte, fn func(name []byte, typ byte, ino uint64)) {
	for len(b) >= DirentNameOffset {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclenOffset:]))
		if reclen < DirentNameOffset || reclen > len(b) {
			return
		}
		name := b[DirentNameOffset:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) > 0 {
			fn(name, b[direntTypeOffset], binary.NativeEndian.Uint64(b))
		}
		b = b[reclen:]
	}
}

// PIDName returns the pid a /proc entry's name is, when it is one: decimal,
// above 0 and below pid_max, which is at most 1<<22 (PID_MAX_LIMIT).
func PIDName(name []byte) (int, bool) {
	pid, ok := Atou(name)
	if !ok || pid == 0 || pid >= 1<<22 {
		return 0, false
	}
	return int(pid), true
}
