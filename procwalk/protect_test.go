package procwalk

import "testing"

// Kernel threads are known by PF_KTHREAD alone. In a pid namespace pid 2
// is whatever the namespace's pid 1 started second (a shell under bwrap,
// a container's first child) and its children are ordinary processes:
// a rule on pid 2 or ppid 2 would shield all of them from every kill.
func TestHardRuleKernelThreadsByFlagOnly(t *testing.T) {
	g := &guardRails{self: 999, ancestors: map[int]bool{}}
	for _, c := range []struct {
		name   string
		p      Process
		refuse bool
	}{
		{"kthreadd", Process{ID: ProcID{PID: 2}, Comm: "kthreadd", Kernel: true}, true},
		{"a kworker", Process{ID: ProcID{PID: 40}, PPID: 2, Comm: "kworker/0:1", Kernel: true}, true},
		{"pid 2 of a namespace", Process{ID: ProcID{PID: 2}, PPID: 1, Comm: "bash"}, false},
		{"a child of pid 2 of a namespace", Process{ID: ProcID{PID: 7}, PPID: 2, Comm: "sleep"}, false},
		{"pid 1", Process{ID: ProcID{PID: 1}, Comm: "sh"}, true},
		{"procwalk", Process{ID: ProcID{PID: 999}, PPID: 2, Comm: "procwalk"}, true},
	} {
		if err := g.hardRule(&c.p); (err != nil) != c.refuse {
			t.Errorf("%s: hard rule %v, want refused %v", c.name, err, c.refuse)
		}
	}
}
