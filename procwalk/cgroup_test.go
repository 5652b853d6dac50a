//go:build linux

package procwalk

import (
	"errors"
	"slices"
	"testing"
)

func TestParseCgroup(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []CgroupLine
	}{
		{"v2", "0::/user.slice/user-1000.slice/session-2.scope\n", []CgroupLine{{0, "", "/user.slice/user-1000.slice/session-2.scope"}}},
		{"v1 hybrid", "9:name=systemd:/\n4:memory:/process_api/b084f6\n1:cpu,cpuacct:/\n0::/\n", []CgroupLine{
			{9, "name=systemd", "/"}, {4, "memory", "/process_api/b084f6"}, {1, "cpu,cpuacct", "/"}, {0, "", "/"}}},
		{"path with colons", "0::/kubepods/pod:x/abc:def\n", []CgroupLine{{0, "", "/kubepods/pod:x/abc:def"}}},
		{"pod, systemd driver", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e_3d4c.slice/cri-containerd-0123abcd.scope\n",
			[]CgroupLine{{0, "", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e_3d4c.slice/cri-containerd-0123abcd.scope"}}},
		{"blank lines skipped", "\n0::/\n\n", []CgroupLine{{0, "", "/"}}},
		{"no newline", "0::/a", []CgroupLine{{0, "", "/a"}}},
		{"deleted cgroup", "0::/gone (deleted)\n", []CgroupLine{{0, "", "/gone (deleted)"}}},
		{"empty (no cgroups)", "", nil},
	}
	for _, tt := range tests {
		got, err := ParseCgroup([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: parseCgroup: %v", tt.name, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: parseCgroup = %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseCgroupMalformed(t *testing.T) {
	for _, in := range []string{"garbage\n", "0:/only-one-colon\n", "x::/\n", "0::/\nbad\n", "::/\n"} {
		got, err := ParseCgroup([]byte(in))
		if !errors.Is(err, ErrMalformed) || got != nil {
			t.Errorf("parseCgroup(%q) = %+v, %v; want nil and ErrMalformed", in, got, err)
		}
	}
}
