//go:build linux

package procwalk

import (
	"path/filepath"
	"testing"
)

func TestIsOwnCgroup(t *testing.T) {
	for name, want := range map[string]bool{
		"procwalk-worker-4026531836-1234": true,
		"procwalk-guard-4026531836-1":     true,
		"procwalk-test-77":                true,
		"procwalk-test-freeze-77":         true,
		"procwalk-test-ns-77":             true,
		"procwalk-telegraf.service":       false, // a user's unit
		"procwalk-worker":                 false, // no number
		"procwalk-77":                     false, // no word
		"procwalk-worker-12-x":            false, // a word after the numbers
		"procwalk-worker--12":             false,
		"procwalk-Worker-12":              false,
		"procwalk-worker-12-":             false,
		"xprocwalk-worker-12":             false,
		"":                                false,
	} {
		if got := IsOwnCgroup(name); got != want {
			t.Errorf("IsOwnCgroup(%q) = %v, want %v", name, got, want)
		}
	}
	// What FS.OwnCgroup makes for procwalk's own prefixes is its own.
	fs, err := NewFS(DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{OwnCgroupPrefix + "worker-", OwnCgroupPrefix + "guard-"} {
		dir, ok := fs.OwnCgroup(t.TempDir(), prefix)
		if name := filepath.Base(dir); !ok || !IsOwnCgroup(name) {
			t.Errorf("OwnCgroup(%q) = %q, %v: want a name IsOwnCgroup knows", prefix, name, ok)
		}
	}
}

func TestOwnCgroupParent(t *testing.T) {
	for path, want := range map[string]string{
		"/system.slice/telegraf.service/procwalk-worker-4026531836-1234":     "/system.slice/telegraf.service",
		"/system.slice/telegraf.service/procwalk-worker-4026531836-1234/sub": "/system.slice/telegraf.service",
		"/procwalk-test-77":                         "/",
		"/procwalk-test-77/procwalk-worker-1-2":     "/",
		"/system.slice/procwalk-telegraf.service":   "/system.slice/procwalk-telegraf.service",
		"/user.slice/session-3.scope":               "/user.slice/session-3.scope",
		"/":                                         "/",
		"/a/procwalk-test-1/b/procwalk-guard-2-3/c": "/a",
	} {
		if got := OwnCgroupParent(path); got != want {
			t.Errorf("OwnCgroupParent(%q) = %q, want %q", path, got, want)
		}
	}
}
