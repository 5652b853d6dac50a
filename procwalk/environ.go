package procwalk

import (
	"bytes"
	"syscall"
	"time"
)

// environ.go reads /proc/<pid>/environ: the environment the process was
// started with, NUL-separated "KEY=value" strings (changes it made later are
// not shown). Only the owner and root may read it.

// tmuxEnviron returns the TMUX and TMUX_PANE values of pid's environment
// ("" when absent or unreadable, with denied set when the kernel refused).
func (r *environReader) tmuxEnviron(pid int) tmuxEnv {
	b, err := r.read(pid)
	if err != nil {
		return tmuxEnv{denied: IsDenied(err)}
	}
	var env tmuxEnv
	env.tmux, env.pane = parseTmuxEnviron(b)
	return env
}

// environReader reads environ files outside the scan (tmux's backstop,
// an agent's HOME), each read bounded as the scan's are (deadline.go):
// environ waits for the target's memory-map lock, which a stuck process
// may hold for good. A read blocked past the timeout is left to its
// goroutine, which ends when the read does; until then that pid is not
// read again, so a process stuck for good costs one blocked thread.
type environReader struct {
	fs      FS
	timeout time.Duration
	stuck   stuckReads
}

// read reads pid's environ, or fails with errTimedOut.
func (r *environReader) read(pid int) ([]byte, error) {
	if r.stuck.lookup(pid) != "" {
		return nil, errTimedOut
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := r.fs.readPIDFile(pid, "environ", nil)
		done <- result{b, err}
	}()
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.b, res.err
	case <-timer.C:
		r.stuck.add(pid, "environ")
		go func() {
			<-done
			r.stuck.remove(pid)
		}()
		return nil, errTimedOut
	}
}

// readPIDFile reads <root>/<pid>/<name> into buf (reusing its capacity).
func (fs FS) readPIDFile(pid int, name string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(fs.pidPath(pid, name), syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return buf[:0], Classify(err)
	}
	buf, _, err = readAllFD(fd, buf, false)
	syscall.Close(fd)
	return buf, Classify(err)
}

// parseTmuxEnviron finds TMUX= and TMUX_PANE= in an environ block.
func parseTmuxEnviron(b []byte) (tmux, pane string) {
	for len(b) > 0 {
		var kv []byte
		if i := bytes.IndexByte(b, 0); i >= 0 {
			kv, b = b[:i], b[i+1:]
		} else {
			kv, b = b, nil
		}
		switch {
		case bytes.HasPrefix(kv, []byte("TMUX=")):
			tmux = string(kv[len("TMUX="):])
		case bytes.HasPrefix(kv, []byte("TMUX_PANE=")):
			pane = string(kv[len("TMUX_PANE="):])
		}
	}
	return tmux, pane
}
