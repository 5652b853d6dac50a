//go:build linux

package procwalk

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// A process's memory cgroup is found in the hierarchy that holds the
// memory controller: v1 on a hybrid host, v2 on a unified one, relative to
// what the mount shows of the tree.
func TestParseMemoryCgroup(t *testing.T) {
	hybrid := "35 26 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
		"36 26 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n" +
		"37 26 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	unified := "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	tests := []struct {
		name, cgroup, mountinfo string
		want                    MemoryCgroup
		ok                      bool
	}{
		{"v1 hybrid", "4:memory:/process_api/1dc8\n1:cpu:/\n0::/\n", hybrid, MemoryCgroup{Dir: "/sys/fs/cgroup/memory/process_api/1dc8"}, true},
		{"v1 at the root", "4:memory:/\n0::/\n", hybrid, MemoryCgroup{Dir: "/sys/fs/cgroup/memory"}, true},
		{"v2", "0::/system.slice/telegraf.service\n", unified, MemoryCgroup{Dir: "/sys/fs/cgroup/system.slice/telegraf.service", V2: true}, true},
		{"v2 in a cgroup namespace", "0::/\n", "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", MemoryCgroup{Dir: "/sys/fs/cgroup", V2: true}, true},
		{"v2 under a bind-mounted subtree", "0::/kubepods/pod1/c1\n", "30 25 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", MemoryCgroup{Dir: "/sys/fs/cgroup/c1", V2: true}, true},
		{"outside the mounted subtree", "0::/other\n", "30 25 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", MemoryCgroup{}, false},
		{"a sibling with the same prefix", "0::/kubepods/pod10\n", "30 25 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", MemoryCgroup{}, false},
		{"no cgroupfs mounted", "0::/\n", "22 1 0:21 / /proc rw - proc proc rw\n", MemoryCgroup{}, false},
		{"malformed cgroup file", "garbage\n", unified, MemoryCgroup{}, false},
	}
	for _, tt := range tests {
		got, ok := parseMemoryCgroup([]byte(tt.cgroup), []byte(tt.mountinfo))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// A procwalk killed by SIGKILL leaves its empty cgroup (a script worker's,
// a guarded command's); the next one of the same pid namespace removes
// those whose pid is gone, and nothing else: another namespace's pids are
// not ours to judge.
func TestOwnCgroupRemovesStale(t *testing.T) {
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
	if err := os.MkdirAll(filepath.Join(proc, "self", "ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pid:[7]", filepath.Join(proc, "self", "ns", "pid")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(proc, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, ok := FS{root: proc}.OwnCgroup(dir, "procwalk-worker-")
	if want := filepath.Join(dir, "procwalk-worker-7-"+strconv.Itoa(os.Getpid())); !ok || got != want {
		t.Errorf("OwnCgroup = %q, %v; want %q", got, ok, want)
	}
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
