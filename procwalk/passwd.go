//go:build linux

package procwalk

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// passwd.go reads a user database in /etc/passwd format, one user a line:
// "name:password:uid:gid:gecos:home:shell". It is pure Go (no cgo, no NSS):
// users known only to LDAP or sssd are not in the file and show as numbers.

// Users maps uids to user names and back. A nil *Users knows no one: Name
// then returns the decimal uid, which is what a missing passwd file means.
//
// A long-running reader (a Grouper, at every gather) calls Refresh, which
// reads the file again when it changed. Invalidation rule: the file is
// another one, or was written, since it was read: its device, inode, size,
// modification or change time differ. useradd, vipw and passwd(1) write a
// new file and rename it over the old one (a new inode); an editor writing
// in place moves the modification and change times (the latter no one can
// set back). File times move by the kernel's clock tick, so a rewrite in
// place of the same size within the tick of the read before shows at the
// next change. Lookups may run while another goroutine refreshes: each
// sees one table whole.
type Users struct {
	path    string // "" when not read from a file (NewUsers): never re-read
	refresh sync.Mutex
	sig     fileSig // of the file the table was read from; under refresh
	table   atomic.Pointer[userTable]
}

// userTable is one reading of the database, never changed once made.
type userTable struct {
	names map[int]string
	uids  map[string]int
	homes map[int]string
}

// fileSig is what changes when a file is replaced or written.
type fileSig struct {
	dev, ino     uint64
	size         int64
	mtime, ctime syscall.Timespec
}

// ReadUsers reads the passwd file at path (usually /etc/passwd; cmd/ names
// it, never this package).
func ReadUsers(path string) (*Users, error) {
	u := &Users{path: path}
	if err := u.read(); err != nil {
		return nil, err
	}
	return u, nil
}

// read reads the file and keeps the signature of the file it read (so a
// rename over it meanwhile shows at the next Refresh). Called with
// u.refresh held or before u is shared.
func (u *Users) read() error {
	f, err := os.Open(u.path)
	if err != nil {
		return fmt.Errorf("reading user names: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("reading user names: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading user names: %w", err)
	}
	u.sig = sigOf(fi)
	u.table.Store(parsePasswd(b))
	return nil
}

// Refresh reads the file again if it changed since it was read (see
// Users), and reports whether it did. A file gone or unreadable keeps the
// names known: a rename over it is a moment without one.
func (u *Users) Refresh() bool {
	if u == nil || u.path == "" {
		return false
	}
	u.refresh.Lock()
	defer u.refresh.Unlock()
	if fi, err := os.Stat(u.path); err != nil || sigOf(fi) == u.sig {
		return false
	}
	return u.read() == nil
}

// sigOf is the signature of a file's FileInfo.
func sigOf(fi os.FileInfo) fileSig {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileSig{size: fi.Size(), mtime: syscall.NsecToTimespec(fi.ModTime().UnixNano())}
	}
	return fileSig{dev: uint64(st.Dev), ino: uint64(st.Ino), size: int64(st.Size), mtime: st.Mtim, ctime: st.Ctim} // widths differ by arch
}

// current is the table lookups read: nil for a nil *Users.
func (u *Users) current() *userTable {
	if u == nil {
		return nil
	}
	return u.table.Load()
}

// parsePasswd parses passwd lines, skipping blank lines, comments, NIS
// "+"/"-" entries and lines without a numeric uid. When two lines share a
// uid or a name the first wins, as with getpwuid(3).
func parsePasswd(b []byte) *userTable {
	u := &userTable{names: make(map[int]string), uids: make(map[string]int), homes: make(map[int]string)}
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		if len(line) == 0 || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		// name, password, uid: we need the first three fields.
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(name) == 0 {
			continue
		}
		_, rest, ok = bytes.Cut(rest, []byte{':'})
		if !ok {
			continue
		}
		uidField, rest, _ := bytes.Cut(rest, []byte{':'})
		uid, err := strconv.Atoi(string(uidField))
		if err != nil || uid < 0 {
			continue
		}
		n := string(name)
		if _, dup := u.names[uid]; !dup {
			u.names[uid] = n
			// gid, gecos, home: the home directory is the sixth field.
			if f := bytes.SplitN(rest, []byte{':'}, 4); len(f) >= 3 && len(f[2]) > 0 {
				u.homes[uid] = string(f[2])
			}
		}
		if _, dup := u.uids[n]; !dup {
			u.uids[n] = uid
		}
	}
	return u
}

// Name returns the user name of uid, or the uid in decimal when unknown.
func (u *Users) Name(uid int) string {
	if t := u.current(); t != nil {
		if n, ok := t.names[uid]; ok {
			return n
		}
	}
	return strconv.Itoa(uid)
}

// Home returns the home directory of uid, "" when unknown.
func (u *Users) Home(uid int) string {
	if t := u.current(); t != nil {
		return t.homes[uid]
	}
	return ""
}

// LookupName returns the user name of uid and whether it is known.
func (u *Users) LookupName(uid int) (string, bool) {
	t := u.current()
	if t == nil {
		return "", false
	}
	n, ok := t.names[uid]
	return n, ok
}

// LookupUID returns the uid of the user called name and whether it is known.
func (u *Users) LookupUID(name string) (int, bool) {
	t := u.current()
	if t == nil {
		return 0, false
	}
	uid, ok := t.uids[name]
	return uid, ok
}

// NewUsers returns Users naming the uids of names (a recording's user
// database); the first uid of a name wins its reverse lookup, as in
// parsePasswd.
func NewUsers(names map[int]string) *Users {
	t := &userTable{names: make(map[int]string, len(names)), uids: make(map[string]int, len(names)), homes: make(map[int]string)}
	uids := make([]int, 0, len(names))
	for uid := range names {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		t.names[uid] = names[uid]
		if _, dup := t.uids[names[uid]]; !dup {
			t.uids[names[uid]] = uid
		}
	}
	u := &Users{}
	u.table.Store(t)
	return u
}

// Names returns every uid's name, a copy.
func (u *Users) Names() map[int]string {
	t := u.current()
	if t == nil {
		return nil
	}
	return maps.Clone(t.names)
}
