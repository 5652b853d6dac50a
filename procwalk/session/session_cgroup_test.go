//go:build linux

package session

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

const (
	fixturePod1 = "6b1e0f8e-3a5c-4f1d-9a7b-2c3d4e5f6a7b"
	fixturePod2 = "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
	fixturePod3 = "7c8d9e0f-1a2b-3c4d-5e6f-7a8b9c0d1e2f"
)

func TestPlaceCgroup(t *testing.T) {
	id := strings.Repeat("ab", 32)
	tests := []struct {
		path string
		want cgroupPlace
	}{
		{"/kubepods/burstable/pod" + fixturePod1 + "/" + id,
			cgroupPlace{dir: "/kubepods/burstable/pod" + fixturePod1, name: "pod/" + fixturePod1, podUID: fixturePod1, containerID: id, qos: "burstable"}},
		{"/kubepods/pod" + fixturePod1 + "/" + id,
			cgroupPlace{dir: "/kubepods/pod" + fixturePod1, name: "pod/" + fixturePod1, podUID: fixturePod1, containerID: id, qos: "guaranteed"}},
		{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/cri-containerd-" + id + ".scope",
			cgroupPlace{dir: "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice",
				name: "pod/" + fixturePod2, podUID: fixturePod2, containerID: id, qos: "besteffort"}},
		// containerd's systemd form puts the container after ':' in one element.
		{"/system.slice/containerd.service/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice:cri-containerd:" + id,
			cgroupPlace{dir: "/system.slice/containerd.service/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice",
				name: "pod/" + fixturePod2, podUID: fixturePod2, containerID: id, qos: "burstable"}},
		// Static pods have a 32-hex uid.
		{"/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" + id,
			cgroupPlace{dir: "/kubepods/burstable/pod0123456789abcdef0123456789abcdef", name: "pod/0123456789abcdef0123456789abcdef",
				podUID: "0123456789abcdef0123456789abcdef", containerID: id, qos: "burstable"}},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/tmux-spawn-1.scope",
			cgroupPlace{dir: "/user.slice/user-1000.slice/user@1000.service/app.slice/tmux-spawn-1.scope", name: "tmux-spawn-1.scope", unit: "tmux-spawn-1.scope", slice: "app.slice"}},
		{"/system.slice/nginx.service", cgroupPlace{dir: "/system.slice/nginx.service", name: "nginx.service", unit: "nginx.service", slice: "system.slice"}},
		// A cgroup below a unit belongs to the unit.
		{"/system.slice/nginx.service/workers", cgroupPlace{dir: "/system.slice/nginx.service", name: "nginx.service", unit: "nginx.service", slice: "system.slice"}},
		{"/system.slice/docker-" + id + ".scope", cgroupPlace{dir: "/system.slice/docker-" + id + ".scope", name: "docker-" + id + ".scope", unit: "docker-" + id + ".scope", slice: "system.slice", containerID: id}},
		{"/docker/" + id, cgroupPlace{dir: "/docker/" + id, name: "/docker/" + id, containerID: id}},
		{"/batch/job42", cgroupPlace{dir: "/batch/job42", name: "/batch/job42"}},
		{"/", cgroupPlace{dir: "/", name: "/"}},
		{"", cgroupPlace{dir: "/", name: "/"}},
		// procwalk's own cgroups are no sessions: their processes count in
		// the cgroup around them.
		{"/system.slice/telegraf.service/procwalk-worker-4026531836-1234", cgroupPlace{dir: "/system.slice/telegraf.service", name: "telegraf.service", unit: "telegraf.service", slice: "system.slice"}},
		{"/procwalk-test-freeze-77", cgroupPlace{dir: "/", name: "/"}},
		{"/batch/procwalk-test-77/sub", cgroupPlace{dir: "/batch", name: "/batch"}},
		{"/system.slice/procwalk-telegraf.service", cgroupPlace{dir: "/system.slice/procwalk-telegraf.service", name: "procwalk-telegraf.service", unit: "procwalk-telegraf.service", slice: "system.slice"}},
		// "pod" in a name without a uid after it is no pod.
		{"/podcast.service", cgroupPlace{dir: "/podcast.service", name: "podcast.service", unit: "podcast.service"}},
	}
	for _, tt := range tests {
		if got := placeCgroup(tt.path); got != tt.want {
			t.Errorf("placeCgroup(%q)\n got %+v\nwant %+v", tt.path, got, tt.want)
		}
	}
}

// Two containers of one pod make one session, in every path form.
func TestGroupCgroupPodContainersMerge(t *testing.T) {
	a, b := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	forms := map[string][2]string{
		"cgroupfs driver": {"/kubepods/burstable/pod" + fixturePod2 + "/" + a, "/kubepods/burstable/pod" + fixturePod2 + "/" + b},
		"systemd driver": {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/cri-containerd-" + a + ".scope",
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/cri-containerd-" + b + ".scope"},
		"containerd systemd form": {"/system.slice/containerd.service/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice:cri-containerd:" + a,
			"/system.slice/containerd.service/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice:cri-containerd:" + b},
	}
	for form, paths := range forms {
		s := synthetic(time.Unix(1700000000, 0), [6]int{10, 1, 10}, [6]int{20, 1, 20})
		s.Fields |= procwalk.FieldCgroup
		for i, path := range paths {
			s.Procs[i].Cgroups = []procwalk.CgroupLine{{HierarchyID: 0, Path: path}}
			s.Procs[i].Read |= procwalk.FieldCgroup
		}
		fs, err := procwalk.NewFS(sessionFixture)
		if err != nil {
			t.Fatal(err)
		}
		sessions, _, err := Group(fs, s, Config{Kinds: []string{KindCgroup}, CgroupRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(sessions) != 1 || sessions[0].Name != "pod/"+fixturePod2 || !slices.Equal(memberPIDs(&sessions[0]), []int{10, 20}) ||
			sessions[0].Attrs[AttrContainerID] != a+","+b {
			t.Errorf("%s: sessions %+v, want one pod/%s holding 10 and 20, containers %s,%s", form, sessions, fixturePod2, a, b)
		}
	}
}

// A script worker in procwalk's own cgroup below /batch/job42 counts in
// /batch/job42, on v2 and on a v1 hybrid (memory line only), and a test's own
// cgroup at the top counts in "/": no session is named after either. (Below
// a systemd unit, the unit names the session anyway.)
func TestGroupCgroupOwnCgroupsFold(t *testing.T) {
	const job, worker = "/batch/job42", "/batch/job42/procwalk-worker-4026531836-10"
	for form, lines := range map[string][3][]procwalk.CgroupLine{
		"v2": {{{Path: job}}, {{Path: worker}}, {{Path: "/procwalk-test-77"}}},
		"v1 memory": {
			{{HierarchyID: 4, Controllers: "memory", Path: job}, {Path: "/"}},
			{{HierarchyID: 4, Controllers: "memory", Path: worker}, {Path: "/"}},
			{{HierarchyID: 4, Controllers: "memory", Path: "/procwalk-test-77"}, {Path: "/"}},
		},
	} {
		s := synthetic(time.Unix(1700000000, 0), [6]int{10, 1, 10}, [6]int{20, 10, 10}, [6]int{30, 1, 30})
		s.Fields |= procwalk.FieldCgroup
		for i := range lines {
			s.Procs[i].Cgroups = lines[i]
			s.Procs[i].Read |= procwalk.FieldCgroup
		}
		fs, err := procwalk.NewFS(sessionFixture)
		if err != nil {
			t.Fatal(err)
		}
		sessions, _, err := Group(fs, s, Config{Kinds: []string{KindCgroup}, CgroupRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ss := range sessions {
			got = append(got, fmt.Sprintf("%s %v %s", ss.Name, memberPIDs(&ss), ss.Attrs[AttrCgroup]))
		}
		want := []string{"/ [30] /", "/batch/job42 [10 20] /batch/job42"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sessions %q, want %q", form, got, want)
		}
	}
}

func TestMembershipLine(t *testing.T) {
	tests := []struct {
		name  string
		lines []procwalk.CgroupLine
		want  string
	}{
		{"v2", []procwalk.CgroupLine{{HierarchyID: 0, Controllers: "", Path: "/a.service"}}, "/a.service"},
		{"hybrid prefers systemd", []procwalk.CgroupLine{{HierarchyID: 4, Controllers: "memory", Path: "/m"}, {HierarchyID: 9, Controllers: "name=systemd", Path: "/s.service"}, {HierarchyID: 0, Controllers: "", Path: "/s.service"}}, "/s.service"},
		{"systemd at the root: memory", []procwalk.CgroupLine{{HierarchyID: 9, Controllers: "name=systemd", Path: "/"}, {HierarchyID: 4, Controllers: "memory", Path: "/process_api/x"}, {HierarchyID: 0, Controllers: "", Path: "/"}}, "/process_api/x"},
		{"only cpu placed", []procwalk.CgroupLine{{HierarchyID: 9, Controllers: "name=systemd", Path: "/"}, {HierarchyID: 2, Controllers: "cpu,cpuacct", Path: "/c"}, {HierarchyID: 0, Controllers: "", Path: "/"}}, "/c"},
		{"all at the root", []procwalk.CgroupLine{{HierarchyID: 9, Controllers: "name=systemd", Path: "/"}, {HierarchyID: 0, Controllers: "", Path: "/"}}, "/"},
	}
	for _, tt := range tests {
		got, ok := membershipLine(tt.lines)
		if !ok || got.Path != tt.want {
			t.Errorf("%s: %+v, want path %q", tt.name, got, tt.want)
		}
	}
	if _, ok := membershipLine(nil); ok {
		t.Error("no lines placed a process")
	}
}

func TestParseCgroupValue(t *testing.T) {
	tests := []struct {
		in   string
		want cgroupValue
	}{
		{"1073741824\n", cgroupValue{v: 1 << 30, ok: true}},
		{"max\n", cgroupValue{v: ^uint64(0), ok: true}},
		{"-1\n", cgroupValue{v: ^uint64(0), ok: true}},
		{"max 100000\n", cgroupValue{v: ^uint64(0), v2: 100000, ok: true}},
		{"50000 100000\n", cgroupValue{v: 50000, v2: 100000, ok: true}},
		{"", cgroupValue{}},
		{"12k\n", cgroupValue{}},
		{"1 2 3\n", cgroupValue{}},
	}
	for _, tt := range tests {
		if got := parseCgroupValue([]byte(tt.in)); got != tt.want {
			t.Errorf("parseCgroupValue(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestGroupCgroupV1(t *testing.T) {
	sessions, notes, snap := groupFixture(t, sessionFixture, Config{Kinds: []string{KindCgroup}, CgroupRoot: "testdata/sessions/cgroupfs-v1"})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	const gib = 1 << 30
	tests := []struct {
		ref     string
		members []int
		attrs   map[string]string
		usage   *CgroupUsage
	}{
		{"cgroup:pod/" + fixturePod1, []int{300, 301, 302}, map[string]string{
			AttrPodUID: fixturePod1, AttrQoS: "burstable", AttrPod: "web-7d9f8", AttrNamespace: "shop",
			AttrContainerID: strings.Repeat("a1", 32) + "," + strings.Repeat("b2", 32), AttrCgroupVer: "1",
			AttrCgroup: "/kubepods/burstable/pod" + fixturePod1,
		}, &CgroupUsage{Version: 1, MemoryUsageBytes: 483183820, HaveMemoryUsage: true, MemoryLimitBytes: 512 << 20,
			MemoryLimitPath: "/kubepods/burstable/pod" + fixturePod1, MemoryPercent: 483183820.0 / (512 << 20) * 100,
			CPUQuotaCores: 0.5, CPUQuotaPath: "/kubepods/burstable/pod" + fixturePod1, Danger: true}},
		{"cgroup:pod/" + fixturePod2, []int{310}, map[string]string{AttrQoS: "besteffort", AttrContainerID: strings.Repeat("c3", 32)},
			&CgroupUsage{Version: 1, MemoryUsageBytes: 100 << 20, HaveMemoryUsage: true}},
		// The unit has no limit of its own; its slice's applies.
		{"cgroup:ssh.service", []int{200}, map[string]string{AttrUnit: "ssh.service", AttrSlice: "system.slice"},
			&CgroupUsage{Version: 1, MemoryUsageBytes: 10 << 20, HaveMemoryUsage: true, MemoryLimitBytes: 2 * gib,
				MemoryLimitPath: "/system.slice", MemoryPercent: float64(10<<20) / (2 * gib) * 100}},
		{"cgroup:/batch/job42", []int{340, 341}, map[string]string{AttrCgroup: "/batch/job42"},
			&CgroupUsage{Version: 1, MemoryUsageBytes: 100 << 20, HaveMemoryUsage: true, MemoryLimitBytes: gib,
				MemoryLimitPath: "/batch/job42", MemoryPercent: float64(100<<20) / gib * 100, CPUQuotaCores: 2, CPUQuotaPath: "/batch/job42"}},
		// Memory of the scope is accounted in its user slice, which is not
		// the session's own: no usage to report.
		{"cgroup:session-2.scope", []int{100, 101, 102, 103, 104, 105, 106, 110, 111, 120, 121, 130, 131}, map[string]string{AttrUnit: "session-2.scope"}, nil},
		{"cgroup:docker-" + strings.Repeat("d4", 32) + ".scope", []int{330}, map[string]string{AttrContainerID: strings.Repeat("d4", 32)}, nil},
		// The same user unit for two users: named by directory.
		{"cgroup:/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", []int{320}, map[string]string{AttrUnit: "foo.service"}, nil},
		{"cgroup:/user.slice/user-1001.slice/user@1001.service/app.slice/foo.service", []int{321}, map[string]string{AttrUnit: "foo.service"}, nil},
	}
	for _, tt := range tests {
		s := find(t, sessions, tt.ref)
		if got := memberPIDs(s); !slices.Equal(got, tt.members) {
			t.Errorf("%s members = %v, want %v", tt.ref, got, tt.members)
		}
		for k, v := range tt.attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s attr %s = %q, want %q", tt.ref, k, s.Attrs[k], v)
			}
		}
		switch {
		case tt.usage == nil && s.Totals.Cgroup != nil:
			t.Errorf("%s usage = %+v, want none", tt.ref, *s.Totals.Cgroup)
		case tt.usage != nil && (s.Totals.Cgroup == nil || *s.Totals.Cgroup != *tt.usage):
			t.Errorf("%s usage\n got %+v\nwant %+v", tt.ref, s.Totals.Cgroup, *tt.usage)
		}
		if want := sumOver(t, snap, tt.members); s.Totals.Totals != want {
			t.Errorf("%s totals = %+v, want %+v", tt.ref, s.Totals.Totals, want)
		}
	}
	if _, err := Find(sessions, "cgroup:foo.service"); err == nil {
		t.Error("an ambiguous unit name was kept")
	}
	if _, err := Find(sessions, "cgroup:/"); err == nil {
		t.Error("kernel threads made a session of the root cgroup")
	}
}

func TestGroupCgroupV2(t *testing.T) {
	sessions, _, _ := groupFixture(t, "testdata/sessions/proc-v2", Config{Kinds: []string{KindCgroup}, CgroupRoot: "testdata/sessions/cgroupfs-v2"})
	pg := find(t, sessions, "cgroup:postgresql.service")
	if !slices.Equal(memberPIDs(pg), []int{400, 401}) || pg.Attrs[AttrCgroupVer] != "2" {
		t.Errorf("postgresql.service = %v %v", memberPIDs(pg), pg.Attrs)
	}
	// 858993460 of 1 GiB is 80.0000004 %: at the default threshold.
	want := CgroupUsage{Version: 2, MemoryUsageBytes: 858993460, HaveMemoryUsage: true, MemoryLimitBytes: 1 << 30,
		MemoryLimitPath: "/system.slice/postgresql.service", MemoryPercent: 858993460.0 / (1 << 30) * 100, Danger: true}
	if pg.Totals.Cgroup == nil || *pg.Totals.Cgroup != want {
		t.Errorf("postgresql.service usage\n got %+v\nwant %+v", pg.Totals.Cgroup, want)
	}
	pod := find(t, sessions, "cgroup:pod/"+fixturePod3)
	podDir := "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(fixturePod3, "-", "_") + ".slice"
	want = CgroupUsage{Version: 2, MemoryUsageBytes: 200 << 20, HaveMemoryUsage: true, MemoryLimitBytes: 4 << 30,
		MemoryLimitPath: "/kubepods.slice", MemoryPercent: float64(200<<20) / (4 << 30) * 100, CPUQuotaCores: 1.5, CPUQuotaPath: podDir}
	if pod.Totals.Cgroup == nil || *pod.Totals.Cgroup != want {
		t.Errorf("pod usage\n got %+v\nwant %+v", pod.Totals.Cgroup, want)
	}
	// A higher threshold clears the danger.
	sessions, _, _ = groupFixture(t, "testdata/sessions/proc-v2", Config{Kinds: []string{KindCgroup}, CgroupRoot: "testdata/sessions/cgroupfs-v2", DangerPercent: 90})
	if u := find(t, sessions, "cgroup:postgresql.service").Totals.Cgroup; u == nil || u.Danger {
		t.Errorf("danger at 90%%: %+v", u)
	}
}

func TestGroupCgroupWithoutCgroupfs(t *testing.T) {
	sessions, notes, _ := groupFixture(t, "testdata/sessions/proc-v2", Config{Kinds: []string{KindCgroup}, CgroupRoot: t.TempDir()})
	if len(namesOf(sessions, KindCgroup)) == 0 {
		t.Error("no cgroup sessions without a cgroupfs")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "no cgroupfs") {
		t.Errorf("notes = %q", notes)
	}
	for _, s := range sessions {
		if s.Totals.Cgroup != nil {
			t.Errorf("%s has usage without a cgroupfs", s.Ref())
		}
	}
}

// With rates, a cgroup session says how many cores its members use against
// its quota, and the danger threshold applies to that too.
func TestGroupCgroupCoresAgainstQuota(t *testing.T) {
	ref := "cgroup:pod/" + fixturePod1 // memory at 90 % of its limit, quota 0.5 CPU
	tests := []struct {
		cpuPercent    [3]float64 // of 300, 301, 302
		danger        float64
		cores, quotaP float64
		wantDanger    bool
	}{
		{[3]float64{0, 30, 18}, 95, 0.48, 96, true},    // CPU over 95 % of the quota
		{[3]float64{0, 10, 10}, 95, 0.20, 40, false},   // neither memory (90 %) nor CPU
		{[3]float64{0, 10, 10}, 0, 0.20, 40, true},     // memory over the default 80 %
		{[3]float64{50, 50, 25}, 100, 1.25, 250, true}, // over the quota itself
	}
	for _, tt := range tests {
		g, s := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindCgroup}, CgroupRoot: "testdata/sessions/cgroupfs-v1", DangerPercent: tt.danger})
		for k, pid := range []int{300, 301, 302} {
			s.Process(pid).Rates = procwalk.Rates{Measured: true, IntervalSeconds: 1, CPUPercent: tt.cpuPercent[k]}
		}
		sessions, _ := g.Group(s)
		u := find(t, sessions, ref).Totals.Cgroup
		if u == nil || math.Abs(u.CPUCoresUsed-tt.cores) > 1e-9 || math.Abs(u.CPUQuotaPercent-tt.quotaP) > 1e-9 || u.Danger != tt.wantDanger {
			t.Errorf("CPU %v, danger at %v%%: usage %+v, want %.2f cores, %.0f%% of the quota, danger %v", tt.cpuPercent, tt.danger, u, tt.cores, tt.quotaP, tt.wantDanger)
		}
	}
}
