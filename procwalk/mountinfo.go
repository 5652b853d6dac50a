package procwalk

import (
	"bytes"
	"path/filepath"
	"strings"
)

// mountinfo.go parses /proc/self/mountinfo (proc_pid_mountinfo(5)) for the
// hidepid= option of the proc mount procwalk reads.

// parseHidePID finds the hidepid= option of the proc mount at root in
// mountinfo: "22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw,hidepid=2".
// The optional fields before " - " vary in number, so the filesystem type and
// super options are found after that separator. When several proc mounts sit
// on root, the last one (the visible one) counts. A fixture root matches no
// mount point, which reads as "not hidden".
func parseHidePID(b []byte, root string) string {
	mountPoint := escapeMountPoint(filepath.Clean(root))
	hide := ""
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		var f [5][]byte
		if splitFields(line, f[:]) < 5 || string(f[4]) != mountPoint {
			continue
		}
		sep := bytes.Index(line, []byte(" - "))
		if sep < 0 {
			continue
		}
		var g [3][]byte // fstype, source, super options
		if splitFields(line[sep+3:], g[:]) < 3 || string(g[0]) != "proc" {
			continue
		}
		hide = ""
		for opts := g[2]; len(opts) > 0; {
			opt := opts
			if i := bytes.IndexByte(opts, ','); i >= 0 {
				opt, opts = opts[:i], opts[i+1:]
			} else {
				opts = nil
			}
			if v, ok := bytes.CutPrefix(opt, []byte("hidepid=")); ok && string(v) != "0" && string(v) != "off" {
				hide = string(v)
			}
		}
	}
	return hide
}

// escapeMountPoint escapes a path the way mountinfo shows it (octal for
// space, tab, newline and backslash).
func escapeMountPoint(p string) string {
	return strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`).Replace(p)
}
