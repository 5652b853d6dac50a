//go:build linux

package procwalk

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const passwdLiteral = `root:x:0:0:root:/root:/bin/bash
# a comment line
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin

alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash
alias:x:1000:1000:same uid as alice:/home/alias:/bin/sh
+nisuser::::::
-blocked::::::
broken-no-uid:x
badnum:x:12a:1::/:/bin/sh
negative:x:-5:1::/:/bin/sh
:x:77:77:empty name:/:/bin/sh
alice:x:2000:2000:second alice:/:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin`

func TestParsePasswd(t *testing.T) {
	u := usersOf([]byte(passwdLiteral))
	names := []struct {
		uid  int
		want string
		ok   bool
	}{
		{0, "root", true},
		{1, "daemon", true},
		{1000, "alice", true}, // first line with the uid wins
		{2000, "alice", true}, // a later line still names its uid
		{65534, "nobody", true},
		{12, "12", false},
		{77, "77", false}, // empty name skipped
		{-5, "-5", false},
	}
	for _, tc := range names {
		got, ok := u.LookupName(tc.uid)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("LookupName(%d) = %q, %v; want %q, %v", tc.uid, got, ok, tc.want, tc.ok)
		}
		if got := u.Name(tc.uid); got != tc.want {
			t.Errorf("Name(%d) = %q, want %q", tc.uid, got, tc.want)
		}
	}
	uids := []struct {
		name string
		want int
		ok   bool
	}{
		{"root", 0, true},
		{"alice", 1000, true}, // first line with the name wins
		{"alias", 1000, true},
		{"nobody", 65534, true},
		{"+nisuser", 0, false},
		{"nisuser", 0, false},
		{"broken-no-uid", 0, false},
		{"badnum", 0, false},
		{"", 0, false},
	}
	for _, tc := range uids {
		got, ok := u.LookupUID(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("LookupUID(%q) = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestUsersNil(t *testing.T) {
	var u *Users
	if got := u.Name(1000); got != "1000" {
		t.Errorf("nil Users: Name(1000) = %q, want \"1000\"", got)
	}
	if _, ok := u.LookupUID("root"); ok {
		t.Error("nil Users: LookupUID(root) found a uid")
	}
	if _, ok := u.LookupName(0); ok {
		t.Error("nil Users: LookupName(0) found a name")
	}
}

func TestReadUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("bob:x:1001:1001::/home/bob:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := ReadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Name(1001); got != "bob" {
		t.Errorf("Name(1001) = %q, want bob", got)
	}
	_, err = ReadUsers(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadUsers(missing) error = %v, want one matching os.ErrNotExist", err)
	}
}

func FuzzParsePasswd(f *testing.F) {
	f.Add([]byte(passwdLiteral))
	f.Add([]byte("a:b:1\n:::\n\n#\nx:y:99999999999999999999999:0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u := usersOf(b)
		for uid, name := range u.current().names {
			if _, ok := u.LookupUID(name); !ok {
				t.Fatalf("name %q of uid %d has no uid back", name, uid)
			}
		}
	})
}

// usersOf is the Users of passwd text b, read from no file.
func usersOf(b []byte) *Users {
	u := &Users{}
	u.table.Store(parsePasswd(b))
	return u
}

// TestUsersRefresh changes the user database each way it is changed on a
// host and sees the names follow; unchanged, it is not read again.
func TestUsersRefresh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "passwd")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const bob = "bob:x:1001:1001::/home/bob:/bin/sh\n"
	write(bob)
	u, err := ReadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if u.Refresh() {
		t.Error("Refresh of an unchanged file read it again")
	}

	// useradd: a new file renamed over the old one.
	tmp := filepath.Join(dir, "passwd+")
	if err := os.WriteFile(tmp, []byte(bob+"carol:x:1002:1002::/home/carol:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if !u.Refresh() || u.Name(1002) != "carol" || u.Home(1002) != "/home/carol" {
		t.Errorf("after a rename over it: Name(1002) = %q, Home %q", u.Name(1002), u.Home(1002))
	}
	if u.Refresh() {
		t.Error("a second Refresh read the renamed file again")
	}

	// An editor writing in place, the same size: the modification time
	// moves (set here a second on, as file times move by clock ticks and
	// the test may run within one).
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	write(bob + "carla:x:1002:1002::/home/carol:/bin/sh\n")
	if err := os.Chtimes(path, fi.ModTime().Add(time.Second), fi.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !u.Refresh() || u.Name(1002) != "carla" {
		t.Errorf("after a write in place: Name(1002) = %q, want carla", u.Name(1002))
	}
	if uid, ok := u.LookupUID("carol"); ok {
		t.Errorf("carol is still known (uid %d) after the rename to carla", uid)
	}

	// The file gone (the moment of a rename, or removed): the names stay.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if u.Refresh() || u.Name(1001) != "bob" {
		t.Errorf("file gone: Name(1001) = %q, want bob kept", u.Name(1001))
	}
	write(bob)
	if !u.Refresh() || u.Name(1002) != "1002" {
		t.Errorf("file back without carla: Name(1002) = %q", u.Name(1002))
	}

	// Names from no file (a recording's) are never re-read; nil neither.
	if NewUsers(map[int]string{1: "x"}).Refresh() || (*Users)(nil).Refresh() {
		t.Error("Refresh without a file reported a read")
	}
}

// Lookups run while another goroutine refreshes (top's rows while its
// gather goroutine groups): each sees one table whole. Meant for -race.
func TestUsersRefreshWhileLooking(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "passwd")
	lines := []string{"bob:x:1001:1001::/home/bob:/bin/sh\n", "rob:x:1001:1001::/home/rob:/bin/sh\n"}
	if err := os.WriteFile(path, []byte(lines[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := ReadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		defer close(bad)
		for {
			select {
			case <-done:
				return
			default:
			}
			// Never a table half made or none: 1001 is always named.
			if name, home := u.Name(1001), u.Home(1001); (name != "bob" && name != "rob") || (home != "/home/bob" && home != "/home/rob") {
				bad <- name + " " + home
				return
			}
		}
	}()
	for i := range 50 {
		tmp := filepath.Join(dir, "passwd+")
		if err := os.WriteFile(tmp, []byte(lines[(i+1)%2]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		if !u.Refresh() {
			t.Fatalf("rename %d not seen", i+1)
		}
	}
	close(done)
	if b, ok := <-bad; ok {
		t.Errorf("a lookup saw %q", b)
	}
	if got := u.Name(1001); got != "bob" { // 50 renames: back to the first
		t.Errorf("Name(1001) = %q after 50 renames, want bob", got)
	}
}
