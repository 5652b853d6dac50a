//go:build linux

package session

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// cgroupfs.go reads usage and limits from a mounted cgroup filesystem.
//   v2 (one hierarchy at the root, "cgroup.controllers" present):
//     memory.current, memory.max ("max" or bytes), cpu.max ("max 100000" or
//     "<quota µs> <period µs>").
//   v1 (one directory per controller: memory/, cpu,cpuacct/ ...):
//     memory.usage_in_bytes, memory.limit_in_bytes (a huge number when
//     unlimited), cpu.cfs_quota_us (-1 when unlimited), cpu.cfs_period_us.
// A hybrid host mounts v1 controllers and a controller-less v2 at unified/.

// DefaultCgroupRoot is where cgroupfs is mounted on a systemd host.
const DefaultCgroupRoot = "/sys/fs/cgroup"

// unlimitedBytes: v1 reports "no limit" as PAGE_COUNTER_MAX pages, about
// 2^63 bytes rounded down to a page; anything from 2^60 up means unlimited.
const unlimitedBytes = 1 << 60

// cgroupFS reads one cgroupfs, caching each file for the length of a gather:
// sessions share ancestors, whose limits would otherwise be read repeatedly.
type cgroupFS struct {
	root  string
	v2    bool // the root is a v2 hierarchy
	cache map[string]cgroupValue
	buf   []byte // a value file's contents
}

type cgroupValue struct {
	v  uint64
	v2 uint64 // second number (cpu period) where the file has two
	ok bool
}

func newCgroupFS(root string) *cgroupFS {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return &cgroupFS{root: root, v2: err == nil, cache: make(map[string]cgroupValue)}
}

// mounted reports whether root looks like a cgroupfs at all.
func (c *cgroupFS) mounted() bool {
	if c.v2 {
		return true
	}
	_, err := os.Stat(filepath.Join(c.root, "memory"))
	return err == nil
}

// usage reads what cgroupfs says about the cgroup directories of a session
// (false when neither directory exists):
// memDir and cpuDir are the session's directory in the memory and cpu
// hierarchies ("" when unknown); ctlMem and ctlCPU are the v1 controller
// directory names ("memory", "cpu,cpuacct"), "" for v2.
func (c *cgroupFS) usage(memDir, ctlMem, cpuDir, ctlCPU string) (CgroupUsage, bool) {
	u := CgroupUsage{Version: 1}
	if ctlMem == "" && ctlCPU == "" {
		u.Version = 2
	}
	found := false
	if memDir != "" && c.exists(c.hierarchy(ctlMem), memDir) {
		base := c.hierarchy(ctlMem)
		cur, limit := "memory.current", "memory.max"
		if ctlMem != "" {
			cur, limit = "memory.usage_in_bytes", "memory.limit_in_bytes"
		}
		if v := c.read(base, memDir, cur); v.ok {
			u.MemoryUsageBytes, u.HaveMemoryUsage, found = v.v, true, true
		}
		// The tightest limit of the directory and its ancestors applies.
		for dir := memDir; ; dir = path.Dir(dir) {
			if v := c.read(base, dir, limit); v.ok {
				found = true
				if v.v < unlimitedBytes && (u.MemoryLimitBytes == 0 || v.v < u.MemoryLimitBytes) {
					u.MemoryLimitBytes, u.MemoryLimitPath = v.v, dir
				}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	if cpuDir != "" && c.exists(c.hierarchy(ctlCPU), cpuDir) {
		base := c.hierarchy(ctlCPU)
		for dir := cpuDir; ; dir = path.Dir(dir) {
			var quota, period cgroupValue
			if ctlCPU == "" {
				quota = c.read(base, dir, "cpu.max")
				period = cgroupValue{v: quota.v2, ok: quota.ok}
			} else {
				quota = c.read(base, dir, "cpu.cfs_quota_us")
				period = c.read(base, dir, "cpu.cfs_period_us")
			}
			if quota.ok || period.ok {
				found = true
			}
			if quota.ok && period.ok && period.v > 0 && quota.v < unlimitedBytes {
				cores := float64(quota.v) / float64(period.v)
				if u.CPUQuotaCores == 0 || cores < u.CPUQuotaCores {
					u.CPUQuotaCores, u.CPUQuotaPath = cores, dir
				}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	return u, found
}

// exists reports whether the session's own cgroup directory is there: a
// process's cgroup may be gone by now, and then its ancestors' limits say
// nothing about it.
func (c *cgroupFS) exists(base, dir string) bool {
	fi, err := os.Stat(filepath.Join(base, dir))
	return err == nil && fi.IsDir()
}

// hierarchy is the directory of a v1 hierarchy, named by its controllers
// ("cpu,cpuacct") or its name ("name=systemd" is systemd/), or of the v2
// hierarchy: the root itself, or unified/ on a hybrid host.
func (c *cgroupFS) hierarchy(controllers string) string {
	if name, ok := strings.CutPrefix(controllers, "name="); ok {
		return filepath.Join(c.root, name)
	}
	if controllers != "" {
		return filepath.Join(c.root, controllers)
	}
	if c.v2 {
		return c.root
	}
	return filepath.Join(c.root, "unified")
}

// read reads one value file; "max" and v1's -1 read as unlimited.
func (c *cgroupFS) read(base, dir, file string) cgroupValue {
	p := filepath.Join(base, dir, file)
	if v, ok := c.cache[p]; ok {
		return v
	}
	v := cgroupValue{}
	if b, err := c.readFile(p); err == nil {
		v = parseCgroupValue(b)
	}
	c.cache[p] = v
	return v
}

// readFile reads a value file whole into c.buf: an open, a read and a
// close (os.ReadFile adds a stat, a second read and a File to collect),
// without blocking on a FIFO planted in a fake tree.
func (c *cgroupFS) readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if c.buf == nil {
		c.buf = make([]byte, 0, 256)
	}
	b, _, err := fsio.ReadAllFD(fd, c.buf, true)
	c.buf = b[:0]
	return b, err
}

// parseCgroupValue reads "<n>", "max", "-1", or two of them ("max 100000").
// Unlimited reads as ^uint64(0).
func parseCgroupValue(b []byte) cgroupValue {
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 {
		return cgroupValue{}
	}
	var v cgroupValue
	for i, s := range f {
		var n uint64
		switch s {
		case "max", "-1":
			n = ^uint64(0)
		default:
			x, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return cgroupValue{}
			}
			n = x
		}
		if i == 0 {
			v.v = n
		} else {
			v.v2 = n
		}
	}
	v.ok = true
	return v
}
