//go:build linux

package procwalk

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// mountinfo.go is the one parser of /proc/self/mountinfo
// (proc_pid_mountinfo(5)): the hidepid= option of the proc mount procwalk
// reads, where cgroupfs hierarchies are mounted, and the cgroup2 mount.

// mountLine is one line of mountinfo, its fields as mountinfo escapes them
// (octal for space, tab, newline and backslash):
// "36 31 0:33 /kubepods /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory".
type mountLine struct {
	root    []byte // field 4: the directory of the filesystem mounted
	point   []byte // field 5: where it is mounted
	fsType  []byte
	options []byte // super options: hidepid=, a v1 hierarchy's controllers
}

// eachMount calls fn for every mount of mountinfo b in order (a later
// mount on a point hides the earlier ones). The optional fields before
// " - " vary in number, so the filesystem type and super options are found
// after that separator. Lines that do not parse are skipped.
func eachMount(b []byte, fn func(m mountLine)) {
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		var f [5][]byte
		if fsio.SplitFields(line, f[:]) < 5 {
			continue
		}
		sep := bytes.Index(line, []byte(" - "))
		if sep < 0 {
			continue
		}
		var g [3][]byte // fstype, source, super options
		if fsio.SplitFields(line[sep+3:], g[:]) < 3 {
			continue
		}
		fn(mountLine{root: f[3], point: f[4], fsType: g[0], options: g[2]})
	}
}

// parseHidePID finds the hidepid= option of the proc mount at root in
// mountinfo: "22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw,hidepid=2".
// When several proc mounts sit on root, the last one (the visible one)
// counts. A fixture root matches no mount point, which reads as "not
// hidden".
func parseHidePID(b []byte, root string) string {
	mountPoint := escapeMountPoint(filepath.Clean(root))
	hide := ""
	eachMount(b, func(m mountLine) {
		if string(m.point) != mountPoint || string(m.fsType) != "proc" {
			return
		}
		hide = ""
		for opts := m.options; len(opts) > 0; {
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
	})
	return hide
}

// MountEntry is a mount found by FindMount, unescaped.
type MountEntry struct {
	Root    string // the mounted directory of the filesystem
	FSType  string
	Options string // super options: a v1 hierarchy's controllers among them
}

// FindMount finds the mount at mountPoint in mountinfo. The last mount on
// a point is the visible one.
func FindMount(mountinfo []byte, mountPoint string) (MountEntry, bool) {
	want := escapeMountPoint(mountPoint)
	var found MountEntry
	ok := false
	eachMount(mountinfo, func(m mountLine) {
		if string(m.point) == want {
			found = MountEntry{Root: unescapeOctal(string(m.root)), FSType: string(m.fsType), Options: string(m.options)}
			ok = true
		}
	})
	return found, ok
}

// Cgroup2Mount finds where the unified (v2) cgroup hierarchy is mounted, from
// <root>/self/mountinfo: /sys/fs/cgroup on a pure v2 host,
// /sys/fs/cgroup/unified on a hybrid one. "" when there is none.
func (fs FS) Cgroup2Mount() string {
	b, err := readFile(fs.Path("self", "mountinfo"))
	if err != nil {
		return ""
	}
	return parseCgroup2Mount(b)
}

// parseCgroup2Mount finds the first cgroup2 mount's point in mountinfo:
// "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw".
func parseCgroup2Mount(b []byte) string {
	point := ""
	eachMount(b, func(m mountLine) {
		if point == "" && string(m.fsType) == "cgroup2" {
			point = unescapeOctal(string(m.point))
		}
	})
	return point
}

// escapeMountPoint escapes a path the way mountinfo shows it (octal for
// space, tab, newline and backslash). A strings.Replacer made per call
// built a 6 kB table each time (every cgroup walk calls this per
// hierarchy).
func escapeMountPoint(p string) string {
	if !strings.ContainsAny(p, "\\ \t\n") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\', ' ', '\t', '\n':
			b.Write([]byte{'\\', '0' + c>>6, '0' + c>>3&7, '0' + c&7})
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeOctal undoes mountinfo's octal escapes ("\040" is a space).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CgroupDir returns the directory of a process's cgroup, one line of its
// /proc/<pid>/cgroup, in this mount namespace: below the cgroup2 mount for
// the unified line ("0::/a/b"), below the v1 mount holding the line's
// controllers otherwise ("4:memory:/a/b", "9:name=systemd:/a/b"), less the
// mount's own root (a cgroup namespace or a bind mount shows a subtree).
// ok is false when that hierarchy is not mounted here or the cgroup lies
// outside what is mounted.
func (fs FS) CgroupDir(l CgroupLine) (string, bool) {
	b, err := readFile(fs.Path("self", "mountinfo"))
	if err != nil {
		return "", false
	}
	return parseCgroupDir(b, l)
}

func parseCgroupDir(mountinfo []byte, l CgroupLine) (string, bool) {
	dir, ok := "", false
	eachMount(mountinfo, func(m mountLine) {
		if ok {
			return
		}
		switch {
		case l.HierarchyID == 0 && string(m.fsType) == "cgroup2":
		case l.HierarchyID != 0 && string(m.fsType) == "cgroup" && hasControllers(string(m.options), l.Controllers):
		default:
			return
		}
		root := unescapeOctal(string(m.root))
		rel, under := strings.CutPrefix(l.Path, root)
		if !under || (rel != "" && root != "/" && !strings.HasPrefix(rel, "/")) {
			return
		}
		dir, ok = filepath.Join(unescapeOctal(string(m.point)), rel), true
	})
	return dir, ok
}

// hasControllers reports whether a v1 mount's options name every
// controller of list ("cpu,cpuacct", "name=systemd").
func hasControllers(options, list string) bool {
	for _, c := range strings.Split(list, ",") {
		if !HasController(options, c) {
			return false
		}
	}
	return list != ""
}
