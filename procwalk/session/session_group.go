//go:build linux

package session

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// session_group.go holds the Grouper: it runs the kinds over a Snapshot and
// keeps the cumulative counters from one gather to the next.

// Grouper builds sessions from Snapshots. It remembers the members of each
// session between calls so cumulative counters never go backwards; the
// caller owns it, one per stream of snapshots. Not safe for concurrent use.
type Grouper struct {
	fs procwalk.FS
	// liveFS says fs is the procfs this process runs in (live), looked at
	// once: it holds for the Grouper's life.
	liveFS bool
	cfg    Config
	// kinds are the configured kinds, each a value of its own (kindTable),
	// in the order Group reports them; plans are what each reads, worked
	// out once (the configuration does not change).
	kinds []sessionKind
	plans []kindPlan
	cum   cumulative
	// tmux is what the tmux and agent kinds share: the answer of the tmux
	// servers and the memory of tmux names (session_tmux.go).
	tmux tmuxState
	// environs reads environ files (tmux's backstop, an agent's HOME),
	// each read bounded.
	environs *procwalk.EnvironReader
	// cgroups places processes in cgroups from cgroupfs for the scan of
	// Scan, sparing most processes' /proc/<pid>/cgroup (cgroup_walk.go).
	cgroups cgroupWalk
}

// NewGrouper checks cfg and returns a Grouper reading extra per-process files
// (environ, a container's /etc/hostname) under fs when a kind needs them.
func NewGrouper(fs procwalk.FS, cfg Config) (*Grouper, error) {
	liveFS := ownProcFS(fs)
	g := &Grouper{fs: fs, liveFS: liveFS, cfg: cfg, tmux: tmuxState{environLimit: maxEnvironReads, cacheable: liveFS, settleWait: tmuxSettleTimeout},
		environs: procwalk.NewEnvironReader(fs, procwalk.DefaultReadTimeout)}
	g.tmux.readServer = func(pid int) (tmuxServerState, error) { return readTmuxServer(fs, pid) }
	for _, k := range cfg.Kinds {
		if !slices.Contains(Kinds(), k) {
			return nil, fmt.Errorf("%w: %w %q: kinds are %s", ErrBadConfig, ErrUnknownKind, k, strings.Join(Kinds(), ", "))
		}
	}
	for _, k := range kindTable() {
		if len(cfg.Kinds) == 0 || slices.Contains(cfg.Kinds, k.name()) {
			g.kinds = append(g.kinds, k)
		}
	}
	if g.cfg.CgroupRoot == "" {
		g.cfg.CgroupRoot = DefaultCgroupRoot
	}
	if g.cfg.DangerPercent == 0 {
		g.cfg.DangerPercent = DefaultDangerPercent
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
	g.cfg.AgentStatus = cfg.AgentStatus.withDefaults() // once, not every gather
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
	for i, r := range g.cfg.Fold {
		if err := r.checkKind(); err != nil {
			return nil, fmt.Errorf("%w: fold rule %d: %w", ErrBadConfig, i+1, err)
		}
		if r.Match == nil || strings.TrimSpace(r.Name) == "" {
			return nil, fmt.Errorf("%w: fold rule %d needs a name and a regex", ErrBadConfig, i+1)
		}
	}
	for _, k := range g.kinds {
		g.plans = append(g.plans, k.plan(g))
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

// DefaultDangerPercent of a cgroup limit marks a session in danger: close
// enough to the limit that the OOM killer or CPU throttling is near.
const DefaultDangerPercent = 80

// Fields returns the optional fields the configured kinds read from every
// process. Kinds that need a file only for some processes ask for it
// through Selector: agents the cmdline of interpreters, cgroups the cgroup
// file of the processes Scan's walk of cgroupfs did not place. Scan uses
// both. Group works with fewer fields, leaving the sessions that need them
// empty and saying so in a note.
func (g *Grouper) Fields() procwalk.Fields {
	var f procwalk.Fields
	for _, p := range g.plans {
		f |= p.every
	}
	return f
}

// Selector picks the files the configured kinds read only for some
// processes: the cmdline of possible agents (see agentNeedsCmdline), and
// the cgroup file of a process that Scan's walk of cgroupfs did not place.
// Outside Scan there is no walk, and the cgroup file is read for every
// process.
func (g *Grouper) Selector() procwalk.Selector {
	var picks []func(*procwalk.Process) procwalk.Fields
	var sel procwalk.Selector
	for _, p := range g.plans {
		if p.some != 0 {
			sel.Fields |= p.some
			picks = append(picks, p.pick)
		}
	}
	if sel.Fields == 0 {
		return sel
	}
	sel.Select = func(p *procwalk.Process) procwalk.Fields {
		var f procwalk.Fields
		for _, pick := range picks {
			f |= pick(p)
		}
		return f
	}
	return sel
}

// selectedFields are the fields Selector may select.
func (g *Grouper) selectedFields() procwalk.Fields {
	var f procwalk.Fields
	for _, p := range g.plans {
		f |= p.some
	}
	return f
}

// asksTmux reports whether a configured kind needs tmux's panes.
func (g *Grouper) asksTmux() bool {
	return slices.ContainsFunc(g.plans, func(p kindPlan) bool { return p.tmux })
}

// Plan is the Grouper's part of a Monitor's plan (Stage): the fields the
// kinds read from every process (Fields) and the Selector of those read
// from some.
func (g *Grouper) Plan() (procwalk.Fields, procwalk.Selector) { return g.Fields(), g.Selector() }

// Prepare readies a Monitor's scan of fields for grouping (Stage): tmux is
// asked while /proc is read (Prefetch), and kinds prepare what they read
// around the scan: the cgroup kind walks cgroupfs first (session_cgroup.go).
func (g *Grouper) Prepare(fields procwalk.Fields) (done func()) {
	g.Prefetch()
	var dones []func()
	for _, k := range g.kinds {
		if p, ok := k.(kindPreparer); ok {
			if d := p.prepare(g, fields); d != nil {
				dones = append(dones, d)
			}
		}
	}
	switch len(dones) {
	case 0:
		return nil
	case 1:
		return dones[0]
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

// Group builds the sessions of s: by kind in Kinds() order, then by name
// (agents: oldest first). Notes say what could not be done (no tmux server,
// a field not read, a cgroupfs not mounted) without being errors. tmux is
// asked while the other kinds are grouped (or earlier, see Prefetch).
func (g *Grouper) Group(s *procwalk.Snapshot) (sessions []Session, notes []string) {
	g.cfg.Users.Refresh() // a user added or renamed since the last gather (see Users)
	var n noteList
	if missing := (g.Fields() | g.selectedFields()) &^ (s.Fields | s.Selected); missing != 0 {
		n.addf("the snapshot lacks fields %s: sessions that need them are missing or incomplete", missing)
	}
	x := &grouping{g: g, s: s, notes: &n, tmuxAnswer: g.tmux.prefetched}
	g.tmux.prefetched = nil
	if x.tmuxAnswer == nil && g.asksTmux() {
		x.tmuxAnswer = make(chan tmuxAnswer, 1)
		known := g.knownAnswers()
		go func() { x.tmuxAnswer <- g.askTmux(known) }()
	}
	// Kinds that wait for tmux go last, so that tmux answers while the
	// others group.
	byKind := make([][]Session, len(g.kinds))
	for _, last := range []bool{false, true} {
		for i, k := range g.kinds {
			if g.plans[i].tmux == last {
				byKind[i] = fold(s, g.cfg.Fold, k.name(), k.group(x))
			}
		}
	}
	bounds := make([][2]int, len(g.kinds))
	total := 0
	for _, ss := range byKind {
		total += len(ss)
	}
	if total > 0 {
		sessions = make([]Session, 0, total) // 368 bytes each: no copies while growing
	}
	for i, k := range g.kinds {
		lo := len(sessions)
		for j := range byKind[i] {
			byKind[i][j].kind = k
		}
		sessions = append(sessions, byKind[i]...)
		bounds[i] = [2]int{lo, len(sessions)}
	}
	if g.cfg.Once {
		sumCounters(s, sessions)
	} else {
		g.cum.update(s, sessions)
	}
	for i := len(g.kinds) - 1; i >= 0; i-- {
		f, ok := g.kinds[i].(kindFinisher)
		if !ok {
			continue
		}
		lo, hi := bounds[i][0], bounds[i][1]
		rows := f.finish(g, s, sessions[lo:hi:hi], &n)
		sessions = slices.Replace(sessions, lo, hi, rows...) // in place unless rows are more
	}
	if len(sessions) == 0 {
		return nil, n.list // as before: no sessions are nil, not empty
	}
	return sessions, n.list
}

// Group is a one-off NewGrouper(fs, cfg) and Group(s): cumulative counters
// then equal the members' current counters.
func Group(fs procwalk.FS, s *procwalk.Snapshot, cfg Config) ([]Session, []string, error) {
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
	s    *procwalk.Snapshot
	kind string
	of   []int32 // session index of each process, -1 for none
	sess []Session
}

func newBuilder(s *procwalk.Snapshot, kind string) *builder {
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
	for c := s.FirstChildIndex(i); c >= 0; c = s.NextSiblingIndex(c) {
		b.assignTree(c, si)
	}
}

// finish fills Members, Roots and Totals and drops empty sessions. Each
// session's Members, index and Roots are cut from three arrays shared by
// the kind, each cut full (an append copies it): a hundred sessions made
// three hundred small allocations, most of them in size classes new to
// the heap, each a fresh page to fault in.
func (b *builder) finish() []Session {
	s := b.s
	counts := make([]int32, 2*len(b.sess)) // members, then roots, of each session
	members, roots := 0, 0
	for i, si := range b.of {
		if si < 0 {
			continue
		}
		counts[2*si]++
		members++
		if b.isRoot(int32(i), si) {
			counts[2*si+1]++
			roots++
		}
	}
	ids := make([]procwalk.ProcID, 0, members+roots)
	index := make([]int32, 0, members)
	for i := range b.sess {
		n, r := int(counts[2*i]), int(counts[2*i+1])
		b.sess[i].Members = ids[len(ids) : len(ids) : len(ids)+n]
		b.sess[i].index = index[len(index) : len(index) : len(index)+n]
		ids = ids[:len(ids)+n]
		index = index[:len(index)+n]
		if r > 0 {
			b.sess[i].Roots = ids[len(ids) : len(ids) : len(ids)+r]
			ids = ids[:len(ids)+r]
		}
	}
	for i, si := range b.of {
		if si < 0 {
			continue
		}
		p := &s.Procs[i]
		ss := &b.sess[si]
		ss.Members = append(ss.Members, p.ID)
		ss.index = append(ss.index, int32(i))
		if b.isRoot(int32(i), si) {
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

// isRoot reports whether process i, in session si, is one of its roots:
// its parent is in no session or another.
func (b *builder) isRoot(i, si int32) bool {
	par := b.s.ParentIndex(i)
	return par < 0 || b.of[par] != si
}

// add counts p in the session totals.
func (t *Totals) add(p *procwalk.Process) {
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
