//go:build linux

package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// TestCgroupWalkStands changes what a standing walk rests on, the
// membership files of the walked cgroups and the cgroups themselves, and
// sees it walk again; other writes and the processes' own files change
// nothing while it stands.
func TestCgroupWalkStands(t *testing.T) {
	files := baseTree()
	// pids, the hierarchy not walked, holds one cgroup: a process the
	// walk leaves to its file is kept by identity.
	files["proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t2\t3\t1\npids\t1\t1\t1\n"
	files["cgroup/memory/b.service/cgroup.procs"] = "" // 20 is listed by systemd alone: read from its file
	files["cgroup/memory/a.service/memory.limit_in_bytes"] = "1000000\n"
	proc, cg := cgroupTree(t, files)
	g, _ := fixtureGrouper(t, proc, Config{Kinds: []string{KindCgroup}, CgroupRoot: cg})
	if g.cgroups.walks != 1 || g.cgroups.notify != nil {
		t.Fatalf("after one gather: %d walks, watching %v; want 1 and nothing watched", g.cgroups.walks, g.cgroups.notify != nil)
	}
	m := procwalk.NewMonitor(g.fs, procwalk.MonitorConfig{}, g)
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(cg, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gather := func(step string, wantWalks int, want map[int]string) {
		t.Helper()
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(s)
		if g.cgroups.walks != wantWalks {
			t.Errorf("%s: %d walks in all, want %d", step, g.cgroups.walks, wantWalks)
		}
		for pid, path := range want {
			p := s.Process(pid)
			if p == nil || p.Read&procwalk.FieldCgroup == 0 || len(p.Cgroups) == 0 || p.Cgroups[0].Path != path {
				t.Errorf("%s: pid %d in %+v, want %s", step, pid, p.Cgroups, path)
			}
		}
	}
	where := map[int]string{10: "/a.service", 11: "/a.service", 20: "/b.service"}
	gather("second gather: walks, watching", 2, where)
	gather("nothing changed: stands", 2, where)

	// 20's file changes without a write to cgroupfs (no kernel does that):
	// its kept lines stay, which shows the file was not read again.
	if err := os.WriteFile(filepath.Join(proc, "20/cgroup"), []byte("3:name=systemd:/c.service\n2:memory:/c.service\n1:pids:/p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gather("a process's file alone", 2, where)

	// systemd moves 20 to a new c.service: a cgroup made and a write to
	// its cgroup.procs.
	write("systemd/c.service/cgroup.procs", "20\n")
	write("memory/c.service/cgroup.procs", "20\n")
	write("systemd/b.service/cgroup.procs", "")
	where[20] = "/c.service"
	gather("moved to a new cgroup", 3, where)
	gather("stands again", 3, where)

	write("memory/a.service/memory.limit_in_bytes", "2000000\n")
	gather("a limit written", 3, where)

	write("memory/a.service/cgroup.procs", "10\n11\n")
	gather("a cgroup.procs written", 4, where)
	write("memory/a.service/tasks", "10\n")
	gather("v1 tasks written", 5, where)
	if err := os.Remove(filepath.Join(cg, "memory/c.service/cgroup.procs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cg, "memory/c.service")); err != nil {
		t.Fatal(err)
	}
	delete(where, 20) // listed by systemd alone: read from its file
	gather("a cgroup removed", 6, where)
}

// A whole hierarchy whose top has no sub-cgroup is placed without a list
// (the walk makes it single): it stands too, until a sub-cgroup is made.
func TestCgroupWalkStandsTopOnly(t *testing.T) {
	files := baseTree()
	for _, pid := range []string{"10", "11", "20"} {
		f := "proc/" + pid + "/cgroup"
		files[f] = strings.Replace(files[f], "3:name=systemd:/a.service\n", "3:name=systemd:/\n", 1)
		files[f] = strings.Replace(files[f], "3:name=systemd:/b.service\n", "3:name=systemd:/\n", 1)
	}
	delete(files, "cgroup/systemd/a.service/cgroup.procs")
	delete(files, "cgroup/systemd/b.service/cgroup.procs")
	files["proc/10/ns/cgroup"] = "->" + initialCgroupNS
	proc, cg := cgroupTree(t, files)
	g, _ := fixtureGrouper(t, proc, Config{Kinds: []string{KindCgroup}, CgroupRoot: cg})
	m := procwalk.NewMonitor(g.fs, procwalk.MonitorConfig{}, g)
	for i, want := range []int{2, 2, 2} {
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(s)
		if g.cgroups.walks != want {
			t.Errorf("gather %d: %d walks in all, want %d", i+2, g.cgroups.walks, want)
		}
	}
	if err := os.Mkdir(filepath.Join(cg, "systemd", "c.service"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g.Group(s)
	if g.cgroups.walks != 3 {
		t.Errorf("after a sub-cgroup was made: %d walks in all, want 3", g.cgroups.walks)
	}
}

// TestCgroupWalkLateBound: a standing walk keeps at most maxLate
// processes by identity; past that the next gather walks again, which
// places those started before it by pid (here they start in the future:
// they are read again).
func TestCgroupWalkLateBound(t *testing.T) {
	files := baseTree()
	files["proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t2\t3\t1\npids\t1\t1\t1\n"
	proc, cg := cgroupTree(t, files)
	g, _ := fixtureGrouper(t, proc, Config{Kinds: []string{KindCgroup}, CgroupRoot: cg})
	m := procwalk.NewMonitor(g.fs, procwalk.MonitorConfig{}, g)
	gather := func() {
		t.Helper()
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(s)
	}
	gather()
	gather()
	if g.cgroups.walks != 2 || !g.cgroups.stands {
		t.Fatalf("%d walks, standing %v; want 2, standing", g.cgroups.walks, g.cgroups.stands)
	}
	// Processes that started after the walk (start ticks beyond any
	// boot's): each is read from its file and kept.
	for pid := 1000; pid < 1000+maxLate(3)+1; pid++ {
		p := "proc/" + strconv.Itoa(pid) + "/"
		writeTreeFile(t, proc, p+"stat", fmt.Sprintf("%d (late) S 1 %d %d 0 -1 4194560 0 0 0 0 10 5 0 0 20 0 1 0 %d 12288000 1000 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, pid, pid, uint64(1)<<50))
		writeTreeFile(t, proc, p+"statm", "3000 1000 250 10 0 500 0\n")
		writeTreeFile(t, proc, p+"cgroup", "3:name=systemd:/a.service\n2:memory:/a.service\n1:pids:/p\n")
	}
	gather()
	if g.cgroups.walks != 2 || g.cgroups.stands {
		t.Errorf("after %d late processes: %d walks, standing %v; want 2, no longer standing", maxLate(3)+1, g.cgroups.walks, g.cgroups.stands)
	}
	gather()
	if g.cgroups.walks != 3 {
		t.Errorf("next gather: %d walks, want 3", g.cgroups.walks)
	}
}

func writeTreeFile(t *testing.T, root, name, data string) {
	t.Helper()
	p := filepath.Join(root, strings.TrimPrefix(name, "proc/"))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMembershipEvents(t *testing.T) {
	n := newCgroupNotify()
	if n == nil {
		t.Skip("no inotify")
	}
	defer n.close()
	dir := t.TempDir()
	if !n.watch(dir) {
		t.Fatal("cannot watch a directory")
	}
	for _, tt := range []struct {
		what   string
		do     func() error
		change bool
	}{
		{"nothing", func() error { return nil }, false},
		{"memory.max written", func() error { return os.WriteFile(filepath.Join(dir, "memory.max"), []byte("1"), 0o644) }, false},
		{"cgroup.procs written", func() error { return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("1"), 0o644) }, true},
		{"cgroup.threads written", func() error { return os.WriteFile(filepath.Join(dir, "cgroup.threads"), []byte("1"), 0o644) }, true},
		{"tasks written", func() error { return os.WriteFile(filepath.Join(dir, "tasks"), []byte("1"), 0o644) }, true},
		{"a sub-cgroup made", func() error { return os.Mkdir(filepath.Join(dir, "sub"), 0o755) }, true},
		{"a sub-cgroup removed", func() error { return os.Remove(filepath.Join(dir, "sub")) }, true},
		{"the cgroup removed", func() error { os.RemoveAll(dir); return nil }, true},
	} {
		if err := tt.do(); err != nil {
			t.Fatal(err)
		}
		if got := n.changed(); got != tt.change {
			t.Errorf("%s: changed %v, want %v", tt.what, got, tt.change)
		}
	}
}

// TestIntegrationCgroupWalkFollowsAMove moves a process of the test's
// own between two cgroups it makes, with a plain write to cgroup.procs as
// systemd and runc do (no truncation: the file's time does not move), and
// sees the standing walk follow.
func TestIntegrationCgroupWalkFollowsAMove(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("makes cgroups on this host: set PROCWALK_INTEGRATION=1")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindCgroup}})
	if err != nil {
		t.Fatal(err)
	}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g)
	gather := func() *procwalk.Snapshot {
		t.Helper()
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		g.Group(s)
		return s
	}
	// The walk stands from the second gather on, unless a cgroup was made,
	// removed or written meanwhile (on CI, other packages' tests make
	// cgroups): a few more gathers let it settle.
	gather()
	for i := 0; i < 5 && !g.cgroups.stands; i++ {
		gather()
	}
	if !g.cgroups.stands {
		t.Skipf("the walk does not stand on this host (inotify, or %d hierarchies unwalkable)", len(g.cgroups.hiers))
	}
	// The first walked hierarchy that is a directory tree we can write.
	var dir string
	for _, h := range g.cgroups.hiers {
		if h.mountRoot == "/" && !h.single {
			dir = h.dir
			break
		}
	}
	if dir == "" {
		t.Skip("no walked hierarchy with sub-cgroups here")
	}
	a, b := filepath.Join(dir, "procwalk-test-walk-a"), filepath.Join(dir, "procwalk-test-walk-b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cannot make a cgroup: %v", err)
		}
	}
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sleep.Process.Kill() // our own child
		sleep.Wait()
		for _, d := range []string{a, b} {
			for i := 0; os.Remove(d) != nil && i < 100; i++ {
				time.Sleep(10 * time.Millisecond) // the killed sleep leaves the cgroup once reaped
			}
		}
	})
	move := func(to string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(to, "cgroup.procs"), os.O_WRONLY, 0) // no O_TRUNC
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(strconv.Itoa(sleep.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	in := func(s *procwalk.Snapshot, want string) {
		t.Helper()
		p := s.Process(sleep.Process.Pid)
		if p == nil || p.Read&procwalk.FieldCgroup == 0 {
			t.Fatalf("our sleep: %+v", p)
		}
		for _, l := range p.Cgroups {
			if filepath.Base(l.Path) == want {
				return
			}
		}
		t.Errorf("our sleep in %+v, want %s", p.Cgroups, want)
	}
	move(a)
	walks := g.cgroups.walks
	s := gather()
	in(s, filepath.Base(a))
	if g.cgroups.walks == walks {
		t.Errorf("no walk after a cgroup was made")
	}
	walks = g.cgroups.walks
	in(gather(), filepath.Base(a))
	if g.cgroups.walks != walks {
		t.Errorf("walked again with nothing changed")
	}
	move(b)
	in(gather(), filepath.Base(b))
	if g.cgroups.walks == walks {
		t.Errorf("no walk after a move")
	}
}
