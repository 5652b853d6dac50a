//go:build linux

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// stdout.go tells telegraf --execd a stdin no one will write to (a run's
// stdout whose reader has gone is scripting/runner's Stdout).

// stdinEnded reports whether r, stdin, is at its end and no one will
// write to it: /dev/null (a character device that is no terminal), a
// regular file, or a pipe or socket whose writers are gone (poll(2) says
// POLLHUP). cron, nohup and </dev/null give such a stdin; Telegraf's
// execd gives a pipe it holds open until it stops us.
func stdinEnded(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return true
	case unix.S_IFCHR:
		return !isTerminal(f)
	case unix.S_IFIFO, unix.S_IFSOCK:
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN | unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n == 1 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) != 0
	}
	return false
}
