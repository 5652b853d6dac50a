package main

import (
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

func TestVisibilityNote(t *testing.T) {
	procs := make([]procwalk.Process, 5)
	tests := []struct {
		name string
		v    procwalk.Visibility
		want string
	}{
		{"complete", procwalk.Visibility{Listed: 5}, ""},
		{"gone", procwalk.Visibility{Listed: 6, Gone: 1}, "partial data: 1 process exited mid-scan"},
		{"malformed, one dropped", procwalk.Visibility{Listed: 6, Malformed: 3},
			"partial data: 3 processes with malformed /proc files (1 left out: bad stat or statm)"},
		{"denied fields, sorted", procwalk.Visibility{Listed: 5, Denied: map[string]int{"smaps": 1, "io": 4}},
			"partial data: io denied for 4 processes (needs ptrace access: root or the process's user); " +
				"smaps denied for 1 process (needs ptrace access: root or the process's user)"},
		{"hidepid=noaccess", procwalk.Visibility{Listed: 8, Denied: map[string]int{"stat": 3}, HidePID: "noaccess", OthersHidden: true},
			"partial data: stat denied for 3 processes, left out (hidepid: run as root); " +
				"proc is mounted hidepid=noaccess: other users' processes may be missing (run as root)"},
		{"hidepid as root", procwalk.Visibility{Listed: 5, HidePID: "2"}, ""},
	}
	for _, tt := range tests {
		s := &procwalk.Snapshot{Procs: procs, Visibility: tt.v}
		if got := visibilityNote(s); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
