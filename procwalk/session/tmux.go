//go:build linux

package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// tmux.go asks tmux servers for their panes: one `tmux list-panes -a` per
// server per gather, never one exec per session. Grouping the processes is
// in session_tmux.go.

// TmuxPaneFormat is the -F format given to `tmux list-panes -a`. Session
// names are sanitized by tmux (no tabs or newlines); the window name, last,
// may hold a tab, so each record ends with tmuxRecordEnd. The pane's current
// command and path are not asked for: the server would read /proc for every
// pane on every run, which doubled the time of list-panes; the Grouper
// finds them in /proc on request instead (Grouper.PaneForegrounds).
const TmuxPaneFormat = "#{pid}\t#{session_id}\t#{session_name}\t#{session_attached}\t#{window_index}\t" +
	"#{pane_index}\t#{pane_id}\t#{pane_pid}\t#{pane_tty}\t#{pane_dead}\t#{window_name}" + tmuxRecordEnd

// tmuxRecordEnd ends each record: the ASCII unit separator, which tmux passes
// through and no sane name contains, then a newline.
const tmuxRecordEnd = "\x1f"

// tmuxFixedFields is the number of tab-separated fields before window_name.
const tmuxFixedFields = 10

// Errors of the tmux lister; neither is fatal to a gather.
var (
	ErrNoTmux       = errors.New("tmux is not installed")
	ErrNoTmuxServer = errors.New("no tmux server")
)

// tmuxTimeout bounds one list-panes: a wedged server must not stall a gather.
const tmuxTimeout = 3 * time.Second

// probeUnixSocket connects to the unix socket at path without blocking and
// hangs up: nil (or EAGAIN, a full backlog) when a server listens. Package
// net would do the same but links its resolver, and with it the C dynamic
// loader, into every procwalk, a start-up cost one-shot commands pay.
func probeUnixSocket(path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: path})
}

// runTmuxListPanes is the default TmuxConfig.ListPanes.
func runTmuxListPanes(socket string) ([]byte, error) {
	// A socket left by a server that died refuses connections: say so
	// without starting tmux, which costs milliseconds per socket.
	switch err := probeUnixSocket(socket); {
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT):
		return nil, fmt.Errorf("%w on %s", ErrNoTmuxServer, socket)
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return nil, fmt.Errorf("cannot connect to %s: %w: a server there, if any, is another user's (run procwalk as that user, or as root)", socket, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	// -u: without a UTF-8 locale (LANG unset, as under a service manager
	// or in a container) tmux prints the format's tabs and separator as
	// '_', and no record would parse.
	cmd := exec.CommandContext(ctx, "tmux", "-u", "-S", socket, "list-panes", "-a", "-F", TmuxPaneFormat)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w (install tmux or leave the tmux kind out)", ErrNoTmux, err)
	}
	return tmuxReply(socket, out, strings.TrimSpace(stderr.String()), err, ctx.Err() != nil)
}

// tmuxReply is list-panes' answer from what the tmux client printed (out,
// and msg on stderr) and how it ended.
func tmuxReply(socket string, out []byte, msg string, err error, timedOut bool) ([]byte, error) {
	switch {
	case err == nil && len(out) == 0 && msg != "":
		// A server has a pane at least. tmux 3.3 and later refuse a user
		// the server's owner has not allowed with "access not allowed"
		// and exit status 0: a refusal, not an empty server.
		hint := ""
		if strings.Contains(msg, "access not allowed") {
			hint = " (its owner may allow this user with tmux server-access -a USER; write access lets it type into every pane as the owner)"
		}
		return nil, fmt.Errorf("tmux -S %s list-panes: %s%s", socket, msg, hint)
	case err == nil:
		return out, nil
	case timedOut:
		return nil, fmt.Errorf("tmux -S %s list-panes: no answer within %v", socket, tmuxTimeout)
	case strings.Contains(msg, "no server running") || strings.Contains(msg, "Connection refused") ||
		strings.Contains(msg, "No such file or directory"):
		// "no server running on <path>", "error connecting to <path>
		// (Connection refused)": a stale socket.
		return nil, fmt.Errorf("%w on %s", ErrNoTmuxServer, socket)
	default:
		return nil, fmt.Errorf("tmux -S %s list-panes: %w: %s", socket, err, msg)
	}
}

// tmuxPaneRecord is one parsed record of TmuxPaneFormat.
type tmuxPaneRecord struct {
	serverPID   int
	sessionID   string // "$3"
	sessionName string
	attached    int
	window      int
	pane        TmuxPane
}

// parseTmuxPanes parses list-panes output in TmuxPaneFormat. Records that do
// not parse are counted in bad, not fatal: one odd pane must not hide the rest.
func parseTmuxPanes(b []byte) (recs []tmuxPaneRecord, bad int) {
	for len(b) > 0 {
		end := bytes.Index(b, []byte(tmuxRecordEnd+"\n"))
		var rec []byte
		if end < 0 {
			rec, b = b, nil
		} else {
			rec, b = b[:end], b[end+len(tmuxRecordEnd)+1:]
		}
		if len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		r, ok := parseTmuxRecord(string(rec))
		if !ok {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad
}

func parseTmuxRecord(rec string) (tmuxPaneRecord, bool) {
	// The window name is last and takes the rest, tabs included.
	f := strings.SplitN(rec, "\t", tmuxFixedFields+1)
	if len(f) != tmuxFixedFields+1 {
		return tmuxPaneRecord{}, false
	}
	var r tmuxPaneRecord
	var ok [5]bool
	r.serverPID, ok[0] = atoiString(f[0])
	r.sessionID, r.sessionName = f[1], f[2]
	r.attached, ok[1] = atoiString(f[3])
	r.window, ok[2] = atoiString(f[4])
	paneIndex, ok3 := atoiString(f[5])
	ok[3] = ok3
	r.pane.PaneID = f[6]
	r.pane.PID, ok[4] = atoiString(f[7])
	r.pane.TTY = f[8]
	r.pane.Dead = f[9] == "1"
	r.pane.WindowName = f[10]
	if slices.Contains(ok[:], false) || r.sessionName == "" || !strings.HasPrefix(r.sessionID, "$") {
		return tmuxPaneRecord{}, false
	}
	r.pane.Target = r.sessionName + ":" + strconv.Itoa(r.window) + "." + strconv.Itoa(paneIndex)
	return r, true
}

func atoiString(s string) (int, bool) {
	v, ok := fsio.Atoi([]byte(s))
	return int(v), ok
}

// tmuxSockets returns the sockets to ask: the configured ones (names resolve
// in this user's tmux directory), or every socket found in the tmux
// directory of this uid, and of every uid when running as root.
func (c TmuxConfig) sockets() (sockets []string, looked string) {
	dir := c.TmpDir
	if dir == "" {
		dir = os.Getenv("TMUX_TMPDIR")
	}
	if dir == "" {
		dir = "/tmp"
	}
	own := filepath.Join(dir, "tmux-"+strconv.Itoa(os.Getuid()))
	if len(c.Sockets) > 0 {
		for _, s := range c.Sockets {
			if !strings.Contains(s, "/") {
				s = filepath.Join(own, s) // a name, as tmux -L takes
			}
			if !slices.Contains(sockets, s) {
				sockets = append(sockets, s)
			}
		}
		return sockets, strings.Join(sockets, ", ")
	}
	dirs := []string{own}
	looked = own
	if os.Geteuid() == 0 {
		dirs = append(dirs, tmuxDirs(dir)...)
		looked = filepath.Join(dir, "tmux-*")
	}
	// The server we run inside, wherever its socket is: TMUX is
	// "socket,server pid,session index".
	if env := os.Getenv("TMUX"); env != "" {
		if path, _, ok := strings.Cut(env, ","); ok && path != "" {
			sockets = append(sockets, path)
		}
	}
	for _, d := range dirs {
		for _, p := range socketsIn(d) {
			if !slices.Contains(sockets, p) {
				sockets = append(sockets, p)
			}
		}
	}
	return sockets, looked
}

// tmuxDirs returns the tmux-* entries of dir, sorted, as filepath.Glob
// would, in one pass of getdents that keeps no other name: dir is /tmp,
// which may hold thousands of entries, listed at every gather.
func tmuxDirs(dir string) []string {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var dirs []string
	fsio.EachDirent(fd, make([]byte, 8<<10), func(name []byte, typ byte) { // an error leaves those listed so far
		if bytes.HasPrefix(name, []byte("tmux-")) && (typ == syscall.DT_DIR || typ == syscall.DT_UNKNOWN) {
			dirs = append(dirs, filepath.Join(dir, string(name)))
		}
	})
	slices.Sort(dirs)
	return dirs
}

// socketsIn lists the sockets in the directory d. A tmux socket directory
// is its user's, who may swap it for a FIFO or a link: it is opened as a
// file another user controls (fsio.OpenUserDir), never waited on.
func socketsIn(d string) []string {
	fd, err := fsio.OpenUserDir(d, fsio.AnyOwner)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var out []string
	fsio.EachDirent(fd, make([]byte, 8<<10), func(name []byte, typ byte) {
		p := filepath.Join(d, string(name))
		if typ == syscall.DT_UNKNOWN {
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFSOCK {
				typ = syscall.DT_SOCK
			}
		}
		if typ == syscall.DT_SOCK {
			out = append(out, p)
		}
	})
	return out
}
