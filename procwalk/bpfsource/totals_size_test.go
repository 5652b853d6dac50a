//go:build linux

package bpfsource

import (
	"testing"
	"unsafe"
)

// TestTotalsSize: the source keeps one totals a process between decode
// and readOptional: 80 bytes, 0.8 MB at 10,000 processes.
func TestTotalsSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(totals{}); got != 80 {
		t.Errorf("totals is %d bytes; want 80", got)
	}
}
