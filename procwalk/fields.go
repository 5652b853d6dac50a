//go:build linux

package procwalk

import (
	"fmt"
	"strings"
)

// Fields selects which optional /proc files a Snapshot reads per process.
// stat and statm are always read; everything else costs extra syscalls, so a
// cheap scan asks for nothing more.
type Fields uint32

const (
	FieldStatus   Fields = 1 << iota // status: uids, VmSwap, context switches
	FieldCmdline                     // cmdline
	FieldExe                         // exe link
	FieldCwd                         // cwd link
	FieldIO                          // io: needs ptrace access (root or same user)
	FieldSmaps                       // smaps_rollup: PSS, USS; locks the target's mmap, opt-in
	FieldFDs                         // fd directory: open descriptor count
	FieldCgroup                      // cgroup lines
	FieldOOMScore                    // oom_score
	// FieldOwner is the effective uid alone, from the owner of the
	// /proc/<pid> directory (one stat, no file read): the kernel makes a
	// process's euid the owner of its directory, which is how procps gets
	// USER without reading status. Reading status serves it too.
	FieldOwner
	// FieldSwap is VmSwap alone. On a host whose meminfo says no swap is
	// in use (SwapTotal - SwapFree is 0) every process's VmSwap is 0, and
	// nothing is read; otherwise status is read. smaps_rollup serves it too.
	FieldSwap
	fieldEnd
)

// AllFields is every optional field except smaps_rollup, which stays opt-in.
// The parentheses matter: &^ binds tighter than -.
const AllFields = (fieldEnd - 1) &^ FieldSmaps

// fieldNames names the fields in bit order. A function, not a package
// variable, so that no caller can change the names for everyone.
func fieldNames() []string {
	return []string{"status", "cmdline", "exe", "cwd", "io", "smaps", "fds", "cgroup", "oom_score", "owner", "swap"}
}

// String lists the fields, comma-separated, e.g. "status,cmdline".
func (f Fields) String() string {
	var names []string
	for i, name := range fieldNames() {
		if f&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}

// ParseFields reads a comma-separated list of field names ("all" for
// AllFields).
func ParseFields(s string) (Fields, error) {
	var f Fields
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			f |= AllFields
			continue
		}
		found := false
		names := fieldNames()
		for i, n := range names {
			if n == name {
				f |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown field %q: known fields are all, %s", name, strings.Join(names, ", "))
		}
	}
	return f, nil
}

// each calls fn for every single field set in f.
func (f Fields) each(fn func(Fields)) {
	for b := Fields(1); b < fieldEnd; b <<= 1 {
		if f&b != 0 {
			fn(b)
		}
	}
}
