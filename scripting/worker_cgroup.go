//go:build linux

package scripting

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
)

// worker_cgroup.go puts script workers in a memory cgroup of their own,
// where one can be made: a child of the parent's own memory cgroup, with a
// limit on resident memory the kernel enforces (RLIMIT_AS bounds address
// space, which Go reserves far beyond what it touches). That needs write
// access to the parent's cgroup directory and, on cgroup v2, the memory
// controller enabled for its children (cgroup.subtree_control): root on a
// v1 or hybrid host; on v2 only a parent in the root cgroup, the one cgroup
// that may hold processes and give its children controllers. Elsewhere (an
// execd under Telegraf's user, a v2 service) there is none, and RLIMIT_AS
// and the in-process checks are the bounds.

// cgroupSlack is what a worker may hold beyond its heap budgets before the
// kernel's OOM killer ends it: the Go runtime and binary (about 10 MiB),
// its snapshot of a busy host (20-40 MiB at 10,000 processes), and the
// garbage the GC has not yet given back.
const cgroupSlack = 128 << 20

// cgroupLimit is the memory limit of a worker with limits l.
func cgroupLimit(l Limits) uint64 {
	return l.HeapBudgetBytes + l.RetainedBytes + cgroupSlack
}

// memoryCgroup is the cgroup directory workers run in. A nil one is none.
type memoryCgroup struct {
	dir   string
	v2    bool
	limit uint64
}

// newMemoryCgroup makes (or reuses, left by an earlier parent of the same
// pid) the cgroup procwalk-worker-<pid namespace>-<pid> below the memory
// cgroup self's process is in, with limit bytes, and removes the ones
// procwalks of its namespace gone without removing theirs left there; nil
// when it cannot.
func newMemoryCgroup(self procwalk.FS, limit uint64) *memoryCgroup {
	if self.Root() == "" {
		return nil
	}
	parent, ok := self.SelfMemoryCgroup()
	if !ok {
		return nil
	}
	if parent.V2 {
		b, err := os.ReadFile(filepath.Join(parent.Dir, "cgroup.subtree_control"))
		if err != nil || !hasWord(b, "memory") {
			return nil // not delegated: a child would have no memory controller
		}
	}
	dir, ok := self.OwnCgroup(parent.Dir, workerCgroupPrefix)
	if !ok {
		return nil
	}
	c := &memoryCgroup{dir: dir, v2: parent.V2, limit: limit}
	if err := os.Mkdir(c.dir, 0o755); err != nil && !os.IsExist(err) {
		return nil
	}
	n := strconv.FormatUint(limit, 10)
	if c.v2 {
		if c.write("memory.max", n) != nil {
			c.remove()
			return nil
		}
		c.write("memory.swap.max", "0") // best effort: no swap controller, no file
		return c
	}
	if c.write("memory.limit_in_bytes", n) != nil {
		c.remove()
		return nil
	}
	c.write("memory.memsw.limit_in_bytes", n) // best effort: swap accounting may be off
	return c
}

// workerCgroupPrefix starts a worker cgroup's name, followed by the pid
// namespace's inode number and its parent's pid in that namespace:
// procwalk-worker-4026531836-1234, one of procwalk's own cgroups, never a
// session (procwalk.IsOwnCgroup).
const workerCgroupPrefix = procwalk.OwnCgroupPrefix + "worker-"

func (c *memoryCgroup) write(file, value string) error {
	return os.WriteFile(filepath.Join(c.dir, file), []byte(value), 0)
}

// add moves pid into the cgroup.
func (c *memoryCgroup) add(pid int) error {
	return c.write("cgroup.procs", strconv.Itoa(pid))
}

// oomKills returns how many processes the kernel's OOM killer ended in the
// cgroup: "oom_kill N" in memory.events (v2) or memory.oom_control (v1,
// Linux 4.13+); 0 when unknown.
func (c *memoryCgroup) oomKills() uint64 {
	if c == nil {
		return 0
	}
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("oom_kill ")); ok {
			n, _ := strconv.ParseUint(string(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove removes the cgroup, once no worker is in it.
func (c *memoryCgroup) remove() {
	if c != nil {
		os.Remove(c.dir)
	}
}

// hasWord reports whether the space-separated list b holds w.
func hasWord(b []byte, w string) bool {
	for _, f := range bytes.Fields(b) {
		if string(f) == w {
			return true
		}
	}
	return false
}
