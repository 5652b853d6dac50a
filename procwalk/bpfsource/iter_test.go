//go:build linux

package bpfsource

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestIterLinkClosesOnce: closing a link twice closes its descriptor once.
// The second close must neither fail nor close the file that took the
// number meanwhile (the lowest free number is given to the next open).
func TestIterLinkClosesOnce(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	l := iterLink{fd: fd}
	if err := l.close(); err != nil {
		t.Fatalf("first close: %v", err)
	}
	other, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	if err := l.close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := unix.FcntlInt(uintptr(other), unix.F_GETFD, 0); err != nil {
		t.Errorf("fd %d, opened after the first close (the link's was %d), was closed by the second: %v", other, fd, err)
	}
}
