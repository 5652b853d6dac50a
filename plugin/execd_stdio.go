//go:build linux

package plugin

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procwalk/procwalk/procwalk"
)

// execd_stdio.go is what execd mode knows of its stdin and stdout as
// processes: whether anyone will write to stdin (Execd.StdinEnded), and
// closing the outputs before exiting so that Telegraf reads them to the
// end.

// StdinEnded reports whether r, stdin, is at its end and no one will
// write to it: /dev/null (a character device that is no terminal), a
// regular file, or a pipe or socket whose writers are gone (poll(2) says
// POLLHUP). cron, nohup and </dev/null give such a stdin; Telegraf's
// execd gives a pipe it holds open until it stops us.
func StdinEnded(r io.Reader) bool {
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
		return !procwalk.IsTerminal(f)
	case unix.S_IFIFO, unix.S_IFSOCK:
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN | unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n == 1 && fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) != 0
	}
	return false
}

// pipeReleaseWait is how long execd mode lingers after closing its stdout
// and stderr: time for Telegraf's reader goroutines to be scheduled and see
// EOF, even on a loaded machine.
const pipeReleaseWait = 100 * time.Millisecond

// ReleasePipes closes outputs (stdout and stderr), when they are files
// (also under a wrapper, procwalk.FileOf), and lingers a moment before
// execd mode exits. Telegraf's execd (internal/process, v1.37) reads our
// stdout and stderr in goroutines while its cmd.Wait, which returns as
// soon as we are reaped, closes both pipes: a reader that has not reached
// EOF by then fails with "read |0: file already closed", logged as an
// error, and loses what it had not read (in our runs, 2 to 5 of 15
// shutdowns under load). Closed before we exit, the pipes reach EOF while
// we still run.
func ReleasePipes(outputs ...io.Writer) {
	closed := false
	for _, w := range outputs {
		if f, ok := procwalk.FileOf(w); ok && f.Close() == nil {
			closed = true
		}
	}
	if closed {
		time.Sleep(pipeReleaseWait)
	}
}
