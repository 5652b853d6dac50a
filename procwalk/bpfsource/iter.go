//go:build linux

package bpfsource

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iter.go attaches the task iterator and opens its reads with bpf(2)
// itself: BPF_LINK_CREATE, then a BPF_ITER_CREATE per read. That is all of
// cilium/ebpf's link package this source used; importing that package links
// in its features package too, whose package initialisation (tables of
// feature probes, about 0.04 ms and 144 allocations) ran at the start of
// every procwalk process, --version included.

// iterLink is an attached iterator: a BPF link's file descriptor.
type iterLink struct{ fd int }

// linkCreateIterAttr is union bpf_attr's link_create for an iterator
// (include/uapi/linux/bpf.h): prog_fd, target_fd, attach_type, flags, then
// iter_info (a pointer to union bpf_iter_link_info; none here: every task)
// and iter_info_len, zero-padded to 64 bytes as cilium/ebpf sends it.
type linkCreateIterAttr struct {
	progFD      uint32
	targetFD    uint32
	attachType  uint32
	flags       uint32
	iterInfo    uint64
	iterInfoLen uint32
	_           [36]byte
}

// iterCreateAttr is union bpf_attr's iter_create.
type iterCreateAttr struct {
	linkFD uint32
	flags  uint32
}

// bpf calls bpf(2) with attr and returns the new file descriptor (the
// kernel opens link and iterator descriptors close-on-exec).
func bpf(cmd uintptr, attr unsafe.Pointer, size uintptr) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_BPF, cmd, uintptr(attr), size)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// attachIter links the loaded iterator program prog (its file descriptor)
// to its attach point, the task iterator it was loaded for.
func attachIter(progFD int) (iterLink, error) {
	attr := linkCreateIterAttr{progFD: uint32(progFD), attachType: unix.BPF_TRACE_ITER}
	fd, err := bpf(unix.BPF_LINK_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(&attr)
	if err != nil {
		return iterLink{fd: -1}, fmt.Errorf("BPF_LINK_CREATE: %w", err)
	}
	return iterLink{fd: fd}, nil
}

// open starts one pass of the iterator: reading the file runs the program
// over every task, and its end is the pass's end.
func (l iterLink) open() (*os.File, error) {
	attr := iterCreateAttr{linkFD: uint32(l.fd)}
	fd, err := bpf(unix.BPF_ITER_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(&attr)
	if err != nil {
		return nil, fmt.Errorf("BPF_ITER_CREATE: %w", err)
	}
	return os.NewFile(uintptr(fd), "bpf_iter"), nil
}

// close detaches the iterator, once: a second close closes nothing (the
// number may belong to another file by then), as cilium/ebpf's links did.
func (l *iterLink) close() error {
	fd := l.fd
	l.fd = -1
	if fd < 0 {
		return nil
	}
	return unix.Close(fd)
}
