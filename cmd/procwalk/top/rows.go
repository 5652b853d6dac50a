//go:build linux

package top

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

// rows.go builds the rows of each view from a frame: cells, the values
// they sort by, and what a row stands for (a process or a session).

// column is one column of a view's table.
type column struct {
	title string
	width int  // the width it needs at least (cells are cut to it)
	right bool // numbers align right
	// keep ranks columns when the terminal is narrow: the lowest go first.
	keep int
	// flex takes the width left over (command line, info).
	flex bool
	// text sorts ascending by the cell; otherwise by value, largest first.
	text bool
	// sortable columns are cycled through by "s".
	sortable bool
}

// row is one line of a table.
type row struct {
	// cells are the texts, formatted when first needed (text(): a row on
	// screen, a sort by a text column): most rows of a big host never are.
	cells   []string
	builder *rowBuilder       // formats a process row's cells
	proc    *procwalk.Process // a process row, or nil
	sess    *session.Session  // a session row, or nil
	// tree views: bit d is set when the ancestor at depth d+1 has a later
	// sibling (its connector line goes on).
	lines uint64
	// values sort the numeric columns (value), and have says which have
	// one (bit c: column c). An array, not a slice: a table of 10,000
	// rows is one allocation. float32, as a view holds two tables of
	// 10,000 rows at once (the one shown and the next): 120 bytes a row
	// rather than 184. It is exact for pids, for byte counts in pages
	// (RSS) up to 64 GiB and in KiB (PSS, USS) up to 16 GiB, and within a
	// ten-millionth elsewhere, far below the digits a cell shows.
	values [maxColumns]float32
	have   uint16
	depth  int32 // tree views: nesting
	last   bool  // tree views: the last of its siblings
	folded bool  // tree views: its children are hidden
	kids   bool  // tree views: it has children
	// dim marks a protected (system) process; known once dimKnown, asked
	// of the killer for rows drawn only (isDim).
	dim, dimKnown bool
}

// isDim says whether r is a protected (system) process, drawn dimmed. Only
// rows on screen ask: the check reads procwalk's own ancestry (its stat
// files), too costly for every process of every frame.
func (r *row) isDim() bool {
	if !r.dimKnown && r.proc != nil {
		r.dim, r.dimKnown = r.builder.protected(r.proc), true
	}
	return r.dim
}

// protected says whether the killer refuses p, with one check for the
// builder's frame.
func (b *rowBuilder) protected(p *procwalk.Process) bool {
	if b.killer == nil {
		return false
	}
	if b.check == nil {
		b.check = b.killer.Checker()
	}
	return b.check(p) != nil
}

// maxColumns is the most columns a table has.
const maxColumns = 12

// row.have has a bit for each column: this fails to compile when a table
// has more columns than it has bits.
const _ = uint16(1 << (maxColumns - 1))

// value is column c's value of r, and whether it has one.
func (r *row) value(c int) (float64, bool) { return float64(r.values[c]), r.has(c) }

// has says whether r has a value in column c.
func (r *row) has(c int) bool { return r.have&(1<<c) != 0 }

// set sets column c's value of r (v when ok).
func (r *row) set(c int, v float64, ok bool) {
	r.values[c] = float32(v)
	if ok {
		r.have |= 1 << c
	} else {
		r.have &^= 1 << c
	}
}

// text is the cells of r, formatting them once.
func (r *row) text() []string {
	if r.cells == nil {
		r.cells = r.builder.processCells(r)
	}
	return r.cells
}

// processColumns are the process table's columns. The titles of the
// metric columns are the catalogue's labels (TestColumnTitlesAreLabels).
func processColumns() []column {
	return []column{
		{title: "PID", width: 7, right: true, keep: 10, sortable: true},
		{title: "USER", width: 8, keep: 4, text: true, sortable: true},
		{title: "NAME", width: 15, keep: 9, text: true, sortable: true},
		{title: "CPU%", width: 5, right: true, keep: 8, sortable: true},
		{title: "USS", width: 9, right: true, keep: 6, sortable: true},
		{title: "PSS", width: 9, right: true, keep: 5, sortable: true},
		{title: "RSS", width: 9, right: true, keep: 7, sortable: true},
		{title: "USS+", width: 9, right: true, keep: 3, sortable: true},
		{title: "READ/s", width: 10, right: true, keep: 2, sortable: true},
		{title: "WRITE/s", width: 10, right: true, keep: 1, sortable: true},
		{title: "AGE", width: 6, right: true, keep: 3, sortable: true},
		{title: "COMMAND", width: 10, keep: 10, flex: true, text: true},
	}
}

// Process columns by index, for the default sort and the tree.
const (
	colPID = iota
	colUser
	colName
	colCPU
	colUSS
	colPSS
	colRSS
	colGrowth
	colRead
	colWrite
	colAge
)

// sessionColumns are the sessions table's columns.
func sessionColumns() []column {
	return []column{
		{title: "KIND", width: 6, keep: 10, text: true, sortable: true},
		{title: "NAME", width: 24, keep: 10, text: true, sortable: true},
		{title: "PROCS", width: 6, right: true, keep: 8, sortable: true},
		{title: "RSS", width: 9, right: true, keep: 9, sortable: true},
		{title: "PSS", width: 9, right: true, keep: 4, sortable: true},
		{title: "CPU%", width: 6, right: true, keep: 8, sortable: true},
		{title: "READ/s", width: 10, right: true, keep: 2, sortable: true},
		{title: "WRITE/s", width: 10, right: true, keep: 1, sortable: true},
		{title: "AGE", width: 6, right: true, keep: 3, sortable: true},
		{title: "INFO", width: 8, keep: 5, flex: true, text: true},
	}
}

// sessionRSSColumn is the sessions table's default sort.
const sessionRSSColumn = 3

// sessionMetricColumns are the catalogue metrics of the sessions table's
// columns from PROCS (column 2) on, in order.
func sessionMetricColumns() []string {
	return []string{"procs", "rss_bytes", "pss_bytes", "cpu_percent", "read_bytes_per_second", "write_bytes_per_second", "age_seconds"}
}

// rowBuilder holds what building rows needs besides the frame.
type rowBuilder struct {
	frame  Frame
	escape func(string) string
	users  *procwalk.Users
	killer Killer
	check  func(*procwalk.Process) error // the killer's, for this frame; made when first needed
	// The metrics of the value columns, looked up once: a row is built
	// for every process of every frame.
	cpu, uss, pss, rss, growth, read, write, age *metric.Desc
	sessionMetrics                               []*metric.Desc // of sessionMetricColumns
}

// newRowBuilder returns a builder of rows of f with the catalogue's metrics.
func newRowBuilder(f Frame, cfg Config, killer Killer, metrics *metric.Catalogue) *rowBuilder {
	lookup := func(name string) *metric.Desc {
		d, ok := metrics.Lookup(name)
		if !ok {
			panic("top: no metric " + name) // the catalogue is procwalk's own
		}
		return d
	}
	var sessionMetrics []*metric.Desc
	for _, name := range sessionMetricColumns() {
		sessionMetrics = append(sessionMetrics, lookup(name))
	}
	return &rowBuilder{
		frame: f, escape: cfg.Escape, users: cfg.Users, killer: killer,
		cpu: lookup("cpu_percent"), uss: lookup("uss_bytes"), pss: lookup("pss_bytes"), rss: lookup("rss_bytes"),
		growth: lookup("uss_growth_bytes_per_minute"), read: lookup("read_bytes_per_second"), write: lookup("write_bytes_per_second"),
		age: lookup("age_seconds"), sessionMetrics: sessionMetrics,
	}
}

// processRow is the row of p: the values it sorts by; its cells are
// formatted when shown (processCells).
func (b *rowBuilder) processRow(p *procwalk.Process) row {
	r := row{proc: p, builder: b}
	b.setValues(&r)
	return r
}

// setValues sets the values of r's process, again after fields were read
// of it (the rows on screen), forgetting cells formatted before.
func (b *rowBuilder) setValues(r *row) {
	s, p := b.frame.Snapshot, r.proc
	r.cells = nil
	r.set(colPID, float64(p.ID.PID), true)
	for _, m := range []struct {
		col int
		d   *metric.Desc
	}{{colCPU, b.cpu}, {colUSS, b.uss}, {colPSS, b.pss}, {colRSS, b.rss}, {colGrowth, b.growth}, {colRead, b.read}, {colWrite, b.write}, {colAge, b.age}} {
		v, ok := m.d.Process(s, p)
		r.set(m.col, v, ok)
	}
}

// processCells formats a process row.
func (b *rowBuilder) processCells(r *row) []string {
	p := r.proc
	cell := func(c int, d *metric.Desc) string {
		v, ok := r.value(c)
		return render.Cell(d, v, ok)
	}
	user := render.NotMeasured
	if p.Read&procwalk.FieldOwner != 0 {
		user = b.users.Name(p.EffectiveUID)
	}
	// Not read yet (a row the last frame did not have on screen, shown
	// after a sort until the next): "-", as any value not read; "[comm]"
	// is for a command line read empty (a kernel thread, a zombie).
	command := render.NotMeasured
	if p.Read&procwalk.FieldCmdline != 0 {
		if command = strings.Join(p.Cmdline, " "); command == "" {
			command = "[" + p.Comm + "]"
		}
	}
	return []string{
		strconv.Itoa(p.ID.PID), b.escape(user), b.escape(p.Name()),
		cell(colCPU, b.cpu), cell(colUSS, b.uss), cell(colPSS, b.pss), cell(colRSS, b.rss), cell(colGrowth, b.growth),
		cell(colRead, b.read), cell(colWrite, b.write), cell(colAge, b.age), b.escape(command),
	}
}

// processRows appends to rows (emptied: storage reused from frame to
// frame) the processes that match filter (name or command line).
func (b *rowBuilder) processRows(rows []row, filter string) []row {
	s := b.frame.Snapshot
	rows = slices.Grow(rows[:0], len(s.Procs))
	f := strings.ToLower(filter)
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.Kernel || !matches(p, f) {
			continue
		}
		rows = append(rows, b.processRow(p))
	}
	return rows
}

// matches reports whether lower (a filter in lower case) is in p's name or
// command line (any case).
func matches(p *procwalk.Process, lower string) bool {
	if lower == "" {
		return true
	}
	return strings.Contains(strings.ToLower(p.Comm), lower) || strings.Contains(strings.ToLower(strings.Join(p.Cmdline, " ")), lower)
}

// sessionRows are the sessions whose reference matches filter.
func (b *rowBuilder) sessionRows(filter string, listed func(*session.Session) bool) []row {
	f := strings.ToLower(filter)
	var rows []row
	for i := range b.frame.Sessions {
		s := &b.frame.Sessions[i]
		if !listed(s) || f != "" && !strings.Contains(strings.ToLower(s.Ref()), f) {
			continue
		}
		// The catalogue's values, and its rule for a value that is absent
		// (PSS not read, rates not measured, an ended agent's age).
		r := row{cells: []string{s.Kind, b.escape(s.Name)}, sess: s}
		snap := b.frame.Snapshot
		for j, d := range b.sessionMetrics {
			v, ok := d.Session(s, snap.Fields, snap.Time)
			r.set(2+j, v, ok)
			// As procwalk sessions prints it: a "+" marks a sum some
			// members' refused files left out.
			r.cells = append(r.cells, render.SessionCell(d, s, snap.Fields, snap.Time))
		}
		r.cells = append(r.cells, b.escape(sessionInfo(s)))
		rows = append(rows, r)
	}
	return rows
}

// sessionInfo is a few attributes that tell a session apart.
func sessionInfo(s *session.Session) string {
	var parts []string
	if sum := s.AgentSummary(); len(sum) > 0 {
		parts = append(parts, strings.Join(sum, ", ")) // an agent's status, model and context come first
		if t := s.Attrs[session.AttrTmuxTarget]; t != "" {
			parts = append(parts, "tmux "+t) // then where it runs, never cut for attributes
		}
	}
	if u := s.Totals.Cgroup; u != nil && u.MemoryLimitBytes > 0 {
		parts = append(parts, "mem "+strconv.FormatFloat(u.MemoryPercent, 'f', 0, 64)+"% of "+procwalk.FormatBytes(u.MemoryLimitBytes))
		if u.Danger {
			parts = append(parts, "DANGER")
		}
	}
	keys := make([]string, 0, len(s.Attrs))
	for k := range s.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := s.Attrs[k]; v != "" && len(parts) < 4 {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// treeRows appends to rows (emptied: storage reused) roots and their
// descendants (within keep, when not nil) depth first, children in pid
// order, skipping what folded hides.
func (b *rowBuilder) treeRows(rows []row, roots []*procwalk.Process, keep func(*procwalk.Process) bool, folded map[procwalk.ProcID]bool) []row {
	s := b.frame.Snapshot
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
		r.depth, r.lines, r.last = int32(depth), lines, last
		base := len(stack)
		stack = s.AppendChildren(stack, p.ID.PID)
		// A deeper walk may move stack; kids keeps the array it was in,
		// whose elements nothing overwrites.
		kids := stack[base:len(stack):len(stack)]
		defer func() { stack = stack[:base] }()
		r.kids, r.folded = slices.ContainsFunc(kids, shown), folded[p.ID]
		rows = append(rows, r)
		if r.folded {
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
// the processes that match and their ancestors, so that a match keeps its
// place in the tree; nil (everything) without a filter.
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

// hostRoots are the roots of the host's process tree, kernel threads left
// out.
func hostRoots(s *procwalk.Snapshot) []*procwalk.Process {
	var roots []*procwalk.Process
	for _, p := range s.Roots() {
		if !p.Kernel {
			roots = append(roots, p)
		}
	}
	return roots
}

// memberRoots are the roots of a session's members, and a test for
// membership (a search of Members, ascending pid: no map of them a frame).
func memberRoots(snap *procwalk.Snapshot, s *session.Session) ([]*procwalk.Process, func(*procwalk.Process) bool) {
	var roots []*procwalk.Process
	for _, id := range s.Roots {
		if p := snap.Lookup(id); p != nil {
			roots = append(roots, p)
		}
	}
	return roots, func(p *procwalk.Process) bool {
		i, found := slices.BinarySearchFunc(s.Members, p.ID.PID, func(id procwalk.ProcID, pid int) int { return cmp.Compare(id.PID, pid) })
		return found && s.Members[i] == p.ID
	}
}

// sortRows orders rows by column c: numbers largest first, text A to Z;
// rows without a value last whatever the direction; ties by the first
// column's value (pid) or text, so the order is stable between refreshes.
func sortRows(rows []row, cols []column, c int, reverse bool) {
	if cols[c].text {
		for i := range rows {
			rows[i].text() // the comparisons get copies: format once here
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if cols[c].text {
			r := cmp.Compare(strings.ToLower(a.text()[c]), strings.ToLower(b.text()[c]))
			if reverse {
				r = -r
			}
			return cmp.Or(r, cmp.Compare(a.values[0], b.values[0]), cmp.Compare(a.text()[1], b.text()[1]))
		}
		switch {
		case a.has(c) != b.has(c):
			if a.has(c) {
				return -1
			}
			return 1
		case a.values[c] != b.values[c]:
			r := cmp.Compare(b.values[c], a.values[c])
			if reverse {
				r = -r
			}
			return r
		}
		if a.values[0] != b.values[0] {
			return cmp.Compare(a.values[0], b.values[0]) // pids; sessions have 0
		}
		return cmp.Compare(a.text()[1], b.text()[1])
	})
}
