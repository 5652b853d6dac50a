//go:build linux

package procwalk

import "testing"

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
