//go:build linux

package procwalk

import (
	"bytes"
	"testing"
)

// TestEscapingWriter: each line of what a script prints is escaped, the
// tabs between print's arguments and the line breaks kept.
func TestEscapingWriter(t *testing.T) {
	var b bytes.Buffer
	in := "evil\x1b[2Jname\tpid 42\nsecond\x1b\n"
	n, err := EscapingWriter{W: &b}.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got, want := b.String(), "evil\\x1b[2Jname\tpid 42\nsecond\\x1b\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
