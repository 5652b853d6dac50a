//go:build linux

package session

import (
	"bytes"

	"github.com/procwalk/procwalk/procwalk"
)

// tmux_environ.go finds the tmux server and pane of a process in its
// environ (TMUX, TMUX_PANE), read by procwalk.EnvironReader.

// tmuxEnviron returns the TMUX and TMUX_PANE values of pid's environment
// ("" when absent or unreadable, with denied set when the kernel refused).
func tmuxEnviron(r *procwalk.EnvironReader, pid int) tmuxEnv {
	b, err := r.Read(pid)
	if err != nil {
		return tmuxEnv{denied: procwalk.IsDenied(err)}
	}
	var env tmuxEnv
	env.tmux, env.pane = parseTmuxEnviron(b)
	return env
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
