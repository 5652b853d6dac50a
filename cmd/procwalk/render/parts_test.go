//go:build linux

package render

import "testing"

// The parts of a line go whole, the least needed first; the first stays.
func TestJoinParts(t *testing.T) {
	part := func(text string, rank int) Part { return Part{text, len(text), rank} }
	parts := []Part{part("procwalk top", 10), part("myhost", 3), part("2471 processes", 9), part("load 22.00 16.66 7.26", 7), part("4 CPUs", 3)}
	for _, tt := range []struct {
		w    int
		want string
	}{
		{67, "procwalk top  myhost  2471 processes  load 22.00 16.66 7.26  4 CPUs"},
		{66, "procwalk top  2471 processes  load 22.00 16.66 7.26  4 CPUs"}, // the first of two rank 3
		{58, "procwalk top  2471 processes  load 22.00 16.66 7.26"},
		{51, "procwalk top  2471 processes  load 22.00 16.66 7.26"},
		{30, "procwalk top  2471 processes"},
		{8, "procwalk top"}, // the first part always stays
		{0, "procwalk top"},
	} {
		if got := JoinParts(parts, tt.w); got != tt.want {
			t.Errorf("width %d: %q, want %q", tt.w, got, tt.want)
		}
	}
	if got := JoinParts(nil, 80); got != "" {
		t.Errorf("no parts: %q", got)
	}
}
