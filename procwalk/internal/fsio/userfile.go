//go:build linux

package fsio

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userfile.go is the one way procwalk opens a file or directory another
// user controls: an agent's transcript and the files beside it, a tmux
// socket directory, a file inside a container's root, a pidfile. Such a
// path can be swapped, between a directory listing and the open, for a
// FIFO (an open for reading blocks until someone opens it for writing, and
// no signal ends it), a device (whose open has side effects), or a symbolic
// link to a file the owner may not read. So the path is first opened with
// O_PATH|O_NOFOLLOW, which opens nothing and follows no link; the
// descriptor's type and owner are checked; and only a regular file (or a
// directory, for OpenUserDir) is then opened for reading, through
// /proc/self/fd, which reopens that very inode and cannot be swapped.
// Reads are the caller's, bounded by its buffers (ReadUserFile bounds
// whole-file reads). TestEveryOpenIsAccountedFor checks that no other code
// opens such a file another way.

// Errors of OpenUserFile and OpenUserDir, wrapped with the path.
var (
	// ErrNotRegular: the path is a FIFO, socket, device or directory
	// where a regular file was wanted (or not a directory, for a dir).
	ErrNotRegular = errors.New("not a regular file")
	// ErrSymlink: the path's last component is a symbolic link.
	ErrSymlink = errors.New("a symbolic link, not followed")
	// ErrOtherOwner: the file belongs to another user than the one asked.
	ErrOtherOwner = errors.New("owned by another user")
	// ErrTooLarge: ReadUserFile's file is longer than its bound.
	ErrTooLarge = errors.New("larger than the bound")
)

// AnyOwner, as OpenUserFile's owner, accepts a file of any owner.
const AnyOwner = -1

// UserFile is a regular file opened by OpenUserFile, with what fstat said
// of it at the open.
type UserFile struct {
	fd      int
	Size    int64
	Dev     uint64
	Ino     uint64
	UID     uint32
	ModTime time.Time
}

// OpenUserFile opens the regular file at path for reading, refusing a
// symbolic link, anything but a regular file, and, when owner is not
// AnyOwner, a file not owned by uid owner. It never blocks on the file's
// type: see the file comment.
func OpenUserFile(path string, owner int) (*UserFile, error) {
	fd, st, err := openChecked(path, owner, syscall.S_IFREG, ErrNotRegular)
	if err != nil {
		return nil, err
	}
	return &UserFile{fd: fd, Size: st.Size, Dev: uint64(st.Dev), Ino: st.Ino, UID: st.Uid,
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec)}, nil
}

// ReadAt reads len(b) bytes or less at off (pread), as io.ReaderAt.
func (f *UserFile) ReadAt(b []byte, off int64) (int, error) {
	for {
		n, err := syscall.Pread(f.fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		return n, err
	}
}

// Close closes the file.
func (f *UserFile) Close() error { return syscall.Close(f.fd) }

// ReadUserFile reads the whole regular file at path (OpenUserFile's rules)
// when it holds at most max bytes, else ErrTooLarge.
func ReadUserFile(path string, owner int, max int) ([]byte, error) {
	f, err := OpenUserFile(path, owner)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.readAll(path, max)
}

func (f *UserFile) readAll(path string, max int) ([]byte, error) {
	if f.Size > int64(max) {
		return nil, fmt.Errorf("%s: %d bytes, %w of %d", path, f.Size, ErrTooLarge, max)
	}
	b := make([]byte, f.Size+1) // one more: a file that grew since the fstat is seen
	n := 0
	for n < len(b) {
		m, err := f.ReadAt(b[n:], int64(n))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n > max {
		return nil, fmt.Errorf("%s: grew past %d bytes, %w", path, max, ErrTooLarge)
	}
	return b[:n], nil
}

// OpenUserDir opens the directory at path for reading its entries
// (EachDirent), refusing a symbolic link, anything but a directory and,
// when owner is not AnyOwner, a directory not owned by uid owner. The
// caller closes the descriptor.
func OpenUserDir(path string, owner int) (int, error) {
	fd, _, err := openChecked(path, owner, syscall.S_IFDIR, errNotDir)
	return fd, err
}

var errNotDir = errors.New("not a directory")

// openChecked opens path with O_PATH|O_NOFOLLOW, checks that it is of type
// typ and owner's, then reopens it for reading (reopen).
func openChecked(path string, owner int, typ uint32, wrongType error) (int, syscall.Stat_t, error) {
	pfd, err := openRetry(path, unix.O_PATH|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		if err == syscall.ELOOP {
			err = ErrSymlink
		}
		return -1, syscall.Stat_t{}, fmt.Errorf("%s: %w", path, err)
	}
	defer syscall.Close(pfd)
	return reopen(pfd, path, owner, typ, wrongType)
}

// reopen checks the O_PATH descriptor pfd, of path, to be of type typ and
// owner's, then opens that inode for reading through /proc/self/fd.
func reopen(pfd int, path string, owner int, typ uint32, wrongType error) (int, syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err != nil {
		return -1, st, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkStat(&st, owner, typ, wrongType); err != nil {
		return -1, st, fmt.Errorf("%s: %w", path, err)
	}
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
	if typ == syscall.S_IFDIR {
		flags |= syscall.O_DIRECTORY
	}
	fd, err := openRetry("/proc/self/fd/"+strconv.Itoa(pfd), flags)
	if err == syscall.ENOENT {
		// No /proc here: open the path itself. O_NONBLOCK and O_NOFOLLOW
		// still keep a FIFO or a link from blocking or leading elsewhere,
		// and the type is checked again below.
		fd, err = openRetry(path, flags|syscall.O_NOFOLLOW)
	}
	if err != nil {
		return -1, st, fmt.Errorf("%s: %w", path, err)
	}
	var again syscall.Stat_t
	if err := syscall.Fstat(fd, &again); err != nil {
		syscall.Close(fd)
		return -1, st, fmt.Errorf("%s: %w", path, err)
	}
	if again.Dev != st.Dev || again.Ino != st.Ino {
		syscall.Close(fd)
		return -1, st, fmt.Errorf("%s: replaced while opened", path)
	}
	if err := checkStat(&again, owner, typ, wrongType); err != nil {
		syscall.Close(fd)
		return -1, st, fmt.Errorf("%s: %w", path, err)
	}
	return fd, again, nil
}

// ReadUserFileIn reads, as ReadUserFile, the regular file rel inside the
// directory root, resolving every symbolic link on the way as if root were
// "/" (openat2 RESOLVE_IN_ROOT): a container's root, whose links may be
// absolute and must not lead to the host's files. On kernels without
// openat2 (before 5.6) links are not followed at all.
func ReadUserFileIn(root, rel string, owner int, max int) ([]byte, error) {
	path := root + "/" + rel
	rfd, err := openRetry(root, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	defer syscall.Close(rfd)
	var pfd int
	for {
		pfd, err = unix.Openat2(rfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	if err == unix.ENOSYS {
		return ReadUserFile(path, owner, max)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fd, st, err := reopen(pfd, path, owner, syscall.S_IFREG, ErrNotRegular)
	syscall.Close(pfd)
	if err != nil {
		return nil, err
	}
	f := &UserFile{fd: fd, Size: st.Size}
	defer f.Close()
	return f.readAll(path, max)
}

func checkStat(st *syscall.Stat_t, owner int, typ uint32, wrongType error) error {
	if t := st.Mode & syscall.S_IFMT; t == syscall.S_IFLNK {
		return ErrSymlink // O_PATH|O_NOFOLLOW opens the link itself
	} else if t != typ {
		return fmt.Errorf("%w: %s", wrongType, FileType(st.Mode))
	}
	if owner != AnyOwner && st.Uid != uint32(owner) {
		return fmt.Errorf("%w (uid %d, not %d)", ErrOtherOwner, st.Uid, owner)
	}
	return nil
}

// FileType names the type of a stat mode: "a FIFO", "a socket" ...
func FileType(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "a regular file"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFLNK:
		return "a symbolic link"
	}
	return "of unknown type"
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}
