//go:build linux

package session

import (
	"slices"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// session_cgroup.go groups processes by cgroup: one session per Kubernetes
// pod, systemd unit, or plain cgroup path (see cgroup_path.go), with usage
// and limits from cgroupfs (cgroupfs.go).

// membershipLine picks the line of /proc/<pid>/cgroup that places a process:
// the first line not at the root "/" of, in order, systemd's named v1
// hierarchy (it holds every process in its unit), the v1 memory controller,
// the v2 hierarchy, the v1 cpu controller, any other; "/" when all are.
func membershipLine(lines []procwalk.CgroupLine) (procwalk.CgroupLine, bool) {
	switch len(lines) {
	case 0:
		return procwalk.CgroupLine{}, false
	case 1:
		return lines[0], true
	}
	rank := func(l procwalk.CgroupLine) int {
		switch {
		case l.Controllers == "name=systemd":
			return 0
		case procwalk.HasController(l.Controllers, "memory"):
			return 1
		case l.HierarchyID == 0:
			return 2
		case procwalk.HasController(l.Controllers, "cpu"):
			return 3
		}
		return 4
	}
	best := -1
	for i, l := range lines {
		if l.Path == "/" || l.Path == "" {
			continue
		}
		if best < 0 || rank(l) < rank(lines[best]) {
			best = i
		}
	}
	if best < 0 {
		return procwalk.CgroupLine{HierarchyID: lines[0].HierarchyID, Controllers: lines[0].Controllers, Path: "/"}, true
	}
	return lines[best], true
}

// controllerLine returns the v1 line of a controller, if the process has one.
func controllerLine(lines []procwalk.CgroupLine, c string) (procwalk.CgroupLine, bool) {
	for _, l := range lines {
		if l.HierarchyID != 0 && procwalk.HasController(l.Controllers, c) {
			return l, true
		}
	}
	return procwalk.CgroupLine{}, false
}

type podMeta struct{ name, namespace string }

// maxPodMeta bounds the pod name cache: pods come and go.
const maxPodMeta = 4096

// KindCgroup is a systemd unit, a Kubernetes pod or a cgroup path.
const KindCgroup = "cgroup"

// cgroupKind keeps the names of pods between gathers.
type cgroupKind struct {
	pods map[string]podMeta // pod uid -> name and namespace, read once
}

func (*cgroupKind) name() string { return KindCgroup }

// plan: the cgroup file of the processes that Scan's walk of cgroupfs did
// not place (every process outside Scan, which makes no walk).
func (*cgroupKind) plan(g *Grouper) kindPlan {
	return kindPlan{some: procwalk.FieldCgroup, pick: func(p *procwalk.Process) procwalk.Fields {
		if g.cgroups.fill(p) {
			return 0
		}
		return procwalk.FieldCgroup
	}}
}

// prepare walks cgroupfs before a Monitor's scan (cgroup_walk.go): a
// process placed there gets the lines of its cgroup file for the
// hierarchies the kind reads (name=systemd, memory and cpu on v1, the v2
// one), and only the others have their file read. A scan of FieldCgroup
// reads the whole file of every process, and no walk is made.
func (*cgroupKind) prepare(g *Grouper, fields procwalk.Fields) func() {
	if fields&procwalk.FieldCgroup != 0 {
		return nil
	}
	g.cgroups.run(g.fs, g.cfg.CgroupRoot)
	return g.cgroups.done
}

// tagAttrs: where the session runs.
func (*cgroupKind) tagAttrs() []string { return []string{AttrPod, AttrNamespace, AttrUnit} }

func (*cgroupKind) numberAttrs() []string { return nil }

// info: "pod default/web, burstable", or the unit when it is not the name,
// then the limits (CgroupUsage.Describe).
func (*cgroupKind) info(s *Session) []string {
	a := s.Attrs
	var parts []string
	if uid := a[AttrPodUID]; uid != "" {
		pod := a[AttrPod]
		if ns := a[AttrNamespace]; ns != "" {
			pod = ns + "/" + pod
		}
		if pod != "" {
			parts = append(parts, "pod "+pod)
		}
		parts = append(parts, a[AttrQoS])
	} else if u := a[AttrUnit]; u != "" && u != s.Name {
		parts = append(parts, u)
	}
	return append(parts, s.Totals.Cgroup.Describe()...)
}

// group builds one session per cgroup that a systemd unit, a pod or a path
// names; none when the snapshot lacks cgroup files (Group notes it).
func (k *cgroupKind) group(x *grouping) []Session {
	if (x.s.Fields|x.s.Selected)&procwalk.FieldCgroup == 0 {
		return nil
	}
	x.g.cgroups.keepLate(x.s)
	return k.groupCgroups(x.g, x.s, x.notes)
}

// Describe says how a cgroup session uses its limits, in parts: "mem 90.0%
// of 512.0 MiB", "cpu 0.40 of 0.50 cores", "DANGER". None for nil.
func (u *CgroupUsage) Describe() []string {
	if u == nil {
		return nil
	}
	percent := func(p float64) string { return strconv.FormatFloat(p, 'f', 1, 64) }
	var parts []string
	switch {
	case u.MemoryLimitBytes > 0 && u.HaveMemoryUsage:
		parts = append(parts, "mem "+percent(u.MemoryPercent)+"% of "+procwalk.FormatBytes(u.MemoryLimitBytes))
	case u.MemoryLimitBytes > 0:
		parts = append(parts, "mem limit "+procwalk.FormatBytes(u.MemoryLimitBytes))
	case u.HaveMemoryUsage:
		parts = append(parts, "mem "+procwalk.FormatBytes(u.MemoryUsageBytes)+", no limit")
	}
	if u.CPUQuotaCores > 0 {
		used := "?"
		if u.CPUCoresUsed > 0 || u.CPUQuotaPercent > 0 {
			used = strconv.FormatFloat(u.CPUCoresUsed, 'f', 2, 64)
		}
		parts = append(parts, "cpu "+used+" of "+strconv.FormatFloat(u.CPUQuotaCores, 'f', 2, 64)+" cores")
	}
	if u.Danger {
		parts = append(parts, "DANGER")
	}
	return parts
}

func (k *cgroupKind) groupCgroups(g *Grouper, s *procwalk.Snapshot, n *noteList) []Session {
	b := newBuilder(s, KindCgroup)
	type placed struct {
		place cgroupPlace
		first int // a member, whose lines locate the controllers' directories
		ids   []string
	}
	byPath := map[string]int32{} // membership path -> session
	byName := map[string]int32{} // session name -> session
	var places []placed
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.Read&procwalk.FieldCgroup == 0 {
			continue
		}
		line, ok := membershipLine(p.Cgroups)
		if !ok {
			continue
		}
		si, ok := byPath[line.Path]
		if !ok {
			pl := placeCgroup(line.Path)
			si, ok = byName[pl.name]
			if ok && places[si].place.dir != pl.dir {
				// The same unit name in two places (user units of two
				// users): name both by their directories.
				other := &places[si]
				if other.place.name != other.place.dir {
					delete(byName, other.place.name)
					other.place.name = other.place.dir
					b.sess[si].Name = other.place.dir
					byName[other.place.dir] = si
				}
				pl.name = pl.dir
				si, ok = byName[pl.name]
			}
			if !ok {
				si = b.add(pl.name, cgroupAttrs(pl))
				byName[pl.name] = si
				places = append(places, placed{place: pl, first: i})
			}
			byPath[line.Path] = si
			if id := pl.containerID; id != "" && !slices.Contains(places[si].ids, id) {
				places[si].ids = append(places[si].ids, id)
			}
		}
		b.of[i] = si
	}
	for si := range places {
		if ids := places[si].ids; len(ids) > 0 {
			slices.Sort(ids)
			b.sess[si].Attrs[AttrContainerID] = strings.Join(ids, ",")
		}
	}
	sessions := b.finish() // keeps order; drops none here (every session has a member)

	cfs := newCgroupFS(g.cfg.CgroupRoot)
	mounted := cfs.mounted()
	if !mounted {
		n.addf("cgroup: no cgroupfs at %s: limits and usage unknown (pass the cgroupfs root)", g.cfg.CgroupRoot)
	}
	for si := range sessions {
		ss := &sessions[si]
		pl := places[si].place
		first := &s.Procs[places[si].first]
		line, _ := membershipLine(first.Cgroups)
		if line.HierarchyID == 0 {
			ss.Attrs[AttrCgroupVer] = "2"
		} else {
			ss.Attrs[AttrCgroupVer] = "1"
		}
		if pl.podUID != "" {
			k.addPodMeta(g.fs, s, ss, pl.podUID)
		}
		if mounted {
			ss.Totals.Cgroup = g.cgroupUsage(cfs, first.Cgroups, line, pl, &ss.Totals)
		}
	}
	return sortByName(sessions)
}

// cgroupUsage reads the usage and limits of a session placed at pl, from
// the cgroup lines of one member (line is its membership line), and
// derives memory %, cores used against the quota and danger. nil when the
// session's own cgroup is not in cgroupfs.
func (g *Grouper) cgroupUsage(cfs *cgroupFS, lines []procwalk.CgroupLine, line procwalk.CgroupLine, pl cgroupPlace, t *Totals) *CgroupUsage {
	var memDir, memCtl, cpuDir, cpuCtl string
	if line.HierarchyID == 0 {
		memDir, cpuDir = pl.dir, pl.dir
	} else {
		if l, ok := controllerLine(lines, "memory"); ok {
			memDir, memCtl = sameSessionDir(l.Path, pl), l.Controllers
		}
		if l, ok := controllerLine(lines, "cpu"); ok {
			cpuDir, cpuCtl = sameSessionDir(l.Path, pl), l.Controllers
		}
	}
	u, ok := cfs.usage(memDir, memCtl, cpuDir, cpuCtl)
	if !ok {
		return nil
	}
	if u.MemoryLimitBytes > 0 && u.HaveMemoryUsage {
		u.MemoryPercent = float64(u.MemoryUsageBytes) / float64(u.MemoryLimitBytes) * 100
	}
	if t.RatesMeasured > 0 {
		u.CPUCoresUsed = t.CPUPercent / 100
		if u.CPUQuotaCores > 0 {
			u.CPUQuotaPercent = u.CPUCoresUsed / u.CPUQuotaCores * 100
		}
	}
	u.Danger = u.MemoryPercent >= g.cfg.DangerPercent || u.CPUQuotaPercent >= g.cfg.DangerPercent
	return &u
}

// sameSessionDir returns the directory of a session in another hierarchy:
// the v1 memory or cpu path of a member names the same pod or unit there, or
// it is in a parent cgroup (no accounting for that unit), which is not the
// session's and yields "".
func sameSessionDir(path string, pl cgroupPlace) string {
	if other := placeCgroup(path); other.name == pl.name || other.dir == pl.dir {
		return other.dir
	}
	return ""
}

func cgroupAttrs(pl cgroupPlace) map[string]string {
	a := map[string]string{AttrCgroup: pl.dir}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(AttrUnit, pl.unit)
	set(AttrSlice, pl.slice)
	set(AttrPodUID, pl.podUID)
	if pl.podUID != "" {
		set(AttrQoS, pl.qos)
	}
	return a
}

// maxPodFile bounds the read of a pod's hostname and namespace files: a
// name is at most 253 bytes (DNS).
const maxPodFile = 4096

// addPodMeta sets the pod's name and namespace, read from inside one of its
// containers: the kubelet mounts the pod name as /etc/hostname and, with a
// service account, the namespace under /var/run/secrets. Needs root; cached
// per pod uid, failures too.
func (k *cgroupKind) addPodMeta(fs procwalk.FS, s *procwalk.Snapshot, ss *Session, uid string) {
	if k.pods == nil || len(k.pods) > maxPodMeta {
		k.pods = make(map[string]podMeta)
	}
	meta, ok := k.pods[uid]
	if !ok {
		tries := 0
		for _, id := range ss.Members {
			p := s.Lookup(id)
			if p == nil || p.Comm == "pause" || p.Zombie() {
				continue // the pause container has no /etc/hostname
			}
			if tries++; tries > 3 {
				break
			}
			// Files in a container's root are the container's: read as
			// files another user controls (no FIFO waited on), their links
			// resolved inside that root, never to the host's files.
			root := fs.Path(strconv.Itoa(id.PID), "root")
			if b, err := fsio.ReadUserFileIn(root, "etc/hostname", fsio.AnyOwner, maxPodFile); err == nil {
				meta.name = strings.TrimSpace(string(b))
				if b, err := fsio.ReadUserFileIn(root, "var/run/secrets/kubernetes.io/serviceaccount/namespace", fsio.AnyOwner, maxPodFile); err == nil {
					meta.namespace = strings.TrimSpace(string(b))
				}
				break
			}
		}
		k.pods[uid] = meta
	}
	if meta.name != "" {
		ss.Attrs[AttrPod] = meta.name
	}
	if meta.namespace != "" {
		ss.Attrs[AttrNamespace] = meta.namespace
	}
}

// CgroupSession returns the directory of the cgroup session a process
// with these cgroup lines belongs to, as Group places it (its pod, its
// innermost systemd unit, or its cgroup path), and the line that places
// it. ok is false without lines. A killer of a cgroup session asks it of
// every process, to follow the session's membership while it acts.
func CgroupSession(lines []procwalk.CgroupLine) (dir string, line procwalk.CgroupLine, ok bool) {
	line, ok = membershipLine(lines)
	if !ok {
		return "", line, false
	}
	return placeCgroup(line.Path).dir, line, true
}

// CgroupSessionDir is the directory of the session that a process in the
// cgroup at path belongs to: the cgroup's pod, innermost unit, or path.
func CgroupSessionDir(path string) string { return placeCgroup(path).dir }
