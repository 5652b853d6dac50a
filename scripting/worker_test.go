//go:build linux

package scripting

import "testing"

// The cause of a worker's death is the first line of the Go runtime's
// crash output that says why, and only the start of that output is kept.
func TestCrashOutputCause(t *testing.T) {
	tests := []struct{ out, want string }{
		{"", ""},
		{"runtime: goroutine stack exceeds 1000000000-byte limit\nruntime: sp=0xc0200e0390\nfatal error: stack overflow\n\nruntime stack:\n", "fatal error: stack overflow"},
		{"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n", "panic: runtime error: index out of range [3] with length 3"},
		{"fatal error: runtime: out of memory\n", "fatal error: runtime: out of memory"},
		{"something else\nand more\n", "something else"},
	}
	for _, tt := range tests {
		var c crashOutput
		c.Write([]byte(tt.out))
		if got := c.cause(); got != tt.want {
			t.Errorf("cause of %q = %q, want %q", tt.out, got, tt.want)
		}
	}
	var c crashOutput
	for range 100 {
		c.Write(make([]byte, 1<<10))
	}
	if len(c.buf) != maxCrashOutput {
		t.Errorf("kept %d bytes, want %d", len(c.buf), maxCrashOutput)
	}
}
