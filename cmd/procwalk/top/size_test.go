//go:build linux

package top

import (
	"testing"
	"unsafe"
)

// TestRowSize: a process view keeps two tables of a row a process (the one
// shown and the next); the RSS figures at 10,000 processes in the README
// rest on 120 bytes a row on 64-bit hosts.
func TestRowSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(row{}); got != 120 {
		t.Errorf("a row is %d bytes; the README's memory figures assume 120", got)
	}
}
