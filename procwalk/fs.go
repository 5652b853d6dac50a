//go:build linux

package procwalk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// DefaultRoot is where Linux mounts procfs. The engine never reads it on its
// own: callers (cmd/, plugin/) pass it, or another root, to NewFS.
const DefaultRoot = "/proc"

// Sentinel errors. Wrapped with %w, so test them with errors.Is.
var (
	// ErrGone means the process exited (or its pid was reused) while we read it.
	ErrGone = errors.New("process is gone")
	// ErrDenied means the kernel refused to show a file (ptrace rules, hidepid).
	ErrDenied = errors.New("permission denied")
	// ErrMalformed means a /proc file did not have the expected shape.
	ErrMalformed = errors.New("malformed /proc file")
	// ErrNoProc means the root given to NewFS is not a procfs mount.
	ErrNoProc = errors.New("not a proc filesystem")
	// ErrBlocked means a read of the root itself (its stat, meminfo, the
	// listing of its pids) blocked past the read timeout: a hung mount.
	ErrBlocked = errors.New("a read of the proc root blocked")
)

// FS is a procfs tree rooted at a path: /proc on a live host, a fixture
// directory in tests. The zero value is not usable; call NewFS.
type FS struct {
	root string
}

// NewFS checks that root looks like procfs (it has a readable "stat" file)
// and returns an FS reading under it.
func NewFS(root string) (FS, error) {
	if _, err := os.Stat(filepath.Join(root, "stat")); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return FS{}, fmt.Errorf("%w: %s: %v", ErrNoProc, root, err)
		}
		// Suggest mounting procfs only on an empty directory (or none):
		// a mount over a directory that holds files would hide them.
		if entries, err := os.ReadDir(root); err == nil && len(entries) > 0 {
			return FS{}, fmt.Errorf("%w: %s has no stat file and holds other files: pass --proc with the root procfs is mounted on (usually /proc)", ErrNoProc, root)
		}
		return FS{}, fmt.Errorf("%w: %s has no stat file; mount procfs there (mount -t proc proc %s) or pass --proc with the right root", ErrNoProc, root, root)
	}
	return FS{root: root}, nil
}

// Root is the path the FS reads under.
func (fs FS) Root() string { return fs.root }

// Path joins elements under the root.
func (fs FS) Path(elem ...string) string {
	return filepath.Join(append([]string{fs.root}, elem...)...)
}

// PIDPath returns the path of file in pid's directory, <root>/<pid>/<file>.
func (fs FS) PIDPath(pid int, file string) string {
	return fs.root + "/" + strconv.Itoa(pid) + "/" + file
}

// IsGone reports whether err means the process went away while it was read:
// ENOENT (its directory vanished), ESRCH (the task is exiting) or ErrGone.
func IsGone(err error) bool {
	return errors.Is(err, ErrGone) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH)
}

// IsDenied reports whether err means the kernel refused access.
func IsDenied(err error) bool {
	return errors.Is(err, ErrDenied) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// Classify maps a read or signal error onto ErrGone and ErrDenied, keeping
// the original.
func Classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ESRCH):
		return fmt.Errorf("%w: %w", ErrGone, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("%w: %w", ErrDenied, err)
	}
	return err
}

// readFile reads a small file whole, allocating. For cold paths.
func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, Classify(&os.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	b, _, err := fsio.ReadAllFD(fd, make([]byte, 0, 4096), false)
	if err != nil {
		return nil, Classify(&os.PathError{Op: "read", Path: path, Err: err})
	}
	return b, nil
}
