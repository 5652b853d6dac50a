//go:build linux

package kill

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// supervise_cpu.go counts the CPU time of a supervised tree where none of
// it can be lost. A child whose parent ignores SIGCHLD (or set
// SA_NOCLDWAIT) is reaped by the kernel, and its CPU never reaches any
// parent's cutime/cstime (FACTS "Learned from testing"): summing the tree
// and what Supervise reaps misses it. So the command runs in a cgroup v2 of
// its own where one can be made (a child of this process's own cgroup,
// entered at clone time with CLONE_INTO_CGROUP, so nothing it forks is
// outside), and the tree's CPU is the cgroup's usage_usec (cpu.stat, kept
// in every cgroup whether or not the cpu controller is enabled), which
// counts every process that ever ran there. Elsewhere (no cgroup2 mount,
// no right to write there, a kernel before 5.7) the count is approximate:
// live processes' own and reaped children's CPU each interval, what
// Supervise reaps, and, for a process reaped by the kernel, its CPU as
// last sampled (what it used in its last interval, and a process that
// lived less than one, are lost).

// guardCgroupPrefix starts the name of a supervised command's cgroup,
// followed by the pid namespace's inode number and this process's pid:
// procwalk-guard-4026531836-1234, one of procwalk's own cgroups, never a
// session (procwalk.IsOwnCgroup).
const guardCgroupPrefix = procwalk.OwnCgroupPrefix + "guard-"

// cpuCgroup is the cgroup the command runs in.
type cpuCgroup struct {
	dir string
	fd  int // the directory, for CLONE_INTO_CGROUP
}

// newCPUCgroup makes the command's cgroup below this process's own v2
// cgroup, after removing the ones guards of this pid namespace that are
// gone left there; nil when it cannot.
func newCPUCgroup(fs procwalk.FS) *cpuCgroup {
	b, err := os.ReadFile(fs.Path("self", "cgroup"))
	if err != nil {
		return nil
	}
	lines, err := procwalk.ParseCgroup(b)
	if err != nil {
		return nil
	}
	var own procwalk.CgroupLine
	found := false
	for _, l := range lines {
		if l.HierarchyID == 0 && l.Controllers == "" {
			own, found = l, true
		}
	}
	if !found {
		return nil
	}
	parent, ok := fs.CgroupDir(own)
	if !ok {
		return nil
	}
	dir, ok := fs.OwnCgroup(parent, guardCgroupPrefix)
	if !ok {
		return nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.stat")); err != nil {
		os.Remove(dir)
		return nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil
	}
	return &cpuCgroup{dir: dir, fd: fd}
}

// cpuSeconds reads the cgroup's user+system CPU: usage_usec of cpu.stat.
func (c *cpuCgroup) cpuSeconds() (float64, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("usage_usec ")); ok {
			n, err := strconv.ParseUint(string(v), 10, 64)
			return float64(n) / 1e6, err == nil
		}
	}
	return 0, false
}

// remove closes the directory and removes the cgroup; it stays when a
// process still runs there (a dry run leaves the command's leftovers), for
// the next guard of this pid namespace to remove once it is empty.
func (c *cpuCgroup) remove() {
	unix.Close(c.fd)
	os.Remove(c.dir)
}

// cpuTracker keeps the approximate count of a tree's CPU without a cgroup:
// the last sample of each process whose parent ignores SIGCHLD, so that
// its CPU is still counted once the kernel has reaped it.
type cpuTracker struct {
	last map[procwalk.ProcID]float64 // own + reaped children's CPU, of processes the kernel will reap
	lost float64                     // their CPU, once gone
}

// sample adds up the tree's CPU now: reaped is what Supervise reaped,
// autoReaped whether a process's parent lets the kernel reap it.
func (c *cpuTracker) sample(tree []*procwalk.Process, reaped float64, autoReaped func(p *procwalk.Process) bool) float64 {
	if c.last == nil {
		c.last = make(map[procwalk.ProcID]float64)
	}
	live := make(map[procwalk.ProcID]bool, len(tree))
	cpu := reaped
	for _, p := range tree {
		own := p.CPUSeconds() + p.ChildrenUserCPUSeconds + p.ChildrenSystemCPUSeconds
		cpu += own
		live[p.ID] = true
		if autoReaped(p) {
			c.last[p.ID] = own
		}
	}
	for id, own := range c.last {
		if !live[id] {
			c.lost += own
			delete(c.last, id)
		}
	}
	return cpu + c.lost
}

// ignoresSIGCHLD reports whether pid ignores SIGCHLD (SigIgn in status),
// so that the kernel reaps its children. SA_NOCLDWAIT alone does not show
// in /proc. It reads into buf and returns it, for the next call to reuse.
func ignoresSIGCHLD(fs procwalk.FS, pid int, buf []byte) (bool, []byte) {
	b, err := fs.ReadPIDFile(pid, "status", buf)
	if err != nil {
		return false, b
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("SigIgn:")); ok {
			mask, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			return err == nil && mask&(1<<(unix.SIGCHLD-1)) != 0, b
		}
	}
	return false, b
}
