package procwalk

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// session_group.go holds the Grouper: it runs the kinds over a Snapshot and
// keeps the cumulative counters from one gather to the next.

// Grouper builds sessions from Snapshots. It remembers the members of each
// session between calls so cumulative counters never go backwards; the
// caller owns it, one per stream of snapshots. Not safe for concurrent use.
type Grouper struct {
	fs    FS
	cfg   GroupConfig
	kinds map[string]bool
	cum   cumulative
	pods  map[string]podMeta // pod uid -> name and namespace, read once
	// agentCache maps the names a process is matched by to its agent rule.
	agentCache map[agentKey]int16
	// agentNames keeps agent names stable across gathers (session_sticky.go).
	agentNames stickyNames
	// agents follows agent sessions over time (agent_status.go).
	agents    agentTracker
	tmuxNames map[tmuxNameKey]string // tmux names, likewise (session_tmux.go)
	// environ holds what the tmux environ backstop read of each process
	// still alive, so each is read once in its life.
	environ      map[ProcID]tmuxEnv
	environLimit int // reads a gather: maxEnvironReads (tests lower it)
	// environs reads environ files, each read bounded.
	environs   *environReader
	prefetched chan tmuxAnswer // set by Prefetch, taken by Group
	// cgroups places processes in cgroups from cgroupfs for the scan of
	// Scan, sparing most processes' /proc/<pid>/cgroup (cgroup_walk.go).
	cgroups cgroupWalk
}

// NewGrouper checks cfg and returns a Grouper reading extra per-process files
// (environ, a container's /etc/hostname) under fs when a kind needs them.
func NewGrouper(fs FS, cfg GroupConfig) (*Grouper, error) {
	g := &Grouper{fs: fs, cfg: cfg, kinds: make(map[string]bool), environLimit: maxEnvironReads,
		environs: &environReader{fs: fs, timeout: DefaultReadTimeout}}
	for _, k := range cfg.Kinds {
		if !slices.Contains(Kinds(), k) {
			return nil, fmt.Errorf("%w: %w %q: kinds are %s", ErrBadConfig, ErrUnknownKind, k, strings.Join(Kinds(), ", "))
		}
		g.kinds[k] = true
	}
	if len(cfg.Kinds) == 0 {
		for _, k := range Kinds() {
			g.kinds[k] = true
		}
	}
	if g.cfg.CgroupRoot == "" {
		g.cfg.CgroupRoot = DefaultCgroupRoot
	}
	if g.cfg.DangerPercent == 0 {
		g.cfg.DangerPercent = defaultDangerPercent
	}
	if err := CheckDangerPercent(g.cfg.DangerPercent); err != nil {
		return nil, fmt.Errorf("%w: danger threshold %v: %w", ErrBadConfig, cfg.DangerPercent, err)
	}
	if g.cfg.Agents == nil {
		g.cfg.Agents = DefaultAgents()
	}
	for i, r := range g.cfg.Agents {
		if r.Name == "" || r.Match == nil {
			return nil, fmt.Errorf("%w: agent rule %d needs a name and a regex", ErrBadConfig, i+1)
		}
		if r.Transcript != nil {
			if err := r.Transcript.check(); err != nil {
				return nil, fmt.Errorf("%w: agent %s transcript: %w", ErrBadConfig, r.Name, err)
			}
		}
	}
	if err := cfg.AgentStatus.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	for i, r := range g.cfg.Groups {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%w: group rule %d: %w", ErrBadConfig, i+1, err)
		}
	}
	for i, t := range g.cfg.Trees {
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("%w: tree %d: %w", ErrBadConfig, i+1, err)
		}
	}
	return g, nil
}

// CheckDangerPercent says what is wrong with a danger threshold, or nil:
// the one check of the flag, the Telegraf option and GroupConfig (where 0
// stands for the default). NaN is no percentage either.
func CheckDangerPercent(p float64) error {
	if !(p > 0 && p <= 100) {
		return errors.New("want a percentage above 0, at most 100")
	}
	return nil
}

// defaultDangerPercent of a cgroup limit marks a session in danger: close
// enough to the limit that the OOM killer or CPU throttling is near.
const defaultDangerPercent = 80

// Fields returns the optional fields the configured kinds read from every
// process. Kinds that need a file only for some processes ask for it
// through Selector: agents the cmdline of interpreters, cgroups the cgroup
// file of the processes Scan's walk of cgroupfs did not place. Scan uses
// both. Group works with fewer fields, leaving the sessions that need them
// empty and saying so in a note.
func (g *Grouper) Fields() Fields {
	var f Fields
	if g.kinds[KindUser] {
		f |= FieldStatus
	}
	if g.kinds[KindTree] {
		for _, t := range g.cfg.Trees {
			if t.Pattern != nil {
				f |= FieldCmdline
			}
		}
	}
	if g.kinds[KindGroup] {
		for _, r := range g.cfg.Groups {
			f |= r.fields()
		}
	}
	return f
}

// Selector picks the files the configured kinds read only for some
// processes: the cmdline of possible agents (see agentNeedsCmdline), and
// the cgroup file of a process that Scan's walk of cgroupfs did not place.
// Outside Scan there is no walk, and the cgroup file is read for every
// process.
func (g *Grouper) Selector() Selector {
	agents, cgroups := g.kinds[KindAgent], g.kinds[KindCgroup]
	sel := Selector{Fields: g.selectedFields()}
	if sel.Fields == 0 {
		return sel
	}
	sel.Select = func(p *Process) Fields {
		var f Fields
		if agents && agentNeedsCmdline(p) {
			f |= FieldCmdline
		}
		if cgroups && !g.cgroups.fill(p) {
			f |= FieldCgroup
		}
		return f
	}
	return sel
}

// selectedFields are the fields Selector may select.
func (g *Grouper) selectedFields() Fields {
	var f Fields
	if g.kinds[KindAgent] {
		f |= FieldCmdline
	}
	if g.kinds[KindCgroup] {
		f |= FieldCgroup
	}
	return f
}

// Plan is the Grouper's part of a Monitor's plan (Stage): the fields the
// kinds read from every process (Fields) and the Selector of those read
// from some.
func (g *Grouper) Plan() (Fields, Selector) { return g.Fields(), g.Selector() }

// Prepare readies a Monitor's scan of fields for grouping (Stage): tmux is
// asked while /proc is read (Prefetch), and with the cgroup kind cgroupfs
// is walked first (cgroup_walk.go): a process placed there gets the lines
// of its cgroup file for the hierarchies the kind reads (name=systemd,
// memory and cpu on v1, the v2 one), and only the others have their file
// read. A scan of FieldCgroup reads the whole file of every process, and no
// walk is made.
func (g *Grouper) Prepare(fields Fields) (done func()) {
	g.Prefetch()
	if g.kinds[KindCgroup] && fields&FieldCgroup == 0 {
		g.cgroups.run(g.fs, g.cfg.CgroupRoot)
		return g.cgroups.done
	}
	return nil
}

// Group builds the sessions of s: by kind in Kinds() order, then by name
// (agents: oldest first). Notes say what could not be done (no tmux server,
// a field not read, a cgroupfs not mounted) without being errors. tmux is
// asked while the other kinds are grouped (or earlier, see Prefetch).
func (g *Grouper) Group(s *Snapshot) (sessions []Session, notes []string) {
	var n noteList
	if missing := (g.Fields() | g.selectedFields()) &^ (s.Fields | s.Selected); missing != 0 {
		n.addf("the snapshot lacks fields %s: sessions that need them are missing or incomplete", missing)
	}
	tmux := g.prefetched
	g.prefetched = nil
	if tmux == nil && (g.kinds[KindTmux] || g.kinds[KindAgent]) {
		tmux = make(chan tmuxAnswer, 1)
		go func() { tmux <- g.askTmux() }()
	}
	byKind := map[string][]Session{}
	if g.kinds[KindSID] {
		byKind[KindSID] = groupByNumber(s, KindSID, func(p *Process) int { return p.SID })
	}
	if g.kinds[KindPGRP] {
		byKind[KindPGRP] = groupByNumber(s, KindPGRP, func(p *Process) int { return p.PGRP })
	}
	if g.kinds[KindTTY] {
		byKind[KindTTY] = groupTTY(s)
	}
	if g.kinds[KindTree] {
		byKind[KindTree] = g.groupTrees(s, &n)
	}
	if g.kinds[KindCgroup] && (s.Fields|s.Selected)&FieldCgroup != 0 {
		byKind[KindCgroup] = g.groupCgroups(s, &n)
	}
	if g.kinds[KindUser] && s.Fields&FieldStatus != 0 {
		byKind[KindUser] = g.groupUsers(s)
	}
	if g.kinds[KindGroup] && len(g.cfg.Groups) > 0 {
		byKind[KindGroup] = groupRules(s, g.cfg.Groups)
	}
	var panes paneIndex
	if tmux != nil {
		a := <-tmux
		for _, note := range a.notes.list {
			n.addf("%s", note)
		}
		var ts []Session
		ts, panes = g.groupTmux(s, a.servers, &n)
		if g.kinds[KindTmux] {
			byKind[KindTmux] = ts
		}
	}
	if g.kinds[KindAgent] {
		byKind[KindAgent] = g.groupAgents(s, panes)
	}
	for _, k := range Kinds() {
		sessions = append(sessions, byKind[k]...)
	}
	g.cum.update(s, sessions)
	if g.kinds[KindAgent] {
		sessions = g.updateAgents(s, sessions)
	}
	return sessions, n.list
}

// Group is a one-off NewGrouper(fs, cfg) and Group(s): cumulative counters
// then equal the members' current counters.
func Group(fs FS, s *Snapshot, cfg GroupConfig) ([]Session, []string, error) {
	g, err := NewGrouper(fs, cfg)
	if err != nil {
		return nil, nil, err
	}
	sessions, notes := g.Group(s)
	return sessions, notes, nil
}

// noteList collects notes without repeating one.
type noteList struct{ list []string }

func (n *noteList) addf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(n.list, msg) {
		n.list = append(n.list, msg)
	}
}

// builder assigns the processes of a snapshot to the sessions of one kind
// and then computes members, roots and totals in one pass.
type builder struct {
	s    *Snapshot
	kind string
	of   []int32 // session index of each process, -1 for none
	sess []Session
}

func newBuilder(s *Snapshot, kind string) *builder {
	of := make([]int32, len(s.Procs))
	for i := range of {
		of[i] = -1
	}
	return &builder{s: s, kind: kind, of: of}
}

// add starts a session and returns its index.
func (b *builder) add(name string, attrs map[string]string) int32 {
	b.sess = append(b.sess, Session{Kind: b.kind, Name: name, Attrs: attrs})
	return int32(len(b.sess) - 1)
}

// assignTree puts process i and every descendant not yet assigned into
// session si.
func (b *builder) assignTree(i int32, si int32) {
	s := b.s
	if b.of[i] >= 0 || s.Procs[i].Kernel {
		return
	}
	b.of[i] = si
	for c := s.firstChild[i]; c >= 0; c = s.nextSibling[c] {
		b.assignTree(c, si)
	}
}

// finish fills Members, Roots and Totals and drops empty sessions.
func (b *builder) finish() []Session {
	s := b.s
	counts := make([]int, len(b.sess))
	for _, si := range b.of {
		if si >= 0 {
			counts[si]++
		}
	}
	for i := range b.sess {
		b.sess[i].Members = make([]ProcID, 0, counts[i])
		b.sess[i].index = make([]int32, 0, counts[i])
	}
	for i, si := range b.of {
		if si < 0 {
			continue
		}
		p := &s.Procs[i]
		ss := &b.sess[si]
		ss.Members = append(ss.Members, p.ID)
		ss.index = append(ss.index, int32(i))
		if par := s.parent[i]; par < 0 || b.of[par] != si {
			ss.Roots = append(ss.Roots, p.ID)
		}
		ss.Totals.add(p)
	}
	out := b.sess[:0]
	for _, ss := range b.sess {
		if len(ss.Members) > 0 {
			out = append(out, ss)
		}
	}
	return out
}

// add counts p in the session totals.
func (t *SessionTotals) add(p *Process) {
	t.Totals.Add(p)
	if t.OldestStart.IsZero() || p.Start.Before(t.OldestStart) {
		t.OldestStart = p.Start
	}
	if p.Rates.Measured {
		t.RSSGrowthBytesPerMinute += p.Rates.RSSGrowthBytesPerMinute
		if p.Rates.HaveSmaps {
			t.PSSGrowthBytesPerMinute += p.Rates.PSSGrowthBytesPerMinute
		}
	}
}

// groupByNumber builds one session per value of key (sid, pgrp), named by
// the number, with the leader's comm when the leader is alive.
func groupByNumber(s *Snapshot, kind string, key func(*Process) int) []Session {
	b := newBuilder(s, kind)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		k := key(p)
		if p.Kernel || k <= 0 {
			continue
		}
		si, ok := index[k]
		if !ok {
			attrs := map[string]string{}
			if leader := s.Process(k); leader != nil && !leader.Kernel {
				attrs[AttrLeader] = leader.Comm
			}
			if p.TTY != 0 {
				attrs[AttrTTY] = TTYName(p.TTY)
			}
			si = b.add(strconv.Itoa(k), attrs)
			index[k] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}

// groupTTY builds one session per controlling terminal.
func groupTTY(s *Snapshot) []Session {
	b := newBuilder(s, KindTTY)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.TTY == 0 {
			continue
		}
		si, ok := index[p.TTY]
		if !ok {
			si = b.add(TTYName(p.TTY), map[string]string{})
			index[p.TTY] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}

// groupUsers builds one session per real uid.
func (g *Grouper) groupUsers(s *Snapshot) []Session {
	b := newBuilder(s, KindUser)
	index := make(map[int]int32)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || p.Read&FieldStatus == 0 {
			continue
		}
		si, ok := index[p.RealUID]
		if !ok {
			uid := strconv.Itoa(p.RealUID)
			name := g.cfg.Users.Name(p.RealUID)
			si = b.add(name, map[string]string{AttrUser: name, AttrUID: uid})
			index[p.RealUID] = si
		}
		b.of[i] = si
	}
	return sortByName(b.finish())
}

// sortByName orders sessions by name: numbers first, in numeric order
// (sid, pgrp, unnamed uids), then the rest in byte order. Each name is
// parsed once: a host has thousands of sid and pgrp sessions.
func sortByName(ss []Session) []Session {
	byName := sessionsByName{ss: ss, num: make([]int, len(ss)), isNum: make([]bool, len(ss))}
	for i := range ss {
		n, err := strconv.Atoi(ss[i].Name)
		byName.num[i], byName.isNum[i] = n, err == nil
	}
	sort.Sort(byName)
	return ss
}

// sessionsByName sorts sessions with their names' numeric values.
type sessionsByName struct {
	ss    []Session
	num   []int
	isNum []bool
}

func (x sessionsByName) Len() int { return len(x.ss) }

func (x sessionsByName) Less(i, j int) bool {
	switch {
	case x.isNum[i] && x.isNum[j]:
		return x.num[i] < x.num[j]
	case x.isNum[i] != x.isNum[j]:
		return x.isNum[i]
	}
	return CompareNatural(x.ss[i].Name, x.ss[j].Name) < 0
}

// CompareNatural orders names as people count: digit runs by their value,
// so pwload-2 comes before pwload-10; the rest byte by byte.
func CompareNatural(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the length of the ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func (x sessionsByName) Swap(i, j int) {
	x.ss[i], x.ss[j] = x.ss[j], x.ss[i]
	x.num[i], x.num[j] = x.num[j], x.num[i]
	x.isNum[i], x.isNum[j] = x.isNum[j], x.isNum[i]
}

// TTYName names a tty_nr as the kernel's devices do: "pts/3", "tty1",
// "ttyS0", or "tty<major>:<minor>" for other drivers.
func TTYName(ttyNr int) string {
	// tty_nr packs the device number: major in bits 8-15, minor in bits 0-7
	// and 20-31 (new_encode_dev).
	major := (ttyNr >> 8) & 0xfff
	minor := (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00)
	switch {
	case major >= 136 && major <= 143: // UNIX98_PTY_SLAVE_MAJOR and its 7 successors
		return "pts/" + strconv.Itoa((major-136)<<8|minor)
	case major == 4 && minor < 64: // virtual consoles
		return "tty" + strconv.Itoa(minor)
	case major == 4: // 8250 serial ports start at minor 64
		return "ttyS" + strconv.Itoa(minor-64)
	case major == 5 && minor == 1:
		return "console"
	}
	return "tty" + strconv.Itoa(major) + ":" + strconv.Itoa(minor)
}
