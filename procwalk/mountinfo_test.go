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

// A cgroup line's directory: the unified line under the cgroup2 mount, a
// v1 line under the mount holding its controllers, less a mount's root.
func TestParseCgroupDir(t *testing.T) {
	mountinfo := []byte(`31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 23 0:32 /pod/a /mnt/my\040memory rw,relatime - cgroup cgroup rw,memory
`)
	for _, tt := range []struct {
		line CgroupLine
		want string
	}{
		{CgroupLine{HierarchyID: 0, Path: "/a/b"}, "/sys/fs/cgroup/unified/a/b"},
		{CgroupLine{HierarchyID: 4, Controllers: "memory", Path: "/user.slice"}, "/sys/fs/cgroup/memory/user.slice"},
		{CgroupLine{HierarchyID: 9, Controllers: "name=systemd", Path: "/x.service"}, "/sys/fs/cgroup/systemd/x.service"},
		{CgroupLine{HierarchyID: 2, Controllers: "cpu,cpuacct", Path: "/"}, "/sys/fs/cgroup/cpu,cpuacct"},
		{CgroupLine{HierarchyID: 7, Controllers: "pids", Path: "/"}, ""},
	} {
		got, ok := parseCgroupDir(mountinfo, tt.line)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%+v: %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
	// Only the mount that shows the cgroup: a bind of /pod/a holds /pod/a/x.
	bound := []byte("50 23 0:32 /pod/a /mnt/my\\040memory rw,relatime - cgroup cgroup rw,memory\n")
	if got, _ := parseCgroupDir(bound, CgroupLine{HierarchyID: 4, Controllers: "memory", Path: "/pod/a/x"}); got != "/mnt/my memory/x" {
		t.Errorf("bind mount: %q", got)
	}
	if _, ok := parseCgroupDir(bound, CgroupLine{HierarchyID: 4, Controllers: "memory", Path: "/pod/ab"}); ok {
		t.Error("a path beside the mount's root was placed under it")
	}
}

func TestEscapeMountPoint(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/sys/fs/cgroup", "/sys/fs/cgroup"},
		{"/mnt/a b", `/mnt/a\040b`},
		{"/a\tb\nc\\d", `/a\011b\012c\134d`},
		{"", ""},
	} {
		if got := escapeMountPoint(c.in); got != c.want {
			t.Errorf("escapeMountPoint(%q) = %q, want %q", c.in, got, c.want)
		}
		if back := unescapeOctal(escapeMountPoint(c.in)); back != c.in {
			t.Errorf("unescapeOctal(escapeMountPoint(%q)) = %q", c.in, back)
		}
	}
}
