//go:build linux

package metric

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// metric.go holds the description of a metric, the lookup by name and the
// one rule that ranks by a metric. The rows are in catalogue.go.

// Kind says how a metric's values behave over time.
type Kind uint8

const (
	Gauge   Kind = iota + 1 // a level now: memory, threads, age
	Counter                 // only grows over the life of what it counts: CPU time, bytes read
	Rate                    // a counter's change over time between two gathers
)

func (k Kind) String() string {
	switch k {
	case Gauge:
		return "gauge"
	case Counter:
		return "counter"
	case Rate:
		return "rate"
	}
	return "unknown"
}

// ProcessValue is a metric of process p as seen in snapshot s.
type ProcessValue func(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool)

// SessionValue is a metric of session ss, grouped from a snapshot that
// read the optional fields read, at time now.
type SessionValue func(ss *session.Session, read procwalk.Fields, now time.Time) (float64, bool)

// Desc describes one metric: its one name in every output, its unit and
// kind, what it reads, and how to get its value for a process, a session
// or both.
type Desc struct {
	// Name is the metric's one name in every output (JSON, Telegraf, Lua,
	// --sort, --columns): snake_case, ending in its unit.
	Name string
	// Aliases are short names accepted wherever a name is typed (ps and
	// sessions --sort and --columns, Lua fields, Telegraf's
	// process_top_by), e.g. "rss".
	Aliases []string
	// Label is the column heading, e.g. "RSS".
	Label string
	// Unit is bytes, seconds, percent, cores, tokens, usd, bytes/s, bytes/min,
	// or "" for a count or an id.
	Unit string
	Kind Kind
	// Integer values are whole numbers (bytes, ids, counts): Telegraf and
	// JSON write them as integers, and their field type never changes.
	// Flag values are 1 or 0, written as true or false.
	Integer, Flag bool
	// ID marks an identifier (pid, uid ...): a number, not a quantity, so
	// it is never summed over a session nor ranked by.
	ID bool
	// Needs are the optional /proc files a process's value reads (stat and
	// statm are always read). Rates need two gathers besides.
	Needs procwalk.Fields
	// Help says in one line what the metric is; SessionHelp what it is for
	// a session, when that needs saying ("sum of ...").
	Help, SessionHelp string
	// When says, for the tables of the READMEs, when a session has a value
	// beyond Needs and rates ("cgroup sessions under a memory limit");
	// empty: always.
	When string
	// Agent metrics are those of an agent session (session.AgentState).
	Agent bool

	process ProcessValue // nil: not a metric of a process
	session SessionValue // nil: not a metric of a session
}

// OfProcess reports whether the metric has a value for a process.
func (d *Desc) OfProcess() bool { return d.process != nil }

// OfSession reports whether the metric has a value for a session.
func (d *Desc) OfSession() bool { return d.session != nil }

// Process is the metric of p as seen in s, and false when it is absent:
// not read, denied, not measured yet (a rate), or not a metric of a
// process. Absent is never 0.
func (d *Desc) Process(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
	if d.process == nil {
		return 0, false
	}
	return d.process(s, p)
}

// Session is the metric of ss, grouped from a snapshot that read the
// optional fields read, at time now; false when it is absent: not read,
// not measured yet, not applying (a limit of a session without a cgroup),
// or not a metric of a session. Absent is never 0.
func (d *Desc) Session(ss *session.Session, read procwalk.Fields, now time.Time) (float64, bool) {
	if d.session == nil {
		return 0, false
	}
	return d.session(ss, read, now)
}

// HelpFor is the one-line meaning of the metric for a session (session
// true) or a process.
func (d *Desc) HelpFor(session bool) string {
	if session && d.SessionHelp != "" {
		return d.SessionHelp
	}
	return d.Help
}

// Is reports whether name is the metric's name or one of its aliases.
func (d *Desc) Is(name string) bool {
	return d.Name == name || slices.Contains(d.Aliases, name)
}

// Processes returns the metrics that have a value for a process, in
// catalogue order.
func Processes() []Desc {
	return slices.DeleteFunc(All(), func(d Desc) bool { return !d.OfProcess() })
}

// Sessions returns the metrics that have a value for a session, in
// catalogue order.
func Sessions() []Desc {
	return slices.DeleteFunc(All(), func(d Desc) bool { return !d.OfSession() })
}

// Lookup finds a metric by its name or an alias, case-insensitively. It
// builds the catalogue anew, up to the metric's family: keep a Catalogue
// where lookups are many.
func Lookup(name string) (Desc, bool) {
	name = normal(name)
	for _, family := range families() {
		for _, d := range family() {
			if d.Is(name) {
				return d, true
			}
		}
	}
	return Desc{}, false
}

func normal(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Names lists the names of metrics, for help and error messages.
func Names(metrics []Desc) []string {
	names := make([]string, len(metrics))
	for i := range metrics {
		names[i] = metrics[i].Name
	}
	return names
}

// Catalogue indexes All by name and alias. Build one and keep it where
// metrics are looked up often (Lua reads a field by name on every access).
type Catalogue struct {
	list  []Desc
	index map[string]int
}

// NewCatalogue indexes All.
func NewCatalogue() *Catalogue {
	c := &Catalogue{list: All(), index: make(map[string]int)}
	for i, d := range c.list {
		c.index[d.Name] = i
		for _, a := range d.Aliases {
			c.index[a] = i
		}
	}
	return c
}

// Lookup finds a metric by its name or an alias, case-insensitively.
func (c *Catalogue) Lookup(name string) (*Desc, bool) {
	i, ok := c.index[name]
	if !ok {
		i, ok = c.index[normal(name)]
	}
	if !ok {
		return nil, false
	}
	return &c.list[i], true
}

// Compare is the one rule every ranking by a metric follows, for values a
// and b and whether each has one: the larger value first, one without a
// value (not read, denied, not measured) after every one with a value,
// NaN after every number. It returns 0 for a tie, which the caller breaks
// (processes by the lower pid, sessions keep their order).
func Compare(a float64, aok bool, b float64, bok bool) int {
	switch {
	case aok != bok:
		if aok {
			return -1
		}
		return 1
	case !aok:
		return 0
	}
	return cmp.Compare(b, a)
}

// keyed is a value worked out once for a sort.
type keyed[T any] struct {
	v  float64
	ok bool
	x  T
}

// Sort sorts procs of s by d: largest first, those without a value last,
// ties by pid. Each value is worked out once, not at every comparison (ps
// sorts every process).
func Sort(s *procwalk.Snapshot, procs []*procwalk.Process, d *Desc) {
	keys := make([]keyed[*procwalk.Process], len(procs))
	for i, p := range procs {
		v, ok := d.Process(s, p)
		keys[i] = keyed[*procwalk.Process]{v, ok, p}
	}
	slices.SortFunc(keys, func(a, b keyed[*procwalk.Process]) int {
		return cmp.Or(Compare(a.v, a.ok, b.v, b.ok), cmp.Compare(a.x.ID.PID, b.x.ID.PID))
	})
	for i := range keys {
		procs[i] = keys[i].x
	}
}

// Top keeps the n first of procs in the order Sort gives, in place,
// without sorting the rest: it returns the top, largest first, which
// shares procs' array.
func Top(s *procwalk.Snapshot, procs []*procwalk.Process, n int, d *Desc) []*procwalk.Process {
	if n <= 0 {
		return procs[:0]
	}
	top := procs[:0]
	vals := make([]keyed[struct{}], 0, n) // the values of top, in step with it
	for _, p := range procs {
		v, ok := d.Process(s, p)
		// Insert p into top (sorted, at most n long), shifting the rest.
		i := len(top)
		for i > 0 && cmp.Or(Compare(v, ok, vals[i-1].v, vals[i-1].ok), cmp.Compare(p.ID.PID, top[i-1].ID.PID)) < 0 {
			i--
		}
		if i >= n {
			continue
		}
		if len(top) < n {
			top = append(top, nil)
			vals = append(vals, keyed[struct{}]{})
		}
		copy(top[i+1:], top[i:len(top)-1])
		copy(vals[i+1:], vals[i:len(vals)-1])
		top[i], vals[i] = p, keyed[struct{}]{v: v, ok: ok}
	}
	return top
}

// SortSessions sorts sessions by d, stably: largest first, those without a
// value last, ties keeping their order.
func SortSessions(sessions []session.Session, d *Desc, read procwalk.Fields, now time.Time) {
	keys := make([]keyed[int], len(sessions))
	for i := range sessions {
		v, ok := d.Session(&sessions[i], read, now)
		keys[i] = keyed[int]{v, ok, i}
	}
	slices.SortStableFunc(keys, func(a, b keyed[int]) int { return Compare(a.v, a.ok, b.v, b.ok) })
	sorted := make([]session.Session, len(sessions))
	for i, k := range keys {
		sorted[i] = sessions[k.x]
	}
	copy(sessions, sorted)
}
