//go:build linux

package session

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// cgroup_walk.go places processes in the cgroup hierarchies the cgroup kind
// reads (name=systemd, memory and cpu on v1, the v2 hierarchy; see
// walkedHierarchy) by walking cgroupfs once per gather and reading each
// cgroup's cgroup.procs, instead of reading /proc/<pid>/cgroup for every
// process: a few hundred cgroups cost less than thousands of cgroup files,
// each of which makes the kernel build a path per hierarchy.
//
// A process gets the lines /proc/<pid>/cgroup shows for those hierarchies
// (same hierarchy ids, controller lists and paths, in the file's order).
// Paths are relative to our cgroup namespace, as the file's are: the mount's
// root (mountinfo field 4, shown relative to our namespace too) followed by
// the directory under the mount. Whatever the walk cannot vouch for is left
// to the per-process read: a process listed in no cgroup or in two of one
// hierarchy (its threads in two v1 cgroups, a move mid-walk), a v2 threaded
// subtree, a process started after the walk (it may reuse a listed pid), a
// hierarchy that cannot be read or whose mount root is unknown, and every
// process when cgroupfs shows pids of another pid namespace than the /proc
// being scanned. A hierarchy of one cgroup (single) places every process
// without a list.

// maxWalked is the number of hierarchies walkedHierarchy can pick: four
// kinds, fewer when controllers share a hierarchy.
const maxWalked = 4

// cgroupWalk holds one walk and the storage reused from gather to gather.
// The walk is valid between run and done only: it must never place the
// processes of a later scan by pid. From its second walk on, a Grouper
// watches the walked cgroups (cgroup_notify.go), and the last walk stands
// while nothing changed their membership: run then reads no cgroup.procs,
// processes started since are placed by their identity once their cgroup
// file was read (late), and a process the walk did not list has its file
// read once in its life likewise.
type cgroupWalk struct {
	valid     bool
	walkTicks uint64 // CLOCK_BOOTTIME when the walk started, in clock ticks
	// othersMatter is set when a hierarchy the walk skips may place a
	// process that all walked ones leave at "/" (membershipLine's last resort).
	othersMatter bool
	hiers        []walkedHierarchy
	nodes        []cgroupNode
	// placed holds the slots of every pid listed, ascending pid: a
	// search of 40 kB rather than a map five times the size (2,500
	// processes) whose every lookup misses the cache. placing collects
	// the walk's (pid, hierarchy, cgroup) triples first.
	placed  []placedPID
	placing []pidPlace
	// next is where slotsOf looks first: the scan asks in ascending pid
	// order, as /proc lists them, so each answer is the entry after the
	// last one's, found without a search.
	next int
	// lastSlots and lastLines memo placeByPID's last lookup in lines:
	// neighbouring pids are mostly in one cgroup.
	lastSlots cgroupSlots
	lastLines []procwalk.CgroupLine
	lastOK    bool
	lines     map[cgroupSlots][]procwalk.CgroupLine
	strs      fsio.Interner // paths and controller lists
	buf       []byte        // cgroup.procs chunks
	small     []byte        // the /proc files read before the walk
	dents     []byte
	path      []byte

	// notify watches the cgroups of the last walk, from the second walk
	// on (a one-shot command walks once and watches nothing); nil when
	// inotify cannot be used. stands says the last walk still holds.
	notify *cgroupNotify
	stands bool
	walks  int // walks made
	// late holds the cgroup lines read from /proc of the processes the
	// standing walk could not place, by identity; asked are the
	// processes whose file this gather's scan was left to read.
	late, spareLate map[procwalk.ProcID][]procwalk.CgroupLine
	asked           map[procwalk.ProcID]bool
}

// walkedHierarchy is one hierarchy to walk: its line in /proc/self/cgroup
// (Path unused), where it is mounted and the mount's root.
type walkedHierarchy struct {
	line      procwalk.CgroupLine
	dir       string
	mountRoot string
	// single marks a v1 controller hierarchy that /proc/cgroups says holds
	// one cgroup, its root: every process is there, so its cgroup.procs,
	// which the kernel builds from every thread it holds, is not read.
	single bool
	// whole marks a hierarchy mounted from its root in the initial cgroup
	// namespace: when its top has no sub-cgroups, it holds one cgroup and
	// becomes single (walkHierarchy). That is how a named v1 hierarchy or
	// the v2 one, which /proc/cgroups does not count, looks on a host whose
	// processes all sit at the root (no systemd): their cgroup.procs would
	// list every process, for nothing.
	whole bool
	top   int32 // its root's index in nodes
}

// cgroupNode is one cgroup of a walked hierarchy.
type cgroupNode struct {
	path   string // as /proc/<pid>/cgroup shows it
	parent int32  // index in nodes, -1 for a hierarchy's top
	// ambiguous marks a v2 threaded domain: its cgroup.procs also lists the
	// processes of its threaded children, which cannot list their own.
	ambiguous bool
	listed    bool // its cgroup.procs was read
}

// cgroupSlots places one pid: per walked hierarchy, the index of its node
// plus one; 0 when not listed, -1 when listed twice.
type cgroupSlots [maxWalked]int32

// placedPID is a pid and its slots.
type placedPID struct {
	pid   int32
	slots cgroupSlots
}

// pidPlace is a pid listed by node of hierarchy h, packed in one number
// so that sorting by pid sorts numbers (a comparison function made it
// three times slower): the pid in the high 32 bits, h in the next 3
// (maxWalked is 4), the node in the low 29 (a walk of more than maxNodes
// cgroups is given up).
type pidPlace uint64

// maxNodes is the most cgroups a walk places pids in.
const maxNodes = 1<<29 - 1

func newPidPlace(pid, h, node int32) pidPlace {
	return pidPlace(uint64(pid)<<32 | uint64(h)<<29 | uint64(node))
}

func (p pidPlace) pid() int32  { return int32(p >> 32) }
func (p pidPlace) h() int32    { return int32(p >> 29 & 7) }
func (p pidPlace) node() int32 { return int32(p & maxNodes) }

// walkedHierarchy reports whether the cgroup kind reads the line's
// hierarchy: the ones membershipLine ranks and cgroupUsage reads.
func isWalkedHierarchy(l procwalk.CgroupLine) bool {
	return l.Controllers == "name=systemd" || l.HierarchyID == 0 ||
		procwalk.HasController(l.Controllers, "memory") || procwalk.HasController(l.Controllers, "cpu")
}

// run walks the hierarchies under cgroupRoot that fs's own process sees,
// leaving the walk invalid (every process read from /proc) when it cannot
// be trusted.
func (w *cgroupWalk) run(fs procwalk.FS, cgroupRoot string) {
	w.valid = false
	w.next, w.lastOK = 0, false
	clear(w.asked)
	if w.standing(fs, cgroupRoot) {
		w.valid = true
		return
	}
	w.stands = false
	clear(w.late)
	if w.notify != nil {
		w.notify.close() // its watches go with it
		w.notify = nil
	}
	if w.walks > 0 {
		w.notify = newCgroupNotify()
	}
	w.walks++
	if w.lines == nil {
		w.lines = make(map[cgroupSlots][]procwalk.CgroupLine)
		w.strs.Max = fsio.MaxInterned // cgroups come and go
		w.buf = make([]byte, 64<<10)
		w.dents = make([]byte, 32<<10)
	}
	w.placed, w.placing = w.placed[:0], w.placing[:0]
	clear(w.lines)
	w.nodes = w.nodes[:0]
	if !w.findHierarchies(fs, cgroupRoot) {
		return
	}
	hz := uint64(procwalk.DefaultClockTicks)
	if b, err := w.readSmall(fs.Path("self", "auxv")); err == nil && procwalk.ParseAuxvClockTicks(b) > 0 {
		hz = procwalk.ParseAuxvClockTicks(b)
	}
	w.walkTicks = bootTicks(hz)
	if w.walkTicks == 0 {
		return
	}
	watched := w.notify != nil
	for h := range w.hiers {
		ok, watchedAll := w.walkHierarchy(h)
		if !ok {
			return
		}
		watched = watched && watchedAll
	}
	w.sortPlaced()
	w.valid = true
	w.stands = watched
}

// standing reports whether the last walk still holds: it was watched,
// nothing changed membership since (cgroup_notify.go), and the
// hierarchies to walk are the same.
func (w *cgroupWalk) standing(fs procwalk.FS, cgroupRoot string) bool {
	if !w.stands || w.notify.changed() {
		return false
	}
	before := slices.Clone(w.hiers)
	if !w.findHierarchies(fs, cgroupRoot) || len(before) != len(w.hiers) {
		return false
	}
	for h := range w.hiers {
		// Set by the walk, not by findHierarchies: the top's index, and
		// single for a whole hierarchy whose top had no sub-cgroup (its
		// watch sees one made).
		w.hiers[h].top = before[h].top
		if w.hiers[h].whole {
			w.hiers[h].single = before[h].single
		}
		if w.hiers[h] != before[h] {
			return false
		}
	}
	return true
}

// done ends the walk's validity: the scan it was taken for is over.
func (w *cgroupWalk) done() { w.valid = false }

// findHierarchies fills w.hiers from /proc/self/cgroup, the mounts under
// cgroupRoot and mountinfo, and sets othersMatter. False when the walk
// cannot be trusted.
func (w *cgroupWalk) findHierarchies(fs procwalk.FS, cgroupRoot string) bool {
	w.hiers = w.hiers[:0]
	b, err := w.readSmall(fs.Path("self", "cgroup"))
	if err != nil {
		return false
	}
	self, err := procwalk.ParseCgroup(b)
	if err != nil {
		return false
	}
	var cgroups []byte // /proc/cgroups, read once
	if b, err := w.readSmall(fs.Path("cgroups")); err == nil {
		cgroups = append([]byte(nil), b...)
	}
	mountinfo, _ := w.readSmall(fs.Path("self", "mountinfo"))
	cfs := newCgroupFS(cgroupRoot)
	initialNS := inInitialCgroupNS(fs)
	live := false
	var others []procwalk.CgroupLine
	for _, l := range self {
		if !isWalkedHierarchy(l) {
			others = append(others, l)
			continue
		}
		if len(w.hiers) == maxWalked {
			return false
		}
		dir := cfs.hierarchy(l.Controllers)
		real, err := isCgroupFS(dir)
		if err != nil {
			return false // not mounted there, or unreadable
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return false
		}
		m, found := procwalk.FindMount(mountinfo, abs)
		switch {
		case found && !holds(m, l):
			return false // another filesystem or hierarchy is mounted there
		case found:
		case real:
			return false // a live cgroupfs whose mount root we do not know
		default:
			m.Root = "/" // plain files: a fixture tree
		}
		live = live || real
		l.Controllers = w.strs.String([]byte(l.Controllers))
		single := l.HierarchyID != 0 && !strings.HasPrefix(l.Controllers, "name=") &&
			cgroups != nil && onlyRootCgroups(cgroups, []procwalk.CgroupLine{l})
		w.hiers = append(w.hiers, walkedHierarchy{line: l, dir: dir, mountRoot: m.Root, single: single,
			whole: initialNS && m.Root == "/"})
	}
	if len(w.hiers) == 0 {
		return false
	}
	// A live cgroupfs lists pids as our pid namespace numbers them: they
	// must be the numbers of the /proc being scanned.
	if live && !ownProcFS(fs) {
		return false
	}
	if len(others) > 0 {
		w.othersMatter = cgroups == nil || !onlyRootCgroups(cgroups, others)
	}
	return true
}

// readSmall reads a /proc file whole into w.small: the bytes last until
// the next call.
func (w *cgroupWalk) readSmall(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	b, _, err := fsio.ReadAllFD(fd, w.small, false)
	w.small = b[:0]
	return b, err
}

// initialCgroupNS is how /proc/<pid>/ns/cgroup reads in the initial cgroup
// namespace: its inode number is fixed (PROC_CGROUP_INIT_INO, 0xEFFFFFFB).
const initialCgroupNS = "cgroup:[4026531835]"

// inInitialCgroupNS reports whether fs's own process is in the initial
// cgroup namespace, where a mount root of "/" is the hierarchy's root.
// Elsewhere "/" is the namespace's root, and processes outside it sit in
// cgroups the mount does not show.
func inInitialCgroupNS(fs procwalk.FS) bool {
	link, err := os.Readlink(fs.Path("self", "ns", "cgroup"))
	return err == nil && link == initialCgroupNS
}

// onlyRootCgroups reports whether every process is at "/" in each of the
// v1 hierarchies of lines: /proc/cgroups (b) counts one cgroup (the root)
// for each of their controllers. Named hierarchies are not counted there.
func onlyRootCgroups(b []byte, lines []procwalk.CgroupLine) bool {
	for _, l := range lines {
		for list := l.Controllers; list != ""; {
			var c string
			c, list, _ = strings.Cut(list, ",")
			if n, ok := cgroupCount(b, c); !ok || n != 1 {
				return false
			}
		}
	}
	return true
}

// cgroupCount reads num_cgroups of controller c from /proc/cgroups:
// "#subsys_name hierarchy num_cgroups enabled", one line per controller.
func cgroupCount(b []byte, c string) (uint64, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		var f [4][]byte
		if fsio.SplitFields(line, f[:]) == 4 && string(f[0]) == c {
			return fsio.Atou(f[2])
		}
	}
	return 0, false
}

// bootTicks is CLOCK_BOOTTIME, which process start times count from, in
// clock ticks of hz a second; 0 when unknown.
func bootTicks(hz uint64) uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return uint64(ts.Sec)*hz + uint64(ts.Nsec)*hz/1e9
}

// isCgroupFS reports whether dir is a live cgroupfs (v1 or v2) rather than
// plain files; an error when dir cannot be looked at.
func isCgroupFS(dir string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false, err
	}
	return st.Type == unix.CGROUP_SUPER_MAGIC || st.Type == unix.CGROUP2_SUPER_MAGIC, nil
}

// holds reports whether the mount is the hierarchy of l: cgroup2 for the v2
// line, a v1 cgroup mount with each of l's controllers (and name=) otherwise.
func holds(m procwalk.MountEntry, l procwalk.CgroupLine) bool {
	if l.HierarchyID == 0 {
		return m.FSType == "cgroup2"
	}
	if m.FSType != "cgroup" {
		return false
	}
	for list := l.Controllers; list != ""; {
		var c string
		c, list, _ = strings.Cut(list, ",")
		if !procwalk.HasController(m.Options, c) {
			return false
		}
	}
	return true
}

// walkHierarchy lists every cgroup of hierarchy h, parents before children,
// and places the pids of each. False when its top cannot be read. With
// w.notify, each cgroup is watched before it is read: watched says every
// one was.
func (w *cgroupWalk) walkHierarchy(h int) (ok, watched bool) {
	hi := &w.hiers[h]
	top, err := syscall.Open(hi.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	defer syscall.Close(top)
	// A node's directory under the mount is its path after the mount root:
	// "/" + "a/b" shows as "/a/b", "/kubepods" + "a" as "/kubepods/a".
	prefix := len(strings.TrimSuffix(hi.mountRoot, "/"))
	first := len(w.nodes)
	hi.top = int32(first)
	w.nodes = append(w.nodes, cgroupNode{path: w.strs.String([]byte(hi.mountRoot)), parent: -1})
	if hi.single {
		// /proc/cgroups counts its cgroups: standing sees a new one.
		return hi.mountRoot == "/", true // a mount below the root: not the one cgroup
	}
	watched = true
	for i := first; i < len(w.nodes); i++ {
		if i > maxNodes {
			return false, false // pidPlace cannot hold the node: every process reads its file
		}
		w.path = append(append(w.path[:0], '.'), w.nodes[i].path[prefix:]...)
		w.path = append(w.path, 0)
		fd, err := fsio.Openat(top, w.path, syscall.O_RDONLY|syscall.O_DIRECTORY)
		if err != nil {
			if i == first {
				return false, false
			}
			continue // removed mid-walk: its processes are read from /proc
		}
		if w.notify != nil {
			watched = w.notify.watch(hi.dir+w.nodes[i].path[prefix:]) && watched
		}
		w.addChildren(fd, int32(i))
		if i == first && hi.whole && len(w.nodes) == first+1 {
			hi.single = true // no sub-cgroup: every process is at the top
		} else {
			w.readProcs(fd, h, int32(i))
		}
		syscall.Close(fd)
	}
	return true, watched
}

// addChildren appends the subdirectories of node i, read from fd.
func (w *cgroupWalk) addChildren(fd int, i int32) {
	parent := strings.TrimSuffix(w.nodes[i].path, "/")
	fsio.EachDirent(fd, w.dents, func(name []byte, typ byte) { // an error leaves the children read so far
		if string(name) == "." || string(name) == ".." || !isDir(fd, name, typ) {
			return
		}
		w.path = append(append(append(w.path[:0], parent...), '/'), name...)
		w.nodes = append(w.nodes, cgroupNode{path: w.strs.String(w.path), parent: i})
	})
}

// isDir reports whether the entry name of directory fd is a directory,
// asking the filesystem when getdents did not say (DT_UNKNOWN).
func isDir(fd int, name []byte, typ byte) bool {
	if typ != syscall.DT_UNKNOWN {
		return typ == syscall.DT_DIR
	}
	var st unix.Stat_t
	err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// readProcs reads the cgroup.procs of node i (open as fd) and places its
// pids in hierarchy h.
func (w *cgroupWalk) readProcs(dirfd int, h int, i int32) {
	fd, err := fsio.Openat(dirfd, []byte("cgroup.procs\x00"), syscall.O_RDONLY)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	pending := 0 // bytes of a pid cut by the previous read
	for {
		n, err := syscall.Read(fd, w.buf[pending:])
		if err == syscall.EINTR {
			continue
		}
		if errors.Is(err, syscall.EOPNOTSUPP) {
			w.markThreadedDomain(i)
			return
		}
		if err != nil {
			return // its processes are read from /proc
		}
		if n == 0 {
			break
		}
		b := w.buf[:pending+n]
		end := bytes.LastIndexByte(b, '\n')
		if end < 0 {
			if len(b) == len(w.buf) {
				return // not a pid list
			}
			pending = len(b)
			continue
		}
		w.place(b[:end+1], h, i)
		pending = copy(w.buf, b[end+1:])
	}
	w.place(w.buf[:pending], h, i)
	w.nodes[i].listed = true
}

// markThreadedDomain marks the nearest listed ancestor of node i, a threaded
// cgroup whose cgroup.procs the kernel refuses to show: that ancestor's list
// holds the processes of i as well.
func (w *cgroupWalk) markThreadedDomain(i int32) {
	for p := w.nodes[i].parent; p >= 0; p = w.nodes[p].parent {
		if w.nodes[p].listed {
			w.nodes[p].ambiguous = true
			return
		}
	}
}

// place records the pids of a cgroup.procs chunk as members of node i in
// hierarchy h. Pid 0 stands for a process outside our pid namespace.
func (w *cgroupWalk) place(b []byte, h int, i int32) {
	for len(b) > 0 {
		var line []byte
		line, b = fsio.NextLine(b)
		pid, ok := fsio.Atou(line)
		if !ok || pid == 0 || pid > math.MaxInt32 { // pid_max is at most 2^22
			continue
		}
		w.placing = append(w.placing, newPidPlace(int32(pid), int32(h), i))
	}
}

// sortPlaced turns the triples placed into the slots of each pid. The
// pids are counted first: placed grown by appending made four times its
// size at 2,500 processes, in pages that each fault in.
func (w *cgroupWalk) sortPlaced() {
	slices.Sort(w.placing)
	pids := 0
	for i, e := range w.placing {
		if i == 0 || w.placing[i-1].pid() != e.pid() {
			pids++
		}
	}
	w.placed = slices.Grow(w.placed, pids)
	for _, e := range w.placing {
		if n := len(w.placed); n == 0 || w.placed[n-1].pid != e.pid() {
			w.placed = append(w.placed, placedPID{pid: e.pid()})
		}
		slots := &w.placed[len(w.placed)-1].slots
		if h := e.h(); slots[h] == 0 {
			slots[h] = e.node() + 1
		} else {
			slots[h] = -1 // listed twice in one hierarchy
		}
	}
}

// slotsOf returns the slots of pid, none placed when no cgroup listed it.
// It looks at w.next first, the entry after the last answer's, and
// searches only when pid is not there: a scan asks in ascending pid
// order, and a search of every pid cost 0.5 ms at 2,500 processes, most
// of it cache misses.
func (w *cgroupWalk) slotsOf(pid int) cgroupSlots {
	i, ok := w.next, false
	switch {
	case i < len(w.placed) && int(w.placed[i].pid) == pid:
		ok = true
	case (i == 0 || int(w.placed[i-1].pid) < pid) && (i == len(w.placed) || int(w.placed[i].pid) > pid):
		// not listed, and the next pid asked is likely past it
	default:
		i, ok = slices.BinarySearchFunc(w.placed, pid, func(p placedPID, pid int) int { return cmp.Compare(int(p.pid), pid) })
	}
	if !ok {
		w.next = i
		return cgroupSlots{}
	}
	w.next = i + 1
	return w.placed[i].slots
}

// fill gives p the walked hierarchies' lines of its cgroup file, sharing
// one slice among the processes of the same cgroups (full, so that an
// append copies). False when the walk cannot vouch for p.
func (w *cgroupWalk) fill(p *procwalk.Process) bool {
	if !w.valid {
		return false
	}
	if lines, ok := w.late[p.ID]; ok {
		p.Cgroups = lines
		p.Read |= procwalk.FieldCgroup
		return true
	}
	if !w.placeByPID(p) {
		if w.stands && !w.othersMatter {
			// Its file is read: keep the lines for the walk's life
			// (keepLate). Where a hierarchy not walked may place it,
			// its file is read every gather: nothing watches those.
			if w.asked == nil {
				w.asked = make(map[procwalk.ProcID]bool)
			}
			w.asked[p.ID] = true
		}
		return false
	}
	return true
}

// placeByPID gives p the walked hierarchies' lines of the cgroups listing
// its pid; false when the walk cannot vouch for p.
func (w *cgroupWalk) placeByPID(p *procwalk.Process) bool {
	if p.ID.StartTicks >= w.walkTicks {
		return false // p may reuse the pid of a process listed
	}
	// A pid no cgroup.procs listed may still be placed, in hierarchies of
	// one cgroup alone (linesOf).
	slots := w.slotsOf(p.ID.PID)
	lines := w.lastLines
	if !w.lastOK || slots != w.lastSlots {
		var ok bool
		if lines, ok = w.lines[slots]; !ok {
			lines = w.linesOf(slots)
			w.lines[slots] = lines
		}
		w.lastSlots, w.lastLines, w.lastOK = slots, lines, true
	}
	if lines == nil {
		return false
	}
	if w.othersMatter && !p.Kernel && atRoot(lines) {
		return false // a hierarchy not walked may place it (membershipLine)
	}
	p.Cgroups = lines
	p.Read |= procwalk.FieldCgroup
	return true
}

// linesOf builds the lines of a pid placed in slots, nil when a hierarchy
// did not list it exactly once or listed it in a threaded domain.
func (w *cgroupWalk) linesOf(slots cgroupSlots) []procwalk.CgroupLine {
	for h, hi := range w.hiers {
		if hi.single {
			slots[h] = hi.top + 1
		}
		if slots[h] <= 0 || w.nodes[slots[h]-1].ambiguous {
			return nil
		}
	}
	lines := make([]procwalk.CgroupLine, len(w.hiers))
	for h, hi := range w.hiers {
		lines[h] = procwalk.CgroupLine{HierarchyID: hi.line.HierarchyID, Controllers: hi.line.Controllers, Path: w.nodes[slots[h]-1].path}
	}
	return lines
}

// atRoot reports whether every line is at the root cgroup.
func atRoot(lines []procwalk.CgroupLine) bool {
	for _, l := range lines {
		if l.Path != "/" {
			return false
		}
	}
	return true
}

// keepLate keeps, for the standing walk, the cgroup lines this gather's
// scan read of the processes the walk did not place, and drops those of
// processes gone.
func (w *cgroupWalk) keepLate(s *procwalk.Snapshot) {
	if !w.stands {
		clear(w.late)
		return
	}
	next := w.spareLate
	if next == nil {
		next = make(map[procwalk.ProcID][]procwalk.CgroupLine)
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		if lines, ok := w.late[p.ID]; ok {
			next[p.ID] = lines
		} else if w.asked[p.ID] && p.Read&procwalk.FieldCgroup != 0 {
			next[p.ID] = p.Cgroups
		}
	}
	clear(w.late)
	w.late, w.spareLate = next, w.late
	if len(w.late) > maxLate(len(s.Procs)) {
		// Many processes started since the walk (a fork storm, a batch
		// of jobs): a new walk places them by pid again, for less CPU
		// and memory than a file and lines kept for each.
		w.stands = false
	}
}

// maxLate bounds the processes a standing walk keeps by identity, on a
// host of n processes: a sixteenth of them, at least 64.
func maxLate(n int) int { return max(64, n/16) }
