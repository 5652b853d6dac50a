//go:build linux

package kill

import (
	"syscall"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// A limit counts as enforced only if ending the tree signalled something
// or found a target already gone: a report of refusals alone (every target
// protected by a hard rule) must never read as success (issue 14, point 2).
func TestSignalledAny(t *testing.T) {
	refused := Outcome{Target: Target{ID: procwalk.ProcID{PID: 7}}, Result: ResultProtected, Err: ErrProtected}
	tests := []struct {
		name string
		out  []Outcome
		want bool
	}{
		{"every target refused", []Outcome{refused, refused}, false},
		{"identity changed", []Outcome{{Result: ResultIdentityChanged}}, false},
		{"one signalled", []Outcome{refused, {Result: ResultExited, Signals: []syscall.Signal{syscall.SIGTERM}}}, true},
		{"one already gone", []Outcome{refused, {Result: ResultGone}}, true},
	}
	for _, tt := range tests {
		if got := signalledAny(&Report{Outcomes: tt.out}); got != tt.want {
			t.Errorf("%s: signalledAny = %v, want %v", tt.name, got, tt.want)
		}
	}
}
