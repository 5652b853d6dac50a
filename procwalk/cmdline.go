//go:build linux

package procwalk

import "bytes"

// cmdline.go parses /proc/<pid>/cmdline: arguments separated (and usually
// ended) by NUL bytes. Empty for kernel threads and zombies. A process may
// rewrite its argv area, e.g. into one space-separated string: we return what
// is there.

func parseCmdline(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	n := 1
	for _, c := range b {
		if c == 0 {
			n++
		}
	}
	args := make([]string, 0, n)
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return append(args, string(b))
		}
		args = append(args, string(b[:i]))
		b = b[i+1:]
	}
}
