//go:build linux

package procwalk

import "testing"

func TestParseCgroup2Mount(t *testing.T) {
	b := []byte("22 1 0:20 / /proc rw - proc proc rw\n41 31 0:38 / /sys/fs/cgroup/my\\040dir rw shared:9 - cgroup2 cgroup2 rw\n")
	if got := parseCgroup2Mount(b); got != "/sys/fs/cgroup/my dir" {
		t.Errorf("got %q", got)
	}
	if got := parseCgroup2Mount([]byte("22 1 0:20 / /proc rw - proc proc rw\n")); got != "" {
		t.Errorf("no cgroup2: got %q", got)
	}
}
