//go:build linux

package procwalk

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// passwd.go reads a user database in /etc/passwd format, one user a line:
// "name:password:uid:gid:gecos:home:shell". It is pure Go (no cgo, no NSS):
// users known only to LDAP or sssd are not in the file and show as numbers.

// Users maps uids to user names and back. A nil *Users knows no one: Name
// then returns the decimal uid, which is what a missing passwd file means.
type Users struct {
	names map[int]string
	uids  map[string]int
	homes map[int]string
}

// ReadUsers reads the passwd file at path (usually /etc/passwd; cmd/ names
// it, never this package).
func ReadUsers(path string) (*Users, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading user names: %w", err)
	}
	return parsePasswd(b), nil
}

// parsePasswd parses passwd lines, skipping blank lines, comments, NIS
// "+"/"-" entries and lines without a numeric uid. When two lines share a
// uid or a name the first wins, as with getpwuid(3).
func parsePasswd(b []byte) *Users {
	u := &Users{names: make(map[int]string), uids: make(map[string]int), homes: make(map[int]string)}
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
	if u != nil {
		if n, ok := u.names[uid]; ok {
			return n
		}
	}
	return strconv.Itoa(uid)
}

// Home returns the home directory of uid, "" when unknown.
func (u *Users) Home(uid int) string {
	if u == nil {
		return ""
	}
	return u.homes[uid]
}

// LookupName returns the user name of uid and whether it is known.
func (u *Users) LookupName(uid int) (string, bool) {
	if u == nil {
		return "", false
	}
	n, ok := u.names[uid]
	return n, ok
}

// LookupUID returns the uid of the user called name and whether it is known.
func (u *Users) LookupUID(name string) (int, bool) {
	if u == nil {
		return 0, false
	}
	uid, ok := u.uids[name]
	return uid, ok
}

// NewUsers returns Users naming the uids of names (a recording's user
// database); the first uid of a name wins its reverse lookup, as in
// parsePasswd.
func NewUsers(names map[int]string) *Users {
	u := &Users{names: make(map[int]string, len(names)), uids: make(map[string]int, len(names)), homes: make(map[int]string)}
	uids := make([]int, 0, len(names))
	for uid := range names {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		u.names[uid] = names[uid]
		if _, dup := u.uids[names[uid]]; !dup {
			u.uids[names[uid]] = uid
		}
	}
	return u
}

// Names returns every uid's name, a copy.
func (u *Users) Names() map[int]string {
	if u == nil {
		return nil
	}
	return maps.Clone(u.names)
}
