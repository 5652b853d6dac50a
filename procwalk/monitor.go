//go:build linux

package procwalk

import (
	"context"
	"fmt"
	"time"
)

// monitor.go is procwalk's one pipeline: plan what to read, scan, turn
// counters into rates, and hand the snapshot to whoever groups or shows it.
// Every consumer (the CLI's commands, the Telegraf collector, Lua's run,
// watch and telegraf --script, the live view) gathers through a Monitor
// instead of looping over a Scanner itself.

// A Source takes snapshots for a Monitor: the /proc Scanner, or another
// source of the same values (a BPF task iterator is planned) behind the same
// Monitor, unseen by consumers.
type Source interface {
	// SnapshotSelect scans every process, reading fields for all of them
	// and what sel selects for some (see Selector).
	SnapshotSelect(fields Fields, sel Selector) (*Snapshot, error)
	// ReadMore reads fields f of processes of an earlier snapshot.
	ReadMore(procs []*Process, f Fields) error
	// Recycle takes back a snapshot's storage for the next scan.
	Recycle(s *Snapshot)
	// ReleaseSpare returns the pages of recycled storage to the kernel.
	ReleaseSpare()
}

// A Stage takes part in every gather of a Monitor: it adds to the plan
// what it reads, and prepares before the scan what is best done meanwhile
// or first. A session Grouper is one: it asks tmux while /proc is read and
// walks cgroupfs before the scan, so that few processes' cgroup files are
// read.
type Stage interface {
	// Plan returns the fields the stage reads from every process, and a
	// Selector for those it reads from some.
	Plan() (Fields, Selector)
	// Prepare runs before a scan of fields (the scan's whole field set);
	// the function it returns, when not nil, runs once the scan is done.
	Prepare(fields Fields) (done func())
}

// MonitorConfig configures a Monitor. The zero value reads stat and statm
// alone, on the wall clock, from /proc under the FS, with rates.
type MonitorConfig struct {
	// Fields are read for every process, besides stat and statm and what
	// the stages plan.
	Fields Fields
	// Clock dates each snapshot; nil is the wall clock.
	Clock Clock
	// Source takes the snapshots; nil is a Scanner of the FS.
	Source Source
	// Keep says that consumers hold on to snapshots (or pointers into
	// them) after the next gather: a Lua state keeping process objects, a
	// caller comparing two gathers. Without it, each gather reuses the
	// storage of the one before, so a long-running Monitor does not
	// allocate a Process array per gather.
	Keep bool
	// KeepLast says that consumers hold the last snapshot while the next
	// is gathered, and none older: a live view shows one frame while it
	// gathers the next. Each gather reuses the storage of the one two
	// gathers back.
	KeepLast bool
	// NoRates skips the Sampler: no Rates are filled, nothing is kept
	// between gathers for them.
	NoRates bool
}

// Monitor gathers snapshots, one per call, and keeps what must persist
// between gathers: the source's buffers, the rate sampler, the last
// snapshot until its storage is reused. It is not safe for concurrent use.
type Monitor struct {
	src     Source
	clock   Clock
	cfg     MonitorConfig
	stages  []Stage
	sampler Sampler
	last    *Snapshot // recycled by the next gather unless cfg.Keep
	held    *Snapshot // with cfg.KeepLast: the last but one, recycled next
}

// NewMonitor returns a Monitor reading fs (or cfg.Source) with stages
// taking part in every gather.
func NewMonitor(fs FS, cfg MonitorConfig, stages ...Stage) *Monitor {
	m := &Monitor{src: cfg.Source, clock: cfg.Clock, cfg: cfg, stages: stages}
	if m.src == nil {
		m.src = NewScanner(fs)
	}
	if m.clock == nil {
		m.clock = SystemClock{}
	}
	return m
}

// SetFields changes the fields read for every process from the next gather
// on (MonitorConfig.Fields): a live view reads what its screen shows, and
// that changes with the view. A rate needs its field in two gathers in a
// row, so rates of a field just added start one gather later.
func (m *Monitor) SetFields(f Fields) { m.cfg.Fields = f }

// SetStages replaces the stages taking part in every gather from the next
// one on: a live view groups every session kind for its sessions view and
// the cgroups of its gauges alone for the others.
func (m *Monitor) SetStages(stages ...Stage) { m.stages = stages }

// Plan returns what every gather reads: the fields read for every process
// (the config's and the stages') and a Selector for the fields read for
// some.
func (m *Monitor) Plan() (Fields, Selector) {
	fields := m.cfg.Fields
	var sels []Selector
	for _, st := range m.stages {
		f, sel := st.Plan()
		fields |= f
		if sel.Select != nil && sel.Fields != 0 {
			sels = append(sels, sel)
		}
	}
	return fields, joinSelectors(sels)
}

// joinSelectors returns a Selector selecting what any of sels does.
func joinSelectors(sels []Selector) Selector {
	switch len(sels) {
	case 0:
		return Selector{}
	case 1:
		return sels[0]
	}
	var all Fields
	for _, s := range sels {
		all |= s.Fields
	}
	return Selector{Fields: all, Select: func(p *Process) Fields {
		var f Fields
		for _, s := range sels {
			f |= s.Select(p)
		}
		return f
	}}
}

// Gather scans once as planned, with the stages prepared, and fills the
// rates of every process also seen by the previous gather (or Prime). The
// snapshot's storage is reused by the next gather unless the config Keeps
// snapshots. The error is the source's: a root that cannot be listed.
func (m *Monitor) Gather() (*Snapshot, error) {
	m.recycle()
	fields, sel := m.Plan()
	var done []func()
	for _, st := range m.stages {
		if d := st.Prepare(fields); d != nil {
			done = append(done, d)
		}
	}
	snap, err := m.scan(fields, sel)
	for _, d := range done {
		d()
	}
	if err != nil {
		return nil, err
	}
	m.last = snap
	return snap, nil
}

// Prime takes the first sample of a pair for rates: a scan of what rates
// need alone (stat and statm, and io and smaps_rollup when the plan reads
// them), with no stage prepared. The next Gather then has rates.
func (m *Monitor) Prime() error {
	m.recycle()
	fields, _ := m.Plan()
	snap, err := m.scan(fields&rateFields, Selector{})
	if err != nil {
		return err
	}
	m.last = snap
	return nil
}

// rateFields are the optional fields the Sampler turns into rates.
const rateFields = FieldIO | FieldSmaps

// Sample gathers once with rates measured over interval: a Prime, a wait
// until interval has passed since it started, and a Gather. ctx cancels
// the wait.
func (m *Monitor) Sample(ctx context.Context, interval time.Duration) (*Snapshot, error) {
	start := time.Now()
	if err := m.Prime(); err != nil {
		return nil, err
	}
	wait := time.NewTimer(interval - time.Since(start))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("interrupted while sampling rates over %v: %w", interval, ctx.Err())
	case <-wait.C:
	}
	return m.Gather()
}

// scan takes a snapshot dated by the clock and samples it for rates.
func (m *Monitor) scan(fields Fields, sel Selector) (*Snapshot, error) {
	t := m.clock.Now()
	snap, err := m.src.SnapshotSelect(fields, sel)
	if err != nil {
		return nil, err
	}
	snap.Time = t
	if !m.cfg.NoRates {
		m.sampler.Observe(snap)
	}
	return snap, nil
}

// ReadMore reads fields f of processes picked from the last gather: a
// costly file for the few a consumer shows (the top members of each
// session, the subtree a tree draws, the processes a filter kept) rather
// than for every process. The last snapshot's Selected and Visibility
// count what was read, refused or malformed, as if its scan had read it.
// The Sampler measures the rates of io and smaps_rollup read this way
// (IO rates, PSS and USS growth) against the gather before, where that
// read them of the same process too: a live view reading its rows on
// screen each refresh has their rates from the second refresh on.
func (m *Monitor) ReadMore(procs []*Process, f Fields) error {
	return m.ReadMoreOf(m.last, procs, f)
}

// ReadMoreOf is ReadMore of the processes of snapshot s, which may be an
// older one the consumer still holds: s's Selected and Visibility count
// what was read, and the Sampler measures rates only when s is the last.
func (m *Monitor) ReadMoreOf(s *Snapshot, procs []*Process, f Fields) error {
	type outcome struct{ denied, malformed Fields }
	before := make([]outcome, len(procs))
	for i, p := range procs {
		before[i] = outcome{p.Denied, p.Malformed}
	}
	if err := m.src.ReadMore(procs, f); err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	s.Selected |= f &^ s.Fields
	v := &s.Visibility
	for i, p := range procs {
		if before[i].malformed == 0 && p.Malformed != 0 {
			v.Malformed++ // the scan counts a process once, however many files
		}
		(p.Denied &^ before[i].denied).each(func(d Fields) { v.addDenied(d.String()) })
	}
	if !m.cfg.NoRates && f&rateFields != 0 && s == m.last {
		m.sampler.ObserveMore(s.members(procs), f)
	}
	return nil
}

// Release hands the last snapshot's storage back for the next gather
// (unless the config Keeps snapshots), with KeepLast the one before it
// too, and returns its pages to the kernel: for a long-running consumer
// idle until its next gather. The last snapshot must not be used
// afterwards.
func (m *Monitor) Release() {
	m.recycle()
	if m.cfg.KeepLast {
		m.recycle() // the last, held by the first
	}
	m.src.ReleaseSpare()
}

// recycle hands the last snapshot's storage to the source, unless
// consumers keep snapshots; with KeepLast, the one before it.
func (m *Monitor) recycle() {
	switch {
	case m.cfg.Keep:
	case m.cfg.KeepLast:
		m.giveBack(m.held)
		m.held = m.last
	default:
		m.giveBack(m.last)
	}
	m.last = nil
}

// giveBack marks s recycled, so that a consumer that kept it past the
// retention fails loudly (ErrRecycled), and hands its storage to the
// source.
func (m *Monitor) giveBack(s *Snapshot) {
	if s != nil {
		s.recycled = true
		m.src.Recycle(s)
	}
}
