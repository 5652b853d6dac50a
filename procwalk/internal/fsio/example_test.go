//go:build linux

package fsio_test

import (
	"fmt"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// Parsing a line of /proc/<pid>/statm without allocating: split it into
// fields, then read each as a number.
func Example() {
	statm := []byte("2763 412 305 27 0 195 0\n")
	line, _ := fsio.NextLine(statm)
	fields := make([][]byte, 8)
	n := fsio.SplitFields(line, fields)
	size, _ := fsio.Atou(fields[0])
	resident, _ := fsio.Atou(fields[1])
	fmt.Println(n, "fields; pages:", size, resident)
	// Output: 7 fields; pages: 2763 412
}
