//go:build linux

package session

import (
	"testing"
	"unsafe"
)

// TestMemberCountersSize: a Grouper keeps counters for every member of
// every session between a daemon's gathers; io sits in an array of its own.
func TestMemberCountersSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(memberCounters{}); got != 24 {
		t.Errorf("memberCounters is %d bytes; want 24", got)
	}
}
