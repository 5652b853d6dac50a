//go:build linux

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
)

// stuckfile_test.go mounts a one-file FUSE filesystem whose reads are never
// answered: a read of it blocks in the kernel, O_NONBLOCK or not, as a read
// of /proc/<pid>/cmdline does while the target's mmap lock is stuck. A FIFO
// cannot stand in: procwalk opens every file O_NONBLOCK, and a FIFO then
// reads as empty (no writer) or fails with EAGAIN (a silent writer).
//
// The protocol is the kernel's (include/uapi/linux/fuse.h); only what a
// mount of a regular file needs is answered: INIT, GETATTR, OPEN, FLUSH and
// RELEASE. READ is counted and left waiting; everything else gets ENOSYS.
// The test process itself must never read the file: Go's poller would ask
// the server (this process) to poll it, and wait for itself.

// FUSE opcodes and sizes used here.
const (
	fuseGetattr   = 3
	fuseOpen      = 14
	fuseRead      = 15
	fuseRelease   = 18
	fuseFlush     = 25
	fuseInit      = 26
	fuseInterrupt = 36
	fuseInHeader  = 40 // len, opcode, unique, nodeid, uid, gid, pid, extlen, padding
	fuseOutHeader = 16 // len, error, unique
	fuseAttrSize  = 88
	fopenDirectIO = 1 // every read() reaches the server, none is served from the page cache
)

// stuckFile is a FUSE mount of one regular file whose reads never end.
type stuckFile struct {
	path    string
	dev     *os.File
	release sync.Once

	mu    sync.Mutex
	reads int // READ requests received: each is a read blocked in the kernel
}

// mountStuckFile mounts the stuck file over path (an existing regular file)
// and serves it until the test ends; then it unmounts it, which ends every
// read still waiting with an error. It skips the test where FUSE is not
// available to the caller (not root, no /dev/fuse).
func mountStuckFile(t *testing.T, path string) *stuckFile {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting the FUSE file that never answers a read needs root")
	}
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	opts := fmt.Sprintf("fd=%d,rootmode=100000,user_id=0,group_id=0,allow_other", fd)
	if err := syscall.Mount("procwalk-stuck", path, "fuse", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		syscall.Close(fd)
		t.Skipf("cannot mount FUSE over %s: %v", path, err)
	}
	// Non-blocking: the os.File waits in Go's poller, and Close wakes it.
	// Made only now: the device polls once it serves a mount.
	dev := os.NewFile(uintptr(fd), "/dev/fuse")
	s := &stuckFile{path: path, dev: dev}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve()
	}()
	t.Cleanup(func() {
		s.Release()
		<-done
		if err := syscall.Unmount(path, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", path, err)
		}
	})
	return s
}

// Release ends every read waiting and every later one with an error, as a
// lock finally released would: it closes the device, which aborts the
// connection. A read of a FUSE file that its server received is not ended
// even by SIGKILL (the kernel waits it out), so a process blocked in one
// exits only after this.
func (s *stuckFile) Release() {
	s.release.Do(func() { s.dev.Close() })
}

// Reads returns how many reads of the file have blocked so far; until
// Release, every one of them is still blocked.
func (s *stuckFile) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// serve answers requests until the device is closed or the mount aborted.
func (s *stuckFile) serve() {
	buf := make([]byte, 1<<17) // at least max_write + a header
	le := binary.LittleEndian
	for {
		n, err := s.dev.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.ENOENT) {
				continue // ENOENT: a request interrupted before it was read
			}
			return // closed, or ENODEV once the mount is gone
		}
		if n < fuseInHeader {
			continue
		}
		opcode, unique := le.Uint32(buf[4:]), le.Uint64(buf[8:])
		switch opcode {
		case fuseInit:
			out := make([]byte, 64)      // fuse_init_out
			le.PutUint32(out[0:], 7)     // major
			le.PutUint32(out[4:], 31)    // minor
			le.PutUint32(out[8:], 0)     // max_readahead
			le.PutUint32(out[20:], 4096) // max_write
			le.PutUint32(out[24:], 1)    // time_gran
			s.reply(unique, 0, out)
		case fuseGetattr:
			out := make([]byte, 16+fuseAttrSize) // fuse_attr_out: attr_valid 0, so asked again
			attr := out[16:]
			le.PutUint64(attr[0:], 1)                      // ino
			le.PutUint64(attr[8:], 4096)                   // size
			le.PutUint32(attr[60:], syscall.S_IFREG|0o444) // mode
			le.PutUint32(attr[64:], 1)                     // nlink
			le.PutUint32(attr[80:], 4096)                  // blksize
			s.reply(unique, 0, out)
		case fuseOpen:
			out := make([]byte, 16) // fuse_open_out
			le.PutUint32(out[8:], fopenDirectIO)
			s.reply(unique, 0, out)
		case fuseRead:
			s.mu.Lock()
			s.reads++
			s.mu.Unlock()
			// Never answered.
		case fuseFlush, fuseRelease:
			s.reply(unique, 0, nil)
		case fuseInterrupt:
			// No answer: the interrupted read goes on waiting, as a read
			// blocked on a stuck mmap lock does for any signal but a fatal one.
		default:
			s.reply(unique, -int32(syscall.ENOSYS), nil)
		}
	}
}

func (s *stuckFile) reply(unique uint64, errno int32, body []byte) {
	out := make([]byte, fuseOutHeader+len(body))
	binary.LittleEndian.PutUint32(out[0:], uint32(len(out)))
	binary.LittleEndian.PutUint32(out[4:], uint32(errno))
	binary.LittleEndian.PutUint64(out[8:], unique)
	copy(out[fuseOutHeader:], body)
	s.dev.Write(out) // a request aborted meanwhile gets ENOENT: nothing to do
}
