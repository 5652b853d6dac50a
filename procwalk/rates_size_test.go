//go:build linux

package procwalk

import (
	"testing"
	"unsafe"
)

// TestRatesSize: every Process holds Rates; its flags are packed so that
// it takes 64 bytes, not 80 (a daemon's peak at 10,000 processes).
func TestRatesSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(Rates{}); got != 64 {
		t.Errorf("Rates is %d bytes; want 64 (a field out of place pads it)", got)
	}
}

// TestSampleSize: a Sampler keeps two samples of every process between a
// daemon's gathers; io and smaps counters sit in arrays of their own.
func TestSampleSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(sample{}); got != 32 {
		t.Errorf("sample is %d bytes; want 32", got)
	}
}
