//go:build linux

package procwalk

import (
	"regexp"
	"testing"
)

func TestFilter(t *testing.T) {
	kthread := &Process{ID: ProcID{PID: 2}, Comm: "kthreadd", Kernel: true}
	vim := &Process{ID: ProcID{PID: 10}, Comm: "vim", Cmdline: []string{"vim", "notes.txt"}, EffectiveUID: 1000, Read: FieldOwner}
	unread := &Process{ID: ProcID{PID: 11}, Comm: "bash", EffectiveUID: 1000} // owner not read
	for _, tt := range []struct {
		name string
		f    Filter
		want []bool // kthread, vim, unread
	}{
		{"zero value", Filter{UID: AnyOwner}, []bool{false, true, true}},
		{"kernel", Filter{UID: AnyOwner, Kernel: true}, []bool{true, true, true}},
		{"uid", Filter{UID: 1000}, []bool{false, true, false}},
		{"uid 0", Filter{UID: 0}, []bool{false, false, false}},
		{"in the command line", Filter{UID: AnyOwner, Contains: "notes"}, []bool{false, true, false}},
		{"in comm", Filter{UID: AnyOwner, Kernel: true, Contains: "thread"}, []bool{true, false, false}},
		{"regexp", Filter{UID: AnyOwner, Regexp: regexp.MustCompile(`^(vim|bash)$`)}, []bool{false, true, true}},
		{"both", Filter{UID: AnyOwner, Contains: "vim", Regexp: regexp.MustCompile(`txt$`)}, []bool{false, true, false}},
	} {
		for i, p := range []*Process{kthread, vim, unread} {
			if got := tt.f.Match(p); got != tt.want[i] {
				t.Errorf("%s: %s matched %v; want %v", tt.name, p.Comm, got, tt.want[i])
			}
		}
	}
}
