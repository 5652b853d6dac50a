//go:build linux

package procwalk

import (
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// environ.go reads /proc/<pid>/environ: the environment the process was
// started with, NUL-separated "KEY=value" strings (changes it made later are
// not shown). Only the owner and root may read it.

// EnvironReader reads environ files outside the scan (tmux's backstop,
// an agent's HOME), each read bounded as the scan's are (deadline.go):
// environ waits for the target's memory-map lock, which a stuck process
// may hold for good. A read blocked past the timeout is left to its
// goroutine, which ends when the read does; until then that pid is not
// read again, so a process stuck for good costs one blocked thread.
type EnvironReader struct {
	fs      FS
	timeout time.Duration
	stuck   stuckReads
}

// NewEnvironReader returns a reader of environ files under fs that gives up
// on a read blocked past timeout (DefaultReadTimeout is a good choice).
func NewEnvironReader(fs FS, timeout time.Duration) *EnvironReader {
	return &EnvironReader{fs: fs, timeout: timeout}
}

// Read reads pid's environ, or fails with errTimedOut.
func (r *EnvironReader) Read(pid int) ([]byte, error) { return r.ReadFile(pid, "environ") }

// ReadFile reads another file of pid bounded the same way: cmdline, which
// waits for the same lock.
func (r *EnvironReader) ReadFile(pid int, name string) ([]byte, error) {
	if r.stuck.lookup(pid) != "" {
		return nil, errTimedOut
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := r.fs.ReadPIDFile(pid, name, nil)
		done <- result{b, err}
	}()
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.b, res.err
	case <-timer.C:
		r.stuck.add(pid, name)
		go func() {
			<-done
			r.stuck.remove(pid)
		}()
		return nil, errTimedOut
	}
}

// ReadPIDFile reads <root>/<pid>/<name> into buf (reusing its capacity).
func (fs FS) ReadPIDFile(pid int, name string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(fs.PIDPath(pid, name), syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return buf[:0], Classify(err)
	}
	buf, _, err = fsio.ReadAllFD(fd, buf, false)
	syscall.Close(fd)
	return buf, Classify(err)
}
