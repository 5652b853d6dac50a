//go:build linux

package procwalk

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether r is a file open on a terminal.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
