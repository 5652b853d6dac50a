//go:build linux

package procwalk

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroup_self.go finds the directory of a process's own memory cgroup, from
// <root>/self/cgroup and <root>/self/mountinfo, for a process that puts its
// children in a memory cgroup of their own (scripting's worker).

// MemoryCgroup is where the memory controller of a cgroup is.
type MemoryCgroup struct {
	// Dir is the cgroup's directory: /sys/fs/cgroup/system.slice/x.service
	// (v2), /sys/fs/cgroup/memory/user.slice (v1).
	Dir string
	// V2 is true for the unified hierarchy: memory.max and memory.events;
	// v1 has memory.limit_in_bytes and memory.oom_control.
	V2 bool
}

// SelfMemoryCgroup returns the memory cgroup of the process reading
// <root>/self: the v1 hierarchy that holds the memory controller when one
// is mounted (a hybrid host's unified hierarchy then has none), else the
// v2 one. ok is false when neither is mounted in this mount namespace, or
// the process's cgroup lies outside what is mounted.
func (fs FS) SelfMemoryCgroup() (MemoryCgroup, bool) {
	cgroup, err := readFile(fs.Path("self", "cgroup"))
	if err != nil {
		return MemoryCgroup{}, false
	}
	mountinfo, err := readFile(fs.Path("self", "mountinfo"))
	if err != nil {
		return MemoryCgroup{}, false
	}
	return parseMemoryCgroup(cgroup, mountinfo)
}

// parseMemoryCgroup joins a memory cgroup's path in /proc/self/cgroup to
// the mount point of its hierarchy, less the mount's own root (a cgroup
// namespace or a bind mount shows a subtree).
func parseMemoryCgroup(cgroup, mountinfo []byte) (MemoryCgroup, bool) {
	lines, err := ParseCgroup(cgroup)
	if err != nil {
		return MemoryCgroup{}, false
	}
	v1, v2 := "", ""
	for _, l := range lines {
		switch {
		case l.HierarchyID == 0 && l.Controllers == "":
			v2 = l.Path
		case HasController(l.Controllers, "memory"):
			v1 = l.Path
		}
	}
	var found MemoryCgroup
	ok := false
	eachMount(mountinfo, func(m mountLine) {
		var path string
		switch {
		case v1 != "" && string(m.fsType) == "cgroup" && HasController(string(m.options), "memory"):
			path = v1
		case v1 == "" && v2 != "" && string(m.fsType) == "cgroup2":
			path = v2
		default:
			return
		}
		root := unescapeOctal(string(m.root))
		rel, under := strings.CutPrefix(path, root)
		if !under || (rel != "" && root != "/" && !strings.HasPrefix(rel, "/")) {
			return // the process's cgroup is not in what is mounted here
		}
		found = MemoryCgroup{Dir: filepath.Join(unescapeOctal(string(m.point)), rel), V2: string(m.fsType) == "cgroup2"}
		ok = true
	})
	return found, ok
}

// HasController reports whether a comma-separated list (a cgroup line's
// controllers, a cgroup mount's options) holds c.
func HasController(list, c string) bool {
	for o := range strings.SplitSeq(list, ",") {
		if o == c {
			return true
		}
	}
	return false
}

// OwnCgroup is the directory of a cgroup a process makes for its children
// below parent: prefix, the pid namespace's inode number and the process's
// pid (procwalk-worker-4026531836-1234). The namespace is in the name:
// processes of two namespaces may share parent, and each knows only its
// own pids. Cgroups of the same prefix and namespace that a process no
// longer running left there (one killed by SIGKILL cannot remove its own)
// are removed first; removing a cgroup succeeds only when no process is in
// it, so a live one stays whatever its name. ok is false when the
// namespace cannot be read.
func (fs FS) OwnCgroup(parent, prefix string) (dir string, ok bool) {
	ns, err := os.Readlink(fs.Path("self", "ns", "pid")) // "pid:[4026531836]"
	if err != nil {
		return "", false
	}
	prefix += strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]") + "-"
	if entries, err := os.ReadDir(parent); err == nil {
		for _, e := range entries {
			pid, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok || !e.IsDir() {
				continue
			}
			if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
				continue
			}
			if _, err := os.Stat(filepath.Join(fs.root, pid)); errors.Is(err, os.ErrNotExist) {
				os.Remove(filepath.Join(parent, e.Name()))
			}
		}
	}
	return filepath.Join(parent, prefix+strconv.Itoa(os.Getpid())), true
}
