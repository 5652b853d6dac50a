//go:build linux

package session

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// walkedLines keeps the lines of the hierarchies the walk reads.
func walkedLines(lines []procwalk.CgroupLine) []procwalk.CgroupLine {
	var out []procwalk.CgroupLine
	for _, l := range lines {
		if isWalkedHierarchy(l) {
			out = append(out, l)
		}
	}
	return out
}

// compareWalk groups root's processes twice, from Scan (the walk) and from
// a snapshot reading every process's cgroup file, and fails unless the
// sessions are equal and every process the walk placed has its file's
// lines of the walked hierarchies. It returns the pids the walk placed:
// a process whose file was read has all its lines, more than the walk gives.
func compareWalk(t *testing.T, root string, cfg Config) []int {
	t.Helper()
	cfg.Kinds = []string{KindCgroup}
	g, walked := fixtureGrouper(t, root, cfg)
	fromWalk, walkNotes := g.Group(walked)
	perProcess, err := g.fs.Snapshot(procwalk.FieldCgroup)
	if err != nil {
		t.Fatal(err)
	}
	fromFiles, fileNotes := g.Group(perProcess)
	if !reflect.DeepEqual(walkNotes, fileNotes) {
		t.Errorf("notes from the walk %q, from the files %q", walkNotes, fileNotes)
	}
	if len(fromWalk) != len(fromFiles) {
		t.Errorf("%d sessions from the walk, %d from the files", len(fromWalk), len(fromFiles))
	}
	for i := range min(len(fromWalk), len(fromFiles)) {
		w, f := fromWalk[i], fromFiles[i]
		if w.Name != f.Name || !slices.Equal(memberPIDs(&w), memberPIDs(&f)) || !reflect.DeepEqual(w.Attrs, f.Attrs) ||
			!reflect.DeepEqual(w.Totals.Cgroup, f.Totals.Cgroup) || w.Partial != f.Partial {
			t.Errorf("session %d from the walk: %s %v %v %+v\nfrom the files: %s %v %v %+v", i,
				w.Name, memberPIDs(&w), w.Attrs, w.Totals.Cgroup, f.Name, memberPIDs(&f), f.Attrs, f.Totals.Cgroup)
		}
	}
	if walked.Visibility.Partial() != perProcess.Visibility.Partial() {
		t.Errorf("visibility from the walk %+v, from the files %+v", walked.Visibility, perProcess.Visibility)
	}
	var placed []int
	for i := range walked.Procs {
		p := &walked.Procs[i]
		file := perProcess.Process(p.ID.PID)
		if p.Read&procwalk.FieldCgroup == 0 || file == nil {
			t.Errorf("pid %d: no cgroup lines", p.ID.PID)
			continue
		}
		if !reflect.DeepEqual(walkedLines(p.Cgroups), walkedLines(file.Cgroups)) {
			t.Errorf("pid %d: walked lines %v, file's %v", p.ID.PID, walkedLines(p.Cgroups), file.Cgroups)
		}
		if len(p.Cgroups) < len(file.Cgroups) {
			placed = append(placed, p.ID.PID)
		} else if !reflect.DeepEqual(p.Cgroups, file.Cgroups) {
			t.Errorf("pid %d: lines %v, file's %v", p.ID.PID, p.Cgroups, file.Cgroups)
		}
	}
	return placed
}

// The session fixture's v1 cgroupfs lacks the memory and cpu directories of
// some units (their tests expect no usage), so those processes fall back
// to their cgroup file; the v2 one is complete.
func TestCgroupWalkEqualsCgroupFiles(t *testing.T) {
	placed := compareWalk(t, sessionFixture, Config{CgroupRoot: "testdata/sessions/cgroupfs-v1"})
	want := []int{2, 3, 100, 101, 102, 103, 104, 105, 106, 110, 111, 120, 121, 130, 131, 200, 300, 301, 302, 310, 340, 341}
	if !slices.Equal(placed, want) {
		t.Errorf("v1: the walk placed %v, want %v", placed, want)
	}
	compareWalk(t, "testdata/sessions/proc-v2", Config{CgroupRoot: "testdata/sessions/cgroupfs-v2"})
	// On v2 the walk gives the whole file, one line: ask the walk itself.
	g, _ := fixtureGrouper(t, "testdata/sessions/proc-v2", Config{Kinds: []string{KindCgroup}, CgroupRoot: "testdata/sessions/cgroupfs-v2"})
	for _, pid := range []int{1, 400, 401, 410, 420} {
		if slots := g.cgroups.slotsOf(pid); slots[0] <= 0 {
			t.Errorf("v2: the walk did not place %d: %v", pid, slots)
		}
	}
}

// cgroupTree writes a /proc and a cgroupfs (v1: name=systemd, memory,
// pids; no v2) of processes under a temporary directory: files maps a path
// to its content, "->" at its start making a symlink.
func cgroupTree(t *testing.T, files map[string]string) (proc, cgroupRoot string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err := os.Symlink(target, p)
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		content = strings.ReplaceAll(content, "$ROOT", dir)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "proc"), filepath.Join(dir, "cgroup")
}

// treeProcess adds the /proc files of a process in cgroup path (name=systemd
// and memory; pids at a cgroup the walk never reads, so that a read file
// shows one line more).
func treeProcess(files map[string]string, pid int, start int, path string) {
	d := "proc/" + strconv.Itoa(pid) + "/"
	files[d+"stat"] = fmt.Sprintf("%d (p%d) S 1 %d %d 0 -1 4194560 0 0 0 0 10 5 0 0 20 0 1 0 %d 12288000 1000 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, pid, pid, pid, start)
	files[d+"statm"] = "3000 1000 250 10 0 500 0\n"
	files[d+"cgroup"] = "3:name=systemd:" + path + "\n2:memory:" + path + "\n1:pids:/p\n"
}

// baseTree is a host of processes 10, 11 in /a.service and 20 in
// /b.service, self being 10.
func baseTree() map[string]string {
	files := map[string]string{
		"proc/stat":    "cpu  100 0 100 1000 0 0 0 0 0 0\ncpu0 100 0 100 1000 0 0 0 0 0 0\nbtime 1700000000\n",
		"proc/meminfo": "MemTotal: 1000000 kB\n",
		"proc/self":    "->10",
	}
	treeProcess(files, 10, 100, "/a.service")
	treeProcess(files, 11, 200, "/a.service")
	treeProcess(files, 20, 300, "/b.service")
	for _, h := range []string{"systemd", "memory"} {
		files["cgroup/"+h+"/cgroup.procs"] = ""
		files["cgroup/"+h+"/a.service/cgroup.procs"] = "10\n11\n"
		files["cgroup/"+h+"/b.service/cgroup.procs"] = "20\n"
	}
	return files
}

// Each case is a way the walk cannot vouch for a process: it must be read
// from its file, and grouping must not change.
func TestCgroupWalkFallsBack(t *testing.T) {
	tests := []struct {
		name   string
		change func(files map[string]string)
		placed []int
	}{
		{"every process listed", func(map[string]string) {}, []int{10, 11, 20}},
		{"a pid in no cgroup.procs", func(f map[string]string) {
			f["cgroup/memory/b.service/cgroup.procs"] = ""
		}, []int{10, 11}},
		{"a pid in two cgroups of one hierarchy (threads apart)", func(f map[string]string) {
			f["cgroup/memory/b.service/cgroup.procs"] = "11\n20\n"
		}, []int{10, 20}},
		{"an unreadable cgroup.procs", func(f map[string]string) {
			delete(f, "cgroup/systemd/a.service/cgroup.procs")
			f["cgroup/systemd/a.service/cgroup.procs/x"] = "" // a directory: reading it fails
		}, []int{20}},
		{"a hierarchy not mounted", func(f map[string]string) {
			for k := range f {
				if strings.HasPrefix(k, "cgroup/memory/") {
					delete(f, k)
				}
			}
		}, nil},
		{"a process started after the walk (a reused pid)", func(f map[string]string) {
			treeProcess(f, 11, 1<<50, "/a.service")
		}, []int{10, 20}},
		{"a cgroup file to the mount root", func(f map[string]string) {
			// Every walked line at "/", and the pids hierarchy, not walked,
			// may place the process: its file decides.
			f["cgroup/systemd/cgroup.procs"] = "20\n"
			f["cgroup/memory/cgroup.procs"] = "20\n"
			f["cgroup/systemd/b.service/cgroup.procs"] = ""
			f["cgroup/memory/b.service/cgroup.procs"] = ""
			treeProcess(f, 20, 300, "/")
		}, []int{10, 11}},
		{"at the root of every hierarchy, /proc/cgroups counting one cgroup in the others", func(f map[string]string) {
			f["cgroup/systemd/cgroup.procs"] = "20\n"
			f["cgroup/memory/cgroup.procs"] = "20\n"
			f["cgroup/systemd/b.service/cgroup.procs"] = ""
			f["cgroup/memory/b.service/cgroup.procs"] = ""
			f["proc/20/cgroup"] = "3:name=systemd:/\n2:memory:/\n1:pids:/\n"
			f["proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t2\t3\t1\npids\t1\t1\t1\n"
		}, []int{10, 11, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := baseTree()
			tt.change(files)
			proc, cg := cgroupTree(t, files)
			if got := compareWalk(t, proc, Config{CgroupRoot: cg}); !slices.Equal(got, tt.placed) {
				t.Errorf("the walk placed %v, want %v", got, tt.placed)
			}
		})
	}
}

// A v1 controller hierarchy that /proc/cgroups counts one cgroup in holds
// every process at its root: the walk places them there without reading
// its cgroup.procs (here a directory, which a read would fail on, sending
// every process to its file). Counting two cgroups, it is read again.
func TestCgroupWalkSkipsSingleCgroupHierarchies(t *testing.T) {
	for _, tt := range []struct {
		cpuCgroups string
		placed     []int
	}{
		{"1", []int{10, 11, 20}},
		{"2", nil},
	} {
		t.Run("cpu num_cgroups "+tt.cpuCgroups, func(t *testing.T) {
			files := baseTree()
			for _, pid := range []string{"10", "11", "20"} {
				f := "proc/" + pid + "/cgroup"
				files[f] = strings.Replace(files[f], "1:pids:/p\n", "4:cpu,cpuacct:/\n1:pids:/p\n", 1)
			}
			files["cgroup/cpu,cpuacct/cgroup.procs/x"] = "" // unreadable as a list
			files["proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t2\t3\t1\ncpu\t4\t" +
				tt.cpuCgroups + "\t1\ncpuacct\t4\t" + tt.cpuCgroups + "\t1\npids\t1\t2\t1\n"
			proc, cg := cgroupTree(t, files)
			if got := compareWalk(t, proc, Config{CgroupRoot: cg}); !slices.Equal(got, tt.placed) {
				t.Errorf("the walk placed %v, want %v", got, tt.placed)
			}
		})
	}
}

// A hierarchy whose top has no sub-cgroup holds every process at "/": in
// the initial cgroup namespace its cgroup.procs is not read (here it lists
// none, so a walk that read it would place nobody); in another namespace
// the top is the namespace's, and it is read.
func TestCgroupWalkSkipsTopOnlyHierarchies(t *testing.T) {
	for _, tt := range []struct {
		ns     string
		placed []int
	}{
		{initialCgroupNS, []int{10, 11, 20}},
		{"cgroup:[4026532999]", nil},
	} {
		t.Run(tt.ns, func(t *testing.T) {
			files := baseTree()
			for _, pid := range []string{"10", "11", "20"} {
				f := "proc/" + pid + "/cgroup"
				files[f] = strings.Replace(files[f], "3:name=systemd:/a.service\n", "3:name=systemd:/\n", 1)
				files[f] = strings.Replace(files[f], "3:name=systemd:/b.service\n", "3:name=systemd:/\n", 1)
			}
			delete(files, "cgroup/systemd/a.service/cgroup.procs")
			delete(files, "cgroup/systemd/b.service/cgroup.procs")
			files["proc/10/ns/cgroup"] = "->" + tt.ns
			proc, cg := cgroupTree(t, files)
			if got := compareWalk(t, proc, Config{CgroupRoot: cg}); !slices.Equal(got, tt.placed) {
				t.Errorf("the walk placed %v, want %v", got, tt.placed)
			}
		})
	}
}

// A cgroupfs mounted from a cgroup below the hierarchy's root (a container's
// view, mountinfo field 4) names cgroups from that root: /kubepods/a.service.
func TestCgroupWalkMountRoot(t *testing.T) {
	files := baseTree()
	treeProcess(files, 10, 100, "/kubepods/a.service")
	treeProcess(files, 11, 200, "/kubepods/a.service")
	treeProcess(files, 20, 300, "/kubepods/b.service")
	files["proc/10/mountinfo"] = "" +
		"30 1 0:20 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n" +
		"31 30 0:21 /kubepods $ROOT/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n" +
		"32 30 0:22 /kubepods $ROOT/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
	proc, cg := cgroupTree(t, files)
	if got := compareWalk(t, proc, Config{CgroupRoot: cg}); !slices.Equal(got, []int{10, 11, 20}) {
		t.Errorf("the walk placed %v, want 10, 11, 20", got)
	}
	// A mount of another controller where memory should be: no walk.
	files["proc/10/mountinfo"] = strings.Replace(files["proc/10/mountinfo"], "rw,memory", "rw,cpu", 1)
	proc, cg = cgroupTree(t, files)
	if got := compareWalk(t, proc, Config{CgroupRoot: cg}); len(got) != 0 {
		t.Errorf("the walk placed %v through a cpu mount where memory should be", got)
	}
}

// A v2 threaded cgroup cannot list its processes (EOPNOTSUPP): its threaded
// domain lists them, and what it lists cannot be placed.
func TestCgroupWalkThreadedDomain(t *testing.T) {
	w := cgroupWalk{
		valid:     true,
		walkTicks: 1 << 40,
		hiers:     []walkedHierarchy{{line: procwalk.CgroupLine{HierarchyID: 0}, mountRoot: "/"}},
		nodes: []cgroupNode{{path: "/", parent: -1, listed: true}, {path: "/domain", parent: 0, listed: true},
			{path: "/domain/threads", parent: 1}, {path: "/domain/threads/more", parent: 2}},
		placed: []placedPID{{10, cgroupSlots{1}}, {20, cgroupSlots{2}}},
		lines:  map[cgroupSlots][]procwalk.CgroupLine{},
	}
	w.markThreadedDomain(3)
	if !w.nodes[1].ambiguous || w.nodes[0].ambiguous {
		t.Fatalf("marked %+v, want /domain alone", w.nodes)
	}
	root, domain := procwalk.Process{ID: procwalk.ProcID{PID: 10}}, procwalk.Process{ID: procwalk.ProcID{PID: 20}}
	if !w.fill(&root) || root.Cgroups[0].Path != "/" {
		t.Errorf("pid 10 at the root: %v", root.Cgroups)
	}
	if w.fill(&domain) || domain.Read&procwalk.FieldCgroup != 0 {
		t.Errorf("pid 20, listed by a threaded domain, was placed at %v", domain.Cgroups)
	}
}

// The walk's lists, in any order and over several hierarchies, give each
// pid its cgroup per hierarchy: -1 where one hierarchy listed it twice,
// none where no list had it; pid 0 (another pid namespace's) and numbers
// no pid can have are passed over.
func TestCgroupWalkPlaces(t *testing.T) {
	var w cgroupWalk
	w.place([]byte("30\n10\n0\n20\n"), 0, 1)           // node 1 of hierarchy 0
	w.place([]byte("20\n4294967306\n"), 0, 2)          // 20 again in hierarchy 0
	w.place([]byte("10\n30\n"), 1, 5)                  // hierarchy 1
	w.place([]byte("7\n99999999999999999999\n"), 2, 3) // hierarchy 2, and an overflow
	w.sortPlaced()
	for _, c := range []struct {
		pid  int
		want cgroupSlots
	}{
		{10, cgroupSlots{2, 6}},
		{20, cgroupSlots{-1}},
		{30, cgroupSlots{2, 6}},
		{7, cgroupSlots{0, 0, 4}},
		{0, cgroupSlots{}},
		{8, cgroupSlots{}},
		{10 + 1<<32, cgroupSlots{}}, // 4294967306: not pid 10
		{40, cgroupSlots{}},
	} {
		if got := w.slotsOf(c.pid); got != c.want {
			t.Errorf("pid %d: slots %v, want %v", c.pid, got, c.want)
		}
	}
	if len(w.placed) != 4 {
		t.Errorf("%d pids placed, want 4: %v", len(w.placed), w.placed)
	}
}

// TestCgroupSlotsInAnyOrder: slotsOf answers from where its last answer
// was (a scan asks in ascending pid order) and searches otherwise; every
// order of asking gets the same answers, pids listed or not.
func TestCgroupSlotsInAnyOrder(t *testing.T) {
	var w cgroupWalk
	want := map[int]cgroupSlots{}
	for pid := 3; pid < 400; pid += 3 { // pids 3, 6, 9 ...: the others not listed
		want[pid] = cgroupSlots{int32(pid%7) + 1}
	}
	for pid := range want {
		w.place([]byte(strconv.Itoa(pid)+"\n"), 0, int32(pid%7))
	}
	w.sortPlaced()
	ascending := make([]int, 0, 410)
	for pid := 0; pid < 410; pid++ {
		ascending = append(ascending, pid)
	}
	descending := slices.Clone(ascending)
	slices.Reverse(descending)
	shuffled := slices.Clone(ascending)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	skipping := []int{3, 4, 5, 30, 31, 33, 399, 2, 3, 6, 9, 8, 12}
	for name, order := range map[string][]int{"ascending": ascending, "descending": descending, "shuffled": shuffled, "skipping": skipping} {
		w.next = 0
		for _, pid := range order {
			if got := w.slotsOf(pid); got != want[pid] {
				t.Errorf("%s: pid %d: slots %v, want %v", name, pid, got, want[pid])
			}
		}
	}
}

// TestPidPlacePacks: a pid, a hierarchy and a node come back out of their
// packed number, at their bounds too, and numbers sort by pid first.
func TestPidPlacePacks(t *testing.T) {
	for _, c := range [][3]int32{{1, 0, 0}, {math.MaxInt32, maxWalked - 1, maxNodes}, {4194304, 2, 12345}} {
		p := newPidPlace(c[0], c[1], c[2])
		if got := [3]int32{p.pid(), p.h(), p.node()}; got != c {
			t.Errorf("newPidPlace%v unpacks to %v", c, got)
		}
	}
	if !(newPidPlace(7, 3, maxNodes) < newPidPlace(8, 0, 0)) {
		t.Error("pid 7 in any hierarchy and node does not sort before pid 8")
	}
}

func TestFindMount(t *testing.T) {
	info := []byte("" +
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"35 31 0:32 /a\\040b /sys/fs/cgroup/memory rw,relatime shared:7 master:1 - cgroup cgroup rw,memory\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n" +
		"42 31 0:39 / /sys/fs/cgroup/cpu\\040x rw - cgroup cgroup rw,cpu,cpuacct\n")
	tests := []struct {
		point string
		line  procwalk.CgroupLine
		root  string
		holds bool
	}{
		{"/sys/fs/cgroup/memory", procwalk.CgroupLine{HierarchyID: 4, Controllers: "memory"}, "/a b", true},
		{"/sys/fs/cgroup/unified", procwalk.CgroupLine{}, "/", true},
		{"/sys/fs/cgroup/cpu x", procwalk.CgroupLine{HierarchyID: 2, Controllers: "cpu,cpuacct"}, "/", true},
		{"/sys/fs/cgroup/cpu x", procwalk.CgroupLine{HierarchyID: 2, Controllers: "cpu,memory"}, "/", false},
		{"/sys/fs/cgroup", procwalk.CgroupLine{}, "/", false},
	}
	for _, tt := range tests {
		m, ok := procwalk.FindMount(info, tt.point)
		if !ok || m.Root != tt.root || holds(m, tt.line) != tt.holds {
			t.Errorf("findMount(%q) = %+v, %v; want root %q, holding %+v %v", tt.point, m, ok, tt.root, tt.line, tt.holds)
		}
	}
	if _, ok := procwalk.FindMount(info, "/sys/fs/cgroup/pids"); ok {
		t.Error("found a mount that is not there")
	}
}

func TestCgroupCount(t *testing.T) {
	b := []byte("#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\nmemory\t4\t83\t1\npids\t8\t1\t1\n")
	for c, want := range map[string]uint64{"cpuset": 1, "memory": 83, "pids": 1} {
		if n, ok := cgroupCount(b, c); !ok || n != want {
			t.Errorf("%s: %d %v, want %d", c, n, ok, want)
		}
	}
	if _, ok := cgroupCount(b, "rdma"); ok {
		t.Error("counted a controller not listed")
	}
}

// On this host, every process the walk placed has the lines its cgroup file
// shows for the walked hierarchies, and a process we start is placed.
func TestCgroupWalkLive(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("reads the live /proc and cgroupfs: set PROCWALK_INTEGRATION=1")
	}
	own := exec.Command("sleep", "300")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Process.Kill(); own.Wait() }) // our own child
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindCgroup}})
	if err != nil {
		t.Fatal(err)
	}
	// A process started in the clock tick of the walk is read from its
	// file (it may reuse a listed pid): let a tick pass.
	for {
		st, err := fs.ReadStat(own.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if bootTicks(procwalk.DefaultClockTicks) > st.StartTicks { // USER_HZ: 100 on Linux
			break
		}
		time.Sleep(time.Millisecond)
	}
	walkStart := bootTicks(procwalk.DefaultClockTicks)
	s, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g).Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.cgroups.hiers) == 0 {
		t.Fatal("no hierarchy walked on this host")
	}
	// old counts the processes the walk had to place: started before it,
	// alive after it. Others come and go by the thousand when a fork storm
	// (another package's test) runs meanwhile.
	old, placed := 0, 0
	differ := map[procwalk.ProcID]string{}
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.ID.StartTicks < walkStart {
			if st, err := fs.ReadStat(p.ID.PID); err == nil && st.StartTicks == p.ID.StartTicks && st.State != 'Z' && st.State != 'X' {
				old++
			}
		}
		// Hierarchies of one cgroup place pids that no list named.
		slots := g.cgroups.slotsOf(p.ID.PID)
		if len(p.Cgroups) != len(g.cgroups.hiers) {
			continue // read from its file
		}
		b, err := os.ReadFile(fs.Path(strconv.Itoa(p.ID.PID), "cgroup"))
		if err != nil {
			continue // exited since
		}
		file, err := procwalk.ParseCgroup(b)
		if err != nil {
			t.Fatalf("pid %d: %v", p.ID.PID, err)
		}
		// Read after the file: a process that exited since the walk shows
		// "/" in every hierarchy of its file while it is a zombie.
		if st, err := fs.ReadStat(p.ID.PID); err != nil || st.StartTicks != p.ID.StartTicks || st.State == 'Z' || st.State == 'X' {
			continue // exited, its pid reused
		}
		placed++
		if want := walkedLines(file); !reflect.DeepEqual(p.Cgroups, want) {
			differ[p.ID] = fmt.Sprintf("pid %d (%s) slots %v: walked %v, file %v", p.ID.PID, p.Comm, slots, p.Cgroups, want)
		}
	}
	// A process may have moved between the walk and the read of its file
	// (a script worker enters its memory cgroup right after it starts): a
	// second walk then places it as its file says. A fault of the walk
	// shows again.
	if len(differ) > 0 {
		g2, err := NewGrouper(fs, Config{Kinds: []string{KindCgroup}})
		if err != nil {
			t.Fatal(err)
		}
		s2, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g2).Gather()
		if err != nil {
			t.Fatal(err)
		}
		for id, msg := range differ {
			p := s2.Lookup(id)
			b, err := os.ReadFile(fs.Path(strconv.Itoa(id.PID), "cgroup"))
			if p == nil || err != nil {
				t.Logf("%s; exited since", msg)
				continue
			}
			file, err := procwalk.ParseCgroup(b)
			if err != nil {
				t.Fatalf("pid %d: %v", id.PID, err)
			}
			if len(p.Cgroups) == len(g2.cgroups.hiers) && reflect.DeepEqual(p.Cgroups, walkedLines(file)) {
				t.Logf("%s; moved: the next walk agrees with its file", msg)
				continue
			}
			t.Errorf("%s; the next walk: %v", msg, p.Cgroups)
		}
	}
	t.Logf("%d processes, %d there before the walk and after it, %d placed by the walk of %d hierarchies", len(s.Procs), old, placed, len(g.cgroups.hiers))
	if p := s.Process(own.Process.Pid); p == nil || len(p.Cgroups) != len(g.cgroups.hiers) || p.Cgroups[0].Path == "" {
		t.Errorf("our sleep %d was not placed by the walk: %+v", own.Process.Pid, p)
	}
	if placed < old/2 {
		t.Errorf("the walk placed %d of the %d processes there before it and after it", placed, old)
	}
}

// BenchmarkCgroupWalk compares, on the live host, the walk of cgroupfs
// with what it replaces: reading every process's /proc/<pid>/cgroup (a raw
// open, read, close loop, parsing nothing).
func BenchmarkCgroupWalk(b *testing.B) {
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		b.Skip(err)
	}
	b.Run("walk", func(b *testing.B) {
		var w cgroupWalk
		b.ReportAllocs()
		for b.Loop() {
			w.run(fs, DefaultCgroupRoot)
			if !w.valid {
				b.Fatal("no walk on this host")
			}
		}
		b.ReportMetric(float64(len(w.placed)), "procs")
		b.ReportMetric(float64(len(w.nodes)), "cgroups")
	})
	b.Run("files", func(b *testing.B) {
		buf := make([]byte, 4096)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			ents, err := os.ReadDir(procwalk.DefaultRoot)
			if err != nil {
				b.Fatal(err)
			}
			n = 0
			for _, e := range ents {
				if _, err := strconv.Atoi(e.Name()); err != nil {
					continue
				}
				fd, err := syscall.Open(procwalk.DefaultRoot+"/"+e.Name()+"/cgroup", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					continue // exited
				}
				syscall.Read(fd, buf)
				syscall.Close(fd)
				n++
			}
		}
		b.ReportMetric(float64(n), "procs")
	})
}
