//go:build linux

package procwalk

import "strings"

// cgroup_own.go names the cgroups procwalk makes for its own processes:
// script workers (procwalk-worker-<pid namespace>-<pid>), guard's command
// (procwalk-guard-...) and the tests' (procwalk-test-<pid>,
// procwalk-test-freeze-<pid>). They come and go with procwalk's own pids,
// so grouping never makes a session of one: their processes count in the
// cgroup around them (session.placeCgroup).

// OwnCgroupPrefix starts the name of every cgroup procwalk makes. The rest
// is one or more lower-case words and one or more numbers, dash-separated
// (see IsOwnCgroup): FS.OwnCgroup's prefix and the pid namespace and pid it
// adds.
const OwnCgroupPrefix = "procwalk-"

// IsOwnCgroup reports whether a cgroup directory's name is one procwalk
// makes: "procwalk-", words of a-z, then numbers, each after a dash
// (procwalk-worker-4026531836-1234, procwalk-test-freeze-77). A unit named
// procwalk-telegraf.service is not.
func IsOwnCgroup(name string) bool {
	rest, ok := strings.CutPrefix(name, OwnCgroupPrefix)
	if !ok {
		return false
	}
	words, numbers := 0, 0
	for part := range strings.SplitSeq(rest, "-") {
		switch {
		case part == "":
			return false
		case numbers == 0 && strings.Trim(part, "abcdefghijklmnopqrstuvwxyz") == "":
			words++
		case words > 0 && strings.Trim(part, "0123456789") == "":
			numbers++
		default:
			return false
		}
	}
	return words > 0 && numbers > 0
}

// OwnCgroupParent cuts a cgroup path ("/system.slice/telegraf.service/
// procwalk-worker-4026531836-1234/sub") before its first element that
// IsOwnCgroup names: "/system.slice/telegraf.service". "/" when that is
// the first element; path itself when it has none.
func OwnCgroupParent(path string) string {
	if !strings.Contains(path, OwnCgroupPrefix) {
		return path // the common case, without a split
	}
	parts := strings.Split(path, "/")
	for i, part := range parts {
		if IsOwnCgroup(part) {
			if i <= 1 {
				return "/"
			}
			return strings.Join(parts[:i], "/")
		}
	}
	return path
}
