//go:build linux

package kill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// Kernel threads are known by PF_KTHREAD alone. In a pid namespace pid 2
// is whatever the namespace's pid 1 started second (a shell under bwrap,
// a container's first child) and its children are ordinary processes:
// a rule on pid 2 or ppid 2 would shield all of them from every kill.
func TestHardRuleKernelThreadsByFlagOnly(t *testing.T) {
	g := &guardRails{self: 999, ancestors: map[int]bool{}}
	for _, c := range []struct {
		name   string
		p      procwalk.Process
		refuse bool
	}{
		{"kthreadd", procwalk.Process{ID: procwalk.ProcID{PID: 2}, Comm: "kthreadd", Kernel: true}, true},
		{"a kworker", procwalk.Process{ID: procwalk.ProcID{PID: 40}, PPID: 2, Comm: "kworker/0:1", Kernel: true}, true},
		{"pid 2 of a namespace", procwalk.Process{ID: procwalk.ProcID{PID: 2}, PPID: 1, Comm: "bash"}, false},
		{"a child of pid 2 of a namespace", procwalk.Process{ID: procwalk.ProcID{PID: 7}, PPID: 2, Comm: "sleep"}, false},
		{"pid 1", procwalk.Process{ID: procwalk.ProcID{PID: 1}, Comm: "sh"}, true},
		{"procwalk", procwalk.Process{ID: procwalk.ProcID{PID: 999}, PPID: 2, Comm: "procwalk"}, true},
	} {
		if err := g.hardRule(&c.p); (err != nil) != c.refuse {
			t.Errorf("%s: hard rule %v, want refused %v", c.name, err, c.refuse)
		}
	}
}

// cgroup.freeze stops every process of a cgroup tree, those procwalk
// cannot see included: inside a pid namespace cgroup.procs lists processes
// outside it as 0. It is written only when no pid listed, in the cgroup
// and below, is refused.
func TestCgroupLists(t *testing.T) {
	root := t.TempDir()
	write := func(dir, procs string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "cgroup.procs"), []byte(procs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".", "10\n11\n")
	write("child", "12\n")
	live := map[int]bool{10: true, 11: true, 12: true}
	notLive := func(pid int) bool { return !live[pid] }
	if why := cgroupLists(root, nil, notLive); why != "" {
		t.Errorf("only targets: %q", why)
	}
	write("child/grandchild", "0\n")
	if why := cgroupLists(root, nil, notLive); !strings.Contains(why, "outside procwalk's pid namespace") {
		t.Errorf("a pid 0 below: %q", why)
	}
	write("child/grandchild", "")
	write("other", "99\n")
	if why := cgroupLists(root, nil, notLive); !strings.Contains(why, "holds pid 99, which is not a target") {
		t.Errorf("a stranger: %q", why)
	}
	if why := cgroupLists(filepath.Join(root, "missing"), nil, notLive); why == "" {
		t.Error("an unreadable cgroup passed")
	}
	// cgroup.freeze's rule: members not yet planned may be frozen, a
	// refused one (pid 11) and a process outside the namespace may not.
	write("other", "")
	refusedOrHidden := func(pid int) bool { return pid == 0 || pid == 11 }
	write(".", "10\n")
	write("child", "12\n13\n")
	if why := cgroupLists(root, nil, refusedOrHidden); why != "" {
		t.Errorf("a newcomer blocked the freeze: %q", why)
	}
	write(".", "10\n11\n")
	if why := cgroupLists(filepath.Join(root, "child"), nil, refusedOrHidden); why != "" {
		t.Errorf("a refused pid outside the subtree blocked it: %q", why)
	}
	if why := cgroupLists(root, nil, refusedOrHidden); !strings.Contains(why, "holds pid 11") {
		t.Errorf("a refused member: %q", why)
	}
	// A plain path's child cgroup is a session of its own: a cgroup
	// session scope may not freeze it along.
	write(".", "10\n")
	write("child", "12\n")
	plain := &CgroupScope{Path: "/batch", session: true}
	if why := cgroupLists(root, plain, refusedOrHidden); !strings.Contains(why, "belongs to another cgroup session") {
		t.Errorf("a child session: %q", why)
	}
	write("child", "")
	if why := cgroupLists(root, plain, refusedOrHidden); why != "" {
		t.Errorf("an empty child session: %q", why)
	}
	unit := &CgroupScope{Path: "/system.slice/x.service", session: true}
	write("child", "12\n")
	if why := cgroupLists(root, unit, refusedOrHidden); why != "" {
		t.Errorf("a unit's child cgroup is the unit's: %q", why)
	}
}

func TestProtectedPlus(t *testing.T) {
	if got, err := ProtectedPlus(nil); got != nil || err != nil {
		t.Errorf("nothing added: %q, %v; want nil (the default list)", got, err)
	}
	got, err := ProtectedPlus([]string{"postgres", "node*"})
	def := DefaultProtected()
	if err != nil || len(got) != len(def)+2 || got[len(def)] != "postgres" || got[len(def)+1] != "node*" || got[0] != def[0] {
		t.Errorf("added: %q, %v; want the default list, then postgres and node*", got, err)
	}
	if _, err := ProtectedPlus([]string{"ok", "[bad"}); err == nil || !strings.Contains(err.Error(), `"[bad"`) {
		t.Errorf("a bad glob: %v; want it named", err)
	}
}
