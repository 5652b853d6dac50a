//go:build linux

package procwalk

import (
	"io"
	"strings"
)

// PrintableLine is Printable of each tab-separated part of l: a line Lua
// printed, whose tabs separate print's arguments, escaped as every name
// procwalk prints is.
func PrintableLine(l string) string {
	parts := strings.Split(l, "\t")
	for i, p := range parts {
		parts[i] = Printable(p)
	}
	return strings.Join(parts, "\t")
}

// EscapingWriter writes through W each line escaped by PrintableLine, the
// line breaks kept: a script's print under run and watch, whose text names
// processes.
type EscapingWriter struct{ W io.Writer }

func (e EscapingWriter) Write(b []byte) (int, error) {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		lines[i] = PrintableLine(l)
	}
	if _, err := io.WriteString(e.W, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(b), nil
}
