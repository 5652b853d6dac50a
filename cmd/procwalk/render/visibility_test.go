//go:build linux

package render

import (
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

func TestVisibilityNote(t *testing.T) {
	procs := make([]procwalk.Process, 5)
	tests := []struct {
		name string
		v    procwalk.Visibility
		euid int
		want string
	}{
		{"complete", procwalk.Visibility{Listed: 5}, 1000, ""},
		{"gone", procwalk.Visibility{Listed: 6, Gone: 1}, 1000, "partial data: 1 process exited mid-scan"},
		{"malformed, one dropped", procwalk.Visibility{Listed: 6, Malformed: 3}, 1000,
			"partial data: 3 processes with malformed /proc files (1 left out: bad stat or statm)"},
		{"denied fields, sorted", procwalk.Visibility{Listed: 5, Denied: map[string]int{"smaps": 1, "io": 4}}, 1000,
			"partial data: io denied for 4 processes, smaps denied for 1 process (needs ptrace access: root or the process's user)"},
		// One reason, said once; files refused for as many processes, in one clause.
		{"denied alike", procwalk.Visibility{Listed: 5, Denied: map[string]int{"io": 1, "exe": 1, "cwd": 1, "smaps": 2}}, 0,
			"partial data: cwd, exe and io denied for 1 process, smaps denied for 2 processes (refused even to root: a process of another user namespace or a protected one)"},
		// Root has ptrace access: what it is refused is out of its reach.
		{"denied to root", procwalk.Visibility{Listed: 5, Denied: map[string]int{"io": 1}}, 0,
			"partial data: io denied for 1 process (refused even to root: a process of another user namespace or a protected one)"},
		{"hidepid=noaccess", procwalk.Visibility{Listed: 8, Denied: map[string]int{"stat": 3}, HidePID: "noaccess", OthersHidden: true}, 1000,
			"partial data: stat denied for 3 processes, left out (hidepid: run as root); " +
				"proc is mounted hidepid=noaccess: other users' processes may be missing (run as root)"},
		{"hidepid as root", procwalk.Visibility{Listed: 5, HidePID: "2"}, 0, ""},
	}
	for _, tt := range tests {
		s := &procwalk.Snapshot{Procs: procs, Visibility: tt.v}
		if got := VisibilityNote(s, tt.euid); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
