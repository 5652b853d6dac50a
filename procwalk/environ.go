package procwalk

import (
	"bytes"
	"syscall"
)

// environ.go reads /proc/<pid>/environ: the environment the process was
// started with, NUL-separated "KEY=value" strings (changes it made later are
// not shown). Only the owner and root may read it.

// tmuxEnviron returns the TMUX and TMUX_PANE values of pid's environment
// ("" when absent or unreadable, with denied set when the kernel refused),
// reusing buf for the read.
func (fs FS) tmuxEnviron(pid int, buf []byte) (tmuxEnv, []byte) {
	buf, err := fs.readPIDFile(pid, "environ", buf)
	if err != nil {
		return tmuxEnv{denied: IsDenied(err)}, buf
	}
	var env tmuxEnv
	env.tmux, env.pane = parseTmuxEnviron(buf)
	return env, buf
}

// readPIDFile reads <root>/<pid>/<name> into buf (reusing its capacity).
func (fs FS) readPIDFile(pid int, name string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(fs.PIDPath(pid, name), syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
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
