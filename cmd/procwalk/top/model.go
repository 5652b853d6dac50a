//go:build linux

package top

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Config is what the live view needs besides its Source and Killer.
type Config struct {
	Interval time.Duration // between refreshes
	Users    *procwalk.Users
	// DangerPercent marks the gauges' danger threshold (80 by default).
	DangerPercent float64
	// Sessions starts in the sessions view (Tab's second), not the
	// processes view.
	Sessions bool
	// Agents starts in the agents view ("a").
	Agents bool
	// Host is the host's name for the header; "": os.Hostname's.
	Host string
	// Kinds are the session kinds the sessions view lists (--kind); nil:
	// every kind grouped. The gauges' cgroups are grouped whatever it says.
	Kinds []string
	// Status is shown in the status line until the first key: a note from
	// before the view started (why the BPF source did not load), already
	// escaped.
	Status string
	// ASCII draws arrows, gauges and tree connectors in ASCII (the locale
	// is no UTF-8 one: ASCIILocale).
	ASCII bool
	// SwitchTmux switches the tmux client procwalk runs in to the pane
	// target ("session:window.pane"): "g" on an agent or a tmux session.
	// Nil: the key says it cannot.
	SwitchTmux func(target string) error
	// Marker marks the selected row with a character as well as reverse
	// video: for terminals that show no attributes (TERM=dumb). The view
	// sets it itself when Bubble Tea finds no colour profile.
	Marker bool
	// NoKill says why k and K kill nothing (a recording's processes are
	// not this host's); "" with a Killer.
	NoKill string
	// Trim returns the memory freed so far to the kernel (the source's
	// pipeline's): called before a view change allocates a table of rows
	// (frame.Pipeline.Trim). Nil: nothing is called.
	Trim func()
}

// view is what the table shows.
type view int

const (
	viewProcesses view = iota
	viewSessions
	viewTree    // the host's process tree
	viewMembers // one session's members, as a tree
	viewAgents  // the AI agents among the sessions, with their columns
)

// Model is the live view's state, a bubbletea model.
type Model struct {
	cfg    Config
	src    Source
	killer Killer

	frame   Frame
	loaded  bool
	err     error // the last gather's
	metrics *metric.Catalogue

	view      view
	member    string // viewMembers: the session's reference
	from      view   // viewMembers: the view Esc goes back to
	sortCol   map[view]int
	reverse   bool
	filter    string
	editing   bool // typing a filter
	search    string
	searching bool // typing a search
	missed    bool // the search's last jump found no row holding it
	// seeking: n found no row on hand holding the search in a process
	// view; the next frame reads every command line and is searched again.
	seeking  bool
	folded   map[procwalk.ProcID]bool
	cursor   int
	offset   int
	width    int
	height   int
	help     bool
	plain    bool // text alone, no styles (--once)
	confirm  *confirmation
	status   string
	alarm    bool // status is a warning or a refusal
	killing  bool
	gathered bool   // a gather is under way
	frames   int    // frames received, to know the last one's tick
	pending  bool   // the view waits for a frame with every session kind
	shown    string // what the last gather was planned for (regather)
	rows     []table.Row
	cols     []table.Column
	// spare is a rows slice no one shows, its storage reused by the next
	// rows built (a table of 10,000 rows is two megabytes a frame).
	spare []table.Row
	// prime makes the next gather read the io of every process: --once's
	// first of two, so that whichever rows the second shows (its order
	// comes from rates the first lacks) have a sample to take READ/s and
	// WRITE/s from.
	prime bool
	// planned are the rows the last gather built to know which processes
	// its frame shows: the frame's rows, unless the view changed since.
	planned *plannedRows

	glyphs glyphs         // the config's: Unicode or ASCII
	growth *metric.Growth // USS+, a minute's regression
	meters meters         // per-CPU meters, the selected row's history
	// drawn is the row the last screen drew selected: what k and K act
	// on, whatever a refresh moved under the cursor since.
	drawn table.ID
	// reset: the selection was moved to the first row (a new order or
	// filter); the next refresh keeps it there rather than following the
	// process selected before.
	reset bool
	// sessionCount is the number of sessions of every kind, from the last
	// frame that grouped them all; -1 before one.
	sessionCount int
}

// plannedRows are the rows a gather built for the view as it was then
// (key: shownKey).
type plannedRows struct {
	key  string
	rows []table.Row
}

// confirmation is a kill waiting for y or n.
type confirmation struct {
	what    string // "pid 42", for the status line
	prompt  string
	warning string                             // set for a protected (system) process
	do      func(first syscall.Signal) tea.Cmd // the kill, with this first signal
}

// New returns the model of a live view over src, killing through killer
// (nil: killing is off).
func New(cfg Config, src Source, killer Killer) *Model {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.DangerPercent <= 0 {
		cfg.DangerPercent = session.DefaultDangerPercent
	}
	return &Model{
		cfg: cfg, src: src, killer: killer, metrics: metric.NewCatalogue(),
		sortCol: map[view]int{viewProcesses: table.ColCPU, viewSessions: table.SessionRSSColumn, viewAgents: table.AgentStatusColumn},
		folded:  map[procwalk.ProcID]bool{}, width: 80, height: 24, view: startView(cfg),
		status: cfg.Status, glyphs: glyphSet(cfg.ASCII), sessionCount: -1, growth: metric.NewGrowth(),
	}
}

func startView(cfg Config) view {
	if cfg.Agents {
		return viewAgents
	}
	if cfg.Sessions {
		return viewSessions
	}
	return viewProcesses
}

// Messages.
type (
	frameMsg struct {
		frame   Frame
		err     error
		planned *plannedRows
		// matched: every process's command line was read (a filter, a
		// search being typed or sought again).
		matched bool
	}
	// tickMsg is the tick scheduled after frame number frame: only the
	// last frame's starts a gather.
	tickMsg  struct{ frame int }
	killDone struct {
		text  string
		alarm bool
	}
)

// Init starts the first gather.
func (m *Model) Init() tea.Cmd { return m.gather() }

// gather fetches a frame outside the UI's goroutine with what the view
// needs of every process, and the rest of the rows on screen (read on the
// frame, before the source hands it over: their rates too come from the
// source's one Sampler).
func (m *Model) gather() tea.Cmd {
	m.gathered = true
	m.shown = m.shownKey()
	src := m.src
	need, visible := m.plan()
	key := m.shown
	matched := need.Every&procwalk.FieldCmdline != 0
	return func() tea.Msg {
		var planned *plannedRows
		f, err := src.Gather(need, func(f Frame) {
			if rows := visible(f); rows != nil {
				planned = &plannedRows{key, rows}
			}
		})
		f.AllKinds = need.Sessions
		return frameMsg{f, err, planned, matched}
	}
}

// shownKey names what the screen shows: a gather plans for it (regather).
func (m *Model) shownKey() string {
	return fmt.Sprint(m.view, m.member, m.filter, m.searching, m.seeking, m.sortCol[m.view], m.reverse, m.offset, m.height, m.folded)
}

// plan works out, from the view as it is now, what the next frame needs of
// every process, and returns with it what builds the rows of the frame
// (in the spare storage) and reads the rest of those on screen.
func (m *Model) plan() (Need, func(Frame) []table.Row) {
	v, filter, folded, member := m.view, m.filter, maps.Clone(m.folded), m.member
	// A filter, or a search while it is typed or sought again (n), matches
	// every process's command line, not only those of the rows on screen.
	// A search kept with Enter does not: reading every command line takes
	// each target's memory map lock, refresh after refresh.
	matching := filter != "" || m.searching || m.seeking
	c, reverse := m.sortCol[m.view], m.reverse
	offset, height := m.offset, m.tableHeight()
	cfg, killer, metrics := m.cfg, m.killer, m.metrics
	var need Need
	if m.prime {
		need.Every = procwalk.FieldIO
	}
	switch v {
	case viewSessions, viewAgents:
		// Session IO rates are summed over every member.
		return Need{Sessions: true, Every: procwalk.FieldIO}, func(Frame) []table.Row { return nil }
	case viewMembers:
		need.Sessions = true
	case viewProcesses:
		need.Every |= table.SortNeeds(c)
		if matching {
			need.Every |= procwalk.FieldCmdline
		}
	case viewTree:
		if matching {
			need.Every |= procwalk.FieldCmdline // matches and their ancestors
		}
	}
	spare := m.spare
	m.spare = nil // the gather's now
	return need, func(f Frame) []table.Row {
		b := newBuilder(f, cfg, killer, metrics)
		rows, found := viewRows(b, spare, v, filter, member, folded, c, reverse)
		if !found {
			return nil
		}
		shown := rows[min(offset, len(rows)):min(offset+height, len(rows))]
		procs := make([]*procwalk.Process, 0, len(shown))
		for _, r := range shown {
			procs = append(procs, r.Proc)
		}
		if more := table.RowFields &^ need.Every; len(procs) > 0 {
			f.ReadMore(procs, more) // a failed read leaves cells "-"
			for i := range shown {
				b.SetValues(&shown[i]) // with what was just read
			}
		}
		return rows
	}
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.refresh()
	case tea.ColorProfileMsg:
		// No attributes at all (TERM=dumb): reverse video would not show.
		m.cfg.Marker = m.cfg.Marker || msg.Profile == colorprofile.NoTTY
	case frameMsg:
		m.gathered = false
		m.err = msg.err
		if msg.err == nil {
			m.planned = msg.planned
			m.setFrame(msg.frame)
			if (m.searching || m.seeking) && m.missed && msg.matched { // not in the rows before: look in every command line
				status, alarm := m.status, m.alarm
				from := m.cursor
				if m.seeking {
					from++ // n: the next one
				}
				m.jump(from)
				switch {
				case status != m.missText():
					m.status, m.alarm = status, alarm // another message (a kill's) stays
				case !m.missed:
					m.status, m.alarm = "", false
				}
			}
			if msg.matched || !m.readsCommandLines() {
				m.seeking = false
			}
		}
		// A frame gathered at once for a key (regather) schedules a tick
		// too: the ticks of older frames are stale, or each such key would
		// add a refresh a second.
		m.frames++
		frame := m.frames
		return m, tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{frame} })
	case tickMsg:
		if msg.frame == m.frames && !m.gathered {
			return m, m.gather()
		}
	case killDone:
		m.killing = false
		m.status, m.alarm = msg.text, msg.alarm
		if !m.gathered {
			return m, m.gather() // show the result at once
		}
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		return m, m.mouse(msg)
	case tea.PasteMsg:
		if m.editing { // pasted into the filter: one line of it
			line, _, _ := strings.Cut(msg.Content, "\n")
			m.filter += strings.TrimRight(line, "\r")
			m.cursor, m.offset = 0, 0
			m.refresh()
			return m, m.regather()
		}
	}
	return m, nil
}

// setFrame takes a new frame and shows it.
func (m *Model) setFrame(f Frame) {
	m.frame, m.loaded = f, true
	if f.AllKinds {
		m.sessionCount = 0
		for i := range f.Sessions {
			if m.listed(&f.Sessions[i]) {
				m.sessionCount++
			}
		}
	}
	m.growth.Observe(f.Snapshot)
	m.refresh()
	m.meters.observe(f, m.selected())
}

// refresh rebuilds the rows for the view, keeping the selected process or
// session selected.
func (m *Model) refresh() {
	if !m.loaded {
		return
	}
	var selected *table.Row
	if m.cursor < len(m.rows) {
		r := m.rows[m.cursor] // a copy: the storage may be reused below
		selected = &r
	}
	planned := m.planned
	m.planned = nil
	old := m.rows
	m.rows = nil
	defer func() {
		if m.view == viewSessions || m.view == viewAgents {
			m.spare = nil // a few rows: hold no storage of 10,000 rows
			return
		}
		m.keepSpare(old)
	}()
	m.pending = false
	if (m.view == viewSessions || m.view == viewAgents || m.view == viewMembers) && !m.frame.AllKinds {
		// The frame on hand was gathered for a process view: its sessions
		// are the gauges' cgroups alone. Show none until the next frame
		// has every kind, rather than a list that looks whole.
		m.cols, m.pending = table.SessionColumns(), true
		if m.view == viewAgents {
			m.cols = table.AgentColumns()
		}
		if m.view == viewMembers {
			m.cols = table.ProcessColumns()
		}
		m.keepSpare(planned.take())
		return
	}
	switch m.view { // the session views planned nothing (plan)
	case viewSessions:
		m.cols = table.SessionColumns()
		m.rows = newBuilder(m.frame, m.cfg, m.killer, m.metrics).SessionRows(m.filter, m.listed, m.sortCol[viewSessions], m.reverse)
	case viewAgents:
		m.cols = table.AgentColumns()
		m.rows = newBuilder(m.frame, m.cfg, m.killer, m.metrics).AgentRows(m.filter, m.sortCol[viewAgents], m.reverse)
	default:
		m.cols = table.ProcessColumns()
		m.rows = m.processViewRows(planned, old)
		// USS+ is the minute's regression (metric.Growth) rather than the
		// rate between the last two frames.
		if table.SmoothGrowth(m.rows, m.growth) && m.view == viewProcesses && m.sortCol[viewProcesses] == table.ColGrowth {
			table.Sort(m.rows, m.cols, table.ColGrowth, m.reverse)
		}
	}
	if selected != nil && !m.reset {
		for i := range m.rows {
			if selected.ID() == m.rows[i].ID() {
				m.cursor = i
				break
			}
		}
	}
	m.reset = false
	m.clamp()
}

// processViewRows are the rows of a process view (the list, the tree, a
// session's members): the ones the gather planned when the view is still
// the one it planned for, else built anew in the spare storage. old are
// the rows shown until now, not to be reused here.
func (m *Model) processViewRows(planned *plannedRows, old []table.Row) []table.Row {
	if planned != nil && planned.key == m.shownKey() {
		return planned.rows
	}
	m.keepSpare(planned.take())
	spare := m.spare
	m.spare = nil
	if cap(spare) < len(m.frame.Snapshot.Procs) && m.cfg.Trim != nil {
		// A new table (a process view shown after a sessions view, which
		// keeps none): the runtime's memory is at the view's limit with
		// garbage, and the table and the next frame's, allocated on top,
		// would set a peak of resident memory. Given back first, they
		// take the garbage's place. A view change is rare: one collection
		// for it costs little.
		m.cfg.Trim()
	}
	b := newBuilder(m.frame, m.cfg, m.killer, m.metrics)
	rows, found := viewRows(b, spare, m.view, m.filter, m.member, m.folded, m.sortCol[m.view], m.reverse)
	if !found {
		m.status, m.alarm = procwalk.Printable(m.member)+" has ended", true
		m.keepSpare(spare)
		return nil
	}
	return rows
}

// newBuilder returns a builder of the rows of f, dimming the processes
// killer refuses.
func newBuilder(f Frame, cfg Config, killer Killer, metrics *metric.Catalogue) *table.Builder {
	tc := table.Config{Users: cfg.Users}
	if killer != nil {
		tc.Protected = killer.Checker
	}
	return table.NewBuilder(f.Snapshot, f.Sessions, tc, metrics)
}

// viewRows builds in spare the rows of process view v: the list (filtered
// and sorted), the host's tree, or the tree of member's session; found is
// false when that session has ended.
func viewRows(b *table.Builder, spare []table.Row, v view, filter, member string, folded map[procwalk.ProcID]bool, sortCol int, reverse bool) (rows []table.Row, found bool) {
	switch v {
	case viewTree:
		return b.HostTree(spare, filter, folded), true
	case viewMembers:
		return b.MemberTree(spare, member, folded)
	}
	return b.ProcessRows(spare, filter, sortCol, reverse), true
}

// take returns the planned rows, or nil.
func (p *plannedRows) take() []table.Row {
	if p == nil {
		return nil
	}
	return p.rows
}

// keepSpare keeps rows, no longer shown, as the spare storage of the next
// rows built (the larger of it and the spare on hand), their pointers
// cleared so they hold no snapshot.
func (m *Model) keepSpare(rows []table.Row) {
	if cap(rows) <= cap(m.spare) {
		return
	}
	clear(rows[:cap(rows)])
	m.spare = rows[:0]
}

// listed reports whether the sessions view lists s: its kind is one asked
// for (Config.Kinds).
func (m *Model) listed(s *session.Session) bool {
	return len(m.cfg.Kinds) == 0 || slices.Contains(m.cfg.Kinds, s.Kind)
}

// drawnRow is the row the screen showed selected, in the rows of now; nil
// when it is no longer listed.
func (m *Model) drawnRow() *table.Row {
	for i := range m.rows {
		if m.rows[i].ID() == m.drawn {
			return &m.rows[i]
		}
	}
	return nil
}

// clamp keeps the cursor on a row and on screen.
func (m *Model) clamp() {
	m.cursor = max(min(m.cursor, len(m.rows)-1), 0)
	h := m.tableHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(min(m.offset, len(m.rows)-h), 0)
}

// tableHeight is the number of table rows that fit under the header.
func (m *Model) tableHeight() int {
	return max(m.height-headerLines-2, 1) // the column titles, the status line
}

// selected is the row under the cursor, or nil.
func (m *Model) selected() *table.Row {
	if m.cursor < len(m.rows) {
		return &m.rows[m.cursor]
	}
	return nil
}

// killCmd runs a kill off the UI's goroutine and reports its result.
func killCmd(kill func(ctx context.Context) (string, bool)) tea.Cmd {
	return func() tea.Msg {
		text, alarm := kill(context.Background())
		return killDone{text, alarm}
	}
}

// viewHint rewords what the engine says for the command line: the view
// has no --force.
func viewHint(s string) string {
	return strings.ReplaceAll(s, "; kill --force overrides the protected list", "; the live view never kills a protected process (procwalk kill --force does)")
}

// outcomeText says what happened to one target.
func outcomeText(o kill.Outcome) (string, bool) {
	what := fmt.Sprintf("pid %d (%s)", o.ID.PID, procwalk.Printable(o.Comm))
	switch {
	case o.Result == kill.ResultKilled:
		return what + ": killed (SIGKILL after the grace)", false
	case o.Result.Done():
		return what + ": " + o.Result.String(), false
	case o.Err != nil:
		return what + ": " + o.Result.String() + ": " + viewHint(procwalk.Printable(o.Err.Error())), true
	}
	return what + ": " + o.Result.String(), true
}

// reportText says what happened to a tree or a session.
func reportText(what string, r *kill.Report, err error) (string, bool) {
	if err != nil {
		return what + ": " + viewHint(procwalk.Printable(err.Error())), true
	}
	counts := map[string]int{}
	for _, o := range r.Outcomes {
		counts[o.Result.String()]++
	}
	text := fmt.Sprintf("%s: %d targets", what, len(r.Outcomes))
	for _, res := range []kill.Result{kill.ResultExited, kill.ResultKilled, kill.ResultGone, kill.ResultProtected, kill.ResultIdentityChanged, kill.ResultDenied, kill.ResultSurvived, kill.ResultEscaped, kill.ResultFailed} {
		if n := counts[res.String()]; n > 0 {
			text += fmt.Sprintf(", %d %s", n, res)
		}
	}
	if err := r.Err(); err != nil {
		return text + ": " + viewHint(procwalk.Printable(err.Error())), true
	}
	return text, false
}

// Refresh gathers one frame now, as a tick does, and returns it as the
// message Update takes: for --once and benchmarks.
func (m *Model) Refresh() tea.Msg { return m.gather()() }

// Processes is the number of processes of the frame shown.
func (m *Model) Processes() int {
	if !m.loaded {
		return 0
	}
	return len(m.frame.Snapshot.Procs)
}

// Frame gathers twice, interval apart (rates need two samples), and draws
// one screen of width × height as plain text ending in a newline, for no
// terminal: procwalk top --once.
func (m *Model) Frame(ctx context.Context, interval time.Duration, width, height int) (string, error) {
	m.width, m.height, m.plain = width, height, true
	for i := range 2 {
		if i == 1 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(interval):
			}
		}
		m.prime = i == 0
		msg := m.Refresh().(frameMsg)
		m.prime = false
		if msg.err != nil {
			return "", msg.err
		}
		m.reset = true // one frame, shown from its first row
		m.setFrame(msg.frame)
	}
	return m.Screen() + "\n", nil
}
