//go:build linux

package procwalk

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestIsTerminalNot(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(strings.NewReader("")) || IsTerminal((*os.File)(nil)) {
		t.Error("/dev/null, a reader or a nil file is a terminal")
	}
}

// A pseudo-terminal's master answers the terminal ioctl.
func TestIsTerminalPTY(t *testing.T) {
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer f.Close()
	if !IsTerminal(f) {
		t.Error("/dev/ptmx is no terminal")
	}
}
