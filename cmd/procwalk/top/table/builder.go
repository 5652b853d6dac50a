//go:build linux

package table

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Config is what building rows needs besides the frame.
type Config struct {
	Users *procwalk.Users // user names of the USER column
	// Protected, when not nil, returns a check saying why a process may
	// not be killed (the killer's Checker): rows it refuses are dimmed. A
	// Builder calls it once, when the first row on screen asks (Row.Dim).
	Protected func() func(*procwalk.Process) error
}

// Builder builds the rows of one frame: a snapshot and its sessions.
type Builder struct {
	snap     *procwalk.Snapshot
	sessions []session.Session
	cfg      Config
	check    func(*procwalk.Process) error // cfg.Protected's, made when first needed
	// The metrics of the value columns, looked up once: a row is built
	// for every process of every frame.
	cpu, uss, pss, rss, growth, read, write, age *metric.Desc
	sessionMetrics                               []*metric.Desc // of SessionMetricColumns
	agentMetrics                                 []*metric.Desc // of AgentColumns' PROCS, RSS, CPU% and AGE
	context                                      *metric.Desc   // CTX%: context_percent
}

// NewBuilder returns a builder of the rows of snap and its sessions, with
// the metrics of catalogue metrics.
func NewBuilder(snap *procwalk.Snapshot, sessions []session.Session, cfg Config, metrics *metric.Catalogue) *Builder {
	lookup := func(name string) *metric.Desc {
		d, ok := metrics.Lookup(name)
		if !ok {
			panic("table: no metric " + name) // the catalogue is procwalk's own
		}
		return d
	}
	var sessionMetrics []*metric.Desc
	for _, name := range SessionMetricColumns() {
		sessionMetrics = append(sessionMetrics, lookup(name))
	}
	return &Builder{
		snap: snap, sessions: sessions, cfg: cfg,
		cpu: lookup("cpu_percent"), uss: lookup("uss_bytes"), pss: lookup("pss_bytes"), rss: lookup("rss_bytes"),
		growth: lookup("uss_growth_bytes_per_minute"), read: lookup("read_bytes_per_second"), write: lookup("write_bytes_per_second"),
		age: lookup("age_seconds"), sessionMetrics: sessionMetrics,
		agentMetrics: []*metric.Desc{lookup("procs"), lookup("rss_bytes"), lookup("cpu_percent"), lookup("age_seconds")},
		context:      lookup("context_percent"),
	}
}

// protected says whether cfg.Protected refuses p, with one check for the
// builder's frame.
func (b *Builder) protected(p *procwalk.Process) bool {
	if b.cfg.Protected == nil {
		return false
	}
	if b.check == nil {
		b.check = b.cfg.Protected()
	}
	return b.check(p) != nil
}

// processRow is the row of p: the values it sorts by; its cells are
// formatted when shown (processCells).
func (b *Builder) processRow(p *procwalk.Process) Row {
	r := Row{Proc: p, builder: b}
	b.SetValues(&r)
	return r
}

// SetValues sets the values of r's process, again after fields were read
// of it (the rows on screen), forgetting cells formatted before.
func (b *Builder) SetValues(r *Row) {
	s, p := b.snap, r.Proc
	r.cells = nil
	r.set(ColPID, float64(p.ID.PID), true)
	for _, m := range []struct {
		col int
		d   *metric.Desc
	}{{ColCPU, b.cpu}, {ColUSS, b.uss}, {ColPSS, b.pss}, {ColRSS, b.rss}, {ColGrowth, b.growth}, {ColRead, b.read}, {ColWrite, b.write}, {ColAge, b.age}} {
		v, ok := m.d.Process(s, p)
		r.set(m.col, v, ok)
	}
}

// processCells formats a process row, as ps prints its columns.
func (b *Builder) processCells(r *Row) []string {
	p := r.Proc
	cell := func(c int, d *metric.Desc) string {
		v, ok := r.Value(c)
		return render.Cell(d, v, ok)
	}
	user := render.NotMeasured
	if p.Read&procwalk.FieldOwner != 0 {
		user = b.cfg.Users.Name(p.EffectiveUID)
	}
	// Not read yet (a row the last frame did not have on screen, shown
	// after a sort until the next): "-", as any value not read; once read,
	// as ps prints it (escaped there: "[comm]" for a command line read
	// empty, "..." when cut, " <defunct>" for a zombie).
	command := render.NotMeasured
	if p.Read&procwalk.FieldCmdline != 0 {
		command = render.CommandLine(p)
	}
	esc := procwalk.Printable
	return []string{
		strconv.Itoa(p.ID.PID), esc(user), esc(p.Name()),
		cell(ColCPU, b.cpu), cell(ColUSS, b.uss), cell(ColPSS, b.pss), cell(ColRSS, b.rss), cell(ColGrowth, b.growth),
		cell(ColRead, b.read), cell(ColWrite, b.write), cell(ColAge, b.age), command,
	}
}

// ProcessRows appends to rows (emptied: storage reused from frame to
// frame) the processes but kernel threads whose name or command line holds
// filter (any case), sorted by column sortCol (Sort).
func (b *Builder) ProcessRows(rows []Row, filter string, sortCol int, reverse bool) []Row {
	s := b.snap
	rows = slices.Grow(rows[:0], len(s.Procs))
	f := strings.ToLower(filter)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || !matches(p, f) {
			continue
		}
		rows = append(rows, b.processRow(p))
	}
	Sort(rows, ProcessColumns(), sortCol, reverse)
	return rows
}

// SmoothGrowth sets USS+ of the process rows to g's minute regression in
// place of the catalogue's rate between the last two frames; it reports
// whether a value changed.
func SmoothGrowth(rows []Row, g *metric.Growth) bool {
	changed := false
	for i := range rows {
		r := &rows[i]
		v, ok := g.PerMinute(r.Proc.ID)
		if old, had := r.Value(ColGrowth); ok != had || float32(v) != float32(old) {
			r.set(ColGrowth, v, ok)
			r.cells = nil
			changed = true
		}
	}
	return changed
}

// SessionRows are the sessions that listed lists whose reference holds
// filter (any case), sorted by column sortCol of SessionColumns.
func (b *Builder) SessionRows(filter string, listed func(*session.Session) bool, sortCol int, reverse bool) []Row {
	f := strings.ToLower(filter)
	var rows []Row
	snap := b.snap
	for i := range b.sessions {
		s := &b.sessions[i]
		if !listed(s) || f != "" && !strings.Contains(strings.ToLower(s.Ref()), f) {
			continue
		}
		// The catalogue's values, and its rule for a value that is absent
		// (PSS not read, rates not measured, an ended agent's age).
		r := Row{cells: []string{s.Kind, procwalk.Printable(s.Name)}, Session: s}
		for j, d := range b.sessionMetrics {
			v, ok := d.Session(s, snap.Fields, snap.Time)
			r.set(2+j, v, ok)
			// As procwalk sessions prints it: a "+" marks a sum some
			// members' refused files left out.
			r.cells = append(r.cells, render.SessionValueCell(d, s, v, ok))
		}
		r.cells = append(r.cells, procwalk.Printable(s.Info())) // as procwalk sessions prints it
		rows = append(rows, r)
	}
	Sort(rows, SessionColumns(), sortCol, reverse)
	return rows
}

// AgentRows are the agent sessions whose reference holds filter (any
// case), sorted by column sortCol of AgentColumns.
func (b *Builder) AgentRows(filter string, sortCol int, reverse bool) []Row {
	f := strings.ToLower(filter)
	esc := procwalk.Printable
	var rows []Row
	for i := range b.sessions {
		s := &b.sessions[i]
		if s.Kind != session.KindAgent || f != "" && !strings.Contains(strings.ToLower(s.Ref()), f) {
			continue
		}
		status, rank, model := "-", 0, s.Attrs[session.AttrModel]
		if a := s.Agent; a != nil {
			status, rank = a.Status, session.AttentionRank(a.Status)
			if a.Status == session.AgentBlocked || a.Status == session.AgentEnded {
				status += " " + session.HumanDuration(a.StatusFor)
			}
		}
		ctx, ctxOK := b.context.Session(s, b.snap.Fields, b.snap.Time)
		ctxCell := render.NotMeasured
		if ctxOK {
			ctxCell = strconv.FormatFloat(ctx, 'f', 0, 64)
		}
		r := Row{cells: []string{esc(s.Name), status, esc(cellOr(model)), ctxCell}, Session: s}
		for c, v := range []struct {
			v  float64
			ok bool
		}{{0, false}, {float64(rank), true}, {0, false}, {ctx, ctxOK}} {
			r.set(c, v.v, v.ok)
		}
		// PROCS, RSS, CPU% and AGE as the sessions table has them: the
		// catalogue's values and its rule for one that is absent (an
		// ended agent has no age).
		for j, d := range b.agentMetrics {
			v, ok := d.Session(s, b.snap.Fields, b.snap.Time)
			r.set(4+j, v, ok)
			r.cells = append(r.cells, render.SessionValueCell(d, s, v, ok))
		}
		r.cells = append(r.cells, esc(cellOr(s.Attrs[session.AttrTmuxTarget])))
		rows = append(rows, r)
	}
	Sort(rows, AgentColumns(), sortCol, reverse)
	return rows
}

func cellOr(s string) string {
	if s == "" {
		return render.NotMeasured
	}
	return s
}

// HostTree appends to rows (emptied: storage reused) the host's process
// tree, kernel threads left out: depth first, children in pid order,
// skipping what folded hides. With a filter, the processes whose name or
// command line holds it (any case) and their ancestors, so that a match
// keeps its place in the tree.
func (b *Builder) HostTree(rows []Row, filter string, folded map[procwalk.ProcID]bool) []Row {
	keep := treeKeep(b.snap, strings.ToLower(filter))
	var roots []*procwalk.Process
	for _, p := range b.snap.Roots() {
		if !p.Kernel && (keep == nil || keep(p)) {
			roots = append(roots, p)
		}
	}
	return b.treeRows(rows, roots, keep, folded)
}

// MemberTree appends to rows (emptied: storage reused) the members of the
// session whose reference is ref, as HostTree does the host's; found is
// false when no session has that reference (it ended).
func (b *Builder) MemberTree(rows []Row, ref string, folded map[procwalk.ProcID]bool) (_ []Row, found bool) {
	s, err := session.Find(b.sessions, ref)
	if err != nil {
		return rows, false
	}
	var roots []*procwalk.Process
	for _, id := range s.Roots {
		if p := b.snap.Lookup(id); p != nil {
			roots = append(roots, p)
		}
	}
	// Membership is a search of Members, ascending pid: no map of them a
	// frame.
	member := func(p *procwalk.Process) bool {
		i, found := slices.BinarySearchFunc(s.Members, p.ID.PID, func(id procwalk.ProcID, pid int) int { return cmp.Compare(id.PID, pid) })
		return found && s.Members[i] == p.ID
	}
	return b.treeRows(rows, roots, member, folded), true
}

// treeRows appends to rows (emptied: storage reused) roots and their
// descendants (within keep, when not nil) depth first, children in pid
// order, skipping what folded hides.
func (b *Builder) treeRows(rows []Row, roots []*procwalk.Process, keep func(*procwalk.Process) bool, folded map[procwalk.ProcID]bool) []Row {
	s := b.snap
	// Room for every process at once: append's doublings would leave up
	// to twice the storage for the frames that reuse it.
	rows = slices.Grow(rows[:0], len(s.Procs))
	shown := func(c *procwalk.Process) bool { return !c.Kernel && (keep == nil || keep(c)) }
	// stack holds the children of every process on the walk's path, each
	// parent's above its ancestors': one slice for the walk rather than one
	// per parent. It is still made anew each refresh: a parent of 10,000
	// sleepers grows it to 80 kB every time.
	var stack []*procwalk.Process
	var walk func(p *procwalk.Process, depth int, lines uint64, last bool)
	walk = func(p *procwalk.Process, depth int, lines uint64, last bool) {
		r := b.processRow(p)
		r.Depth, r.Lines, r.Last = int32(depth), lines, last
		base := len(stack)
		stack = s.AppendChildren(stack, p.ID.PID)
		// A deeper walk may move stack; kids keeps the array it was in,
		// whose elements nothing overwrites.
		kids := stack[base:len(stack):len(stack)]
		defer func() { stack = stack[:base] }()
		r.Kids, r.Folded = slices.ContainsFunc(kids, shown), folded[p.ID]
		rows = append(rows, r)
		if r.Folded {
			return
		}
		n := 0
		for _, c := range kids {
			if shown(c) {
				n++
			}
		}
		childLines := lines
		if depth > 0 && !last && depth < 64 {
			childLines |= 1 << (depth - 1)
		}
		for _, c := range kids {
			if shown(c) {
				n--
				walk(c, depth+1, childLines, n == 0)
			}
		}
	}
	for _, p := range roots {
		walk(p, 0, 0, true)
	}
	return rows
}

// treeKeep is what a tree view shows of snap under filter (lower case):
// the processes that match and their ancestors; nil (everything) without a
// filter.
func treeKeep(snap *procwalk.Snapshot, filter string) func(*procwalk.Process) bool {
	if filter == "" {
		return nil
	}
	keep := map[procwalk.ProcID]bool{}
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if p.Kernel || !matches(p, filter) {
			continue
		}
		for q := p; q != nil && !keep[q.ID]; q = snap.Process(q.PPID) {
			keep[q.ID] = true
		}
	}
	return func(p *procwalk.Process) bool { return keep[p.ID] }
}
