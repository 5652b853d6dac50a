//go:build linux

package scripting

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A procwalk killed by SIGKILL leaves its empty worker cgroup; the next
// one of the same pid namespace removes those whose pid is gone, and
// nothing else: another namespace's pids are not ours to judge.
func TestRemoveStaleCgroups(t *testing.T) {
	dir, proc := t.TempDir(), t.TempDir()
	for _, d := range []string{
		"procwalk-worker-7-41", // pid 41 of our namespace (7) gone: removed
		"procwalk-worker-7-42", // pid 42 running: kept
		"procwalk-worker-7-43", // gone but not empty (a process in it): kept
		"procwalk-worker-8-41", // another namespace's pid 41: kept
		"procwalk-worker-7-x",  // not a pid: kept
		"procwalk-worker-7--1", // not a pid: kept
		"other-41",             // not a worker's: kept
		filepath.Join("procwalk-worker-7-43", "child"),
	} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(proc, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	removeStaleCgroups(dir, "procwalk-worker-7-", proc)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"other-41", "procwalk-worker-7--1", "procwalk-worker-7-42", "procwalk-worker-7-43", "procwalk-worker-7-x", "procwalk-worker-8-41"}
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
