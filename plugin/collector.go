package plugin

import (
	"fmt"
	"io"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Gather is what one gather saw: the snapshot (with rates from the previous
// gather) and its sessions. A hook may keep it: a Collector with a hook
// never reuses a snapshot's storage (a Lua script keeps process objects in
// its state, each pointing into the snapshot it came from).
type Gather struct {
	Snapshot *procwalk.Snapshot
	Sessions []session.Session
	// ReadMore reads fields of the snapshot's processes that the gather
	// did not (the Monitor's ReadMore), for a hook that shows more.
	ReadMore func(procs []*procwalk.Process, f procwalk.Fields) error
}

// A Hook adds lines to a gather's batch after procwalk's own: a script's
// metrics and actions, for example. Its error is reported as a partial
// failure; the batch is still written.
type Hook func(g *Gather, b *Batch) error

// Collector gathers batches of metrics, one per call, keeping what must
// persist between gathers: the Monitor (the source's buffers, the rate
// sampler), the session grouper's counters and the encoder's buffer. It is
// not safe for concurrent use.
type Collector struct {
	cfg      Config
	monitor  *procwalk.Monitor
	grouper  sessionGrouper
	rank     metric.Desc   // ranks the processes of each session
	procMets []metric.Desc // procwalk_process's fields
	sessMets []metric.Desc // procwalk_session's fields
	lookup   procstatLookup
	lw       lineWriter
	top      []*procwalk.Process // reused by writeProcesses
	cmdline  []byte              // reused: a joined command line to match
	problems []error             // partial failures of the current gather
	notes    []string            // what grouping could not do (no tmux server ...)
	// skippedGathers counts the gathers Execd merged away (stdin lines
	// answered by one gather with others), for the self metrics.
	skippedGathers int

	// The last gather's counts, for benchmarks and returnMemory.
	lastProcesses, lastSessions int
	// allocatedAtCollection is the heap's cumulative allocation at the
	// last collection returnMemory ran (see collectAfterBytes).
	allocatedAtCollection uint64
}

// NewCollector checks cfg and returns a Collector reading fs.
func NewCollector(fs procwalk.FS, cfg Config) (*Collector, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	c := &Collector{cfg: cfg}
	if c.cfg.Schema == "" {
		c.cfg.Schema = SchemaProcwalk
	}
	c.rank, _ = processRanking(cfg.Processes.By)
	c.procMets = ProcessFields()
	c.sessMets = SessionFields()
	fields := cfg.Fields | c.rank.Needs
	var stages []procwalk.Stage
	switch c.cfg.Schema {
	case SchemaProcstat:
		fields |= procstatFields
		c.lookup = newProcstatLookup(&c.cfg.Procstat, cfg.SkipPID)
	case SchemaProcwalk:
		if len(c.cfg.Group.Kinds) == 0 {
			c.cfg.Group.Kinds = DefaultKinds()
		}
		if c.cfg.Group.Users == nil {
			c.cfg.Group.Users = cfg.Users
		}
		g, err := newGrouper(fs, c.cfg.Group)
		if err != nil {
			return nil, fmt.Errorf("%w: sessions: %w", ErrConfig, err)
		}
		c.grouper = g
		stages = append(stages, g)
		if cfg.Processes.Top > 0 && cfg.Processes.Match != nil {
			// Matching looks at every member's command line; without a
			// match only the top members' are read, after ranking.
			fields |= procwalk.FieldCmdline
		}
	}
	// A hook may keep a gather's snapshot (see Gather): then no gather
	// reuses the storage of the one before.
	c.monitor = procwalk.NewMonitor(fs, procwalk.MonitorConfig{Fields: fields, Keep: cfg.Hook != nil, Source: cfg.Source}, stages...)
	return c, nil
}

// Prime gathers once without emitting, so that the next batch has rates.
func (c *Collector) Prime() error {
	_, err := c.Gather()
	return err
}

// returnMemory gives the kernel back what the process does not need until
// the next gather: the garbage, and the pages of the Process array the
// Monitor keeps for that gather (zeroed when handed back; the next scan
// touches them again). Nothing keeps pointers into a gather's snapshot
// once it is written: the sampler and the grouper keep ProcIDs and copies,
// sessions their own strings, c.top is cleared; with a hook, which may
// keep it, the Monitor keeps every snapshot whole.
//
// On a host of fewer than collectEveryBatchProcs processes the collection
// runs once the gathers since the last one allocated collectAfterBytes: at
// 2,500 processes one batch in three or four then pays a forced
// collection (about a tenth of a gather's CPU), for a peak resident size
// about 1.5 MB higher. On bigger hosts every batch is followed by one, as
// the peak must stay under execd's 20 MiB at 10,000 processes (README).
func (c *Collector) returnMemory() {
	c.monitor.Release()
	allocated := heapAllocatedBytes()
	if c.lastProcesses < collectEveryBatchProcs && c.allocatedAtCollection != 0 && allocated-c.allocatedAtCollection < collectAfterBytes {
		return
	}
	debug.FreeOSMemory()
	c.allocatedAtCollection = heapAllocatedBytes()
}

// collectAfterBytes is how much the gathers since returnMemory's last
// collection may allocate before it runs another, on a host of fewer than
// collectEveryBatchProcs processes (a gather there leaves about a quarter
// of a megabyte of garbage).
const (
	collectAfterBytes      = 1 << 20
	collectEveryBatchProcs = 5000
)

// heapAllocatedBytes is the bytes allocated on the heap since the process
// started, garbage included: runtime/metrics reads it without stopping
// the world (runtime.ReadMemStats would).
func heapAllocatedBytes() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Gather gathers once without writing anything: for a caller that runs a
// hook on the gather itself (a script worker, whose parent writes the
// batch).
func (c *Collector) Gather() (*Gather, error) {
	c.problems, c.notes = c.problems[:0], nil
	return c.gather()
}

// gather scans, computes rates and groups sessions. Its error wraps
// ErrNothingGathered: without a scan there is nothing to emit. What grouping
// could not do is kept in c.notes: informational, not errors (a host
// without tmux has no tmux sessions).
func (c *Collector) gather() (*Gather, error) {
	// With sessions, tmux answers while we scan and cgroup sessions come
	// from a walk of cgroupfs rather than every process's cgroup file.
	snap, err := c.monitor.Gather()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNothingGathered, err)
	}
	g := &Gather{Snapshot: snap, ReadMore: c.monitor.ReadMore}
	if c.grouper != nil {
		g.Sessions, c.notes = c.grouper.Group(snap)
	}
	return g, nil
}

// Batch is the lines of one gather, in the making. Hooks add theirs to it.
type Batch struct {
	w metricWriter
	t time.Time
}

// WriteBatch gathers once and writes every line of the batch to out in one
// Write, so a reader never sees half a batch end in half a line. Partial
// failures go to log (which may be nil) and the batch is still written;
// the error is ErrNothingGathered's or out's.
func (c *Collector) WriteBatch(out io.Writer, log Logger) error {
	c.lw.reset()
	if err := c.collect(&c.lw); err != nil {
		return err
	}
	c.report(log)
	if c.lw.err != nil && log != nil {
		log.Errorf("%d line(s) dropped by the line-protocol encoder, first: %v", c.lw.dropped, c.lw.err)
	}
	_, err := out.Write(c.lw.bytes())
	return err
}

// Accumulate gathers once and adds every metric to acc, reporting partial
// failures with acc.AddError and grouping notes to log (which may be nil).
func (c *Collector) Accumulate(acc Accumulator, log Logger) error {
	w := &accWriter{acc: acc}
	if err := c.collect(w); err != nil {
		return err
	}
	for _, p := range c.problems {
		acc.AddError(p)
	}
	if log != nil {
		for _, n := range c.notes {
			log.Debugf("sessions: %s", n)
		}
	}
	return nil
}

// report logs the current gather's partial failures and notes.
func (c *Collector) report(log Logger) {
	if log == nil {
		return
	}
	for _, p := range c.problems {
		log.Warnf("partial gather: %v", p)
	}
	for _, n := range c.notes {
		log.Debugf("sessions: %s", n)
	}
}

// collect gathers once and writes the batch to w: the schema's lines, the
// hook's, then the self metrics, which count everything before them.
func (c *Collector) collect(w metricWriter) error {
	start := time.Now()
	g, err := c.Gather()
	if err != nil {
		return err
	}
	snap := g.Snapshot
	c.lastProcesses, c.lastSessions = len(snap.Procs), len(g.Sessions)
	t := snap.Time
	switch c.cfg.Schema {
	case SchemaProcstat:
		c.writeProcstat(w, snap)
	default:
		for i := range g.Sessions {
			writeSession(w, &g.Sessions[i], snap.Fields, t, c.sessMets)
			if g.Sessions[i].Agent != nil {
				writeAgentStatus(w, &g.Sessions[i], t)
			}
		}
		if c.cfg.Processes.Top > 0 {
			for i := range g.Sessions {
				c.writeProcesses(w, snap, &g.Sessions[i])
			}
		}
	}
	if c.cfg.Hook != nil {
		if err := c.cfg.Hook(g, &Batch{w: w, t: t}); err != nil {
			c.problems = append(c.problems, fmt.Errorf("hook: %w", err))
		}
	}
	if c.cfg.NoSelfMetrics {
		return nil
	}
	st := selfStats{
		schema:        c.cfg.Schema,
		gatherSeconds: time.Since(start).Seconds(),
		scanSeconds:   snap.Duration.Seconds(),
		sessions:      len(g.Sessions),
		errors:        len(c.problems),
		visibility:    snap.Visibility,
		processes:     len(snap.Procs),
		skipped:       c.skippedGathers,
		source:        snap.Source,
		note:          snap.SourceNote,
	}
	if lw, ok := w.(*lineWriter); ok {
		st.lines, st.dropped = lw.lines, lw.dropped
	} else if aw, ok := w.(*accWriter); ok {
		st.lines = aw.lines
	}
	st.cpuSeconds, st.maxRSSBytes = selfUsage()
	writeSelf(w, &st, t)
	return nil
}

// writeProcesses writes the top members of s, ranked by the catalogue's
// one rule: largest first, a member without a value (PSS not read, a rate
// not measured yet) after every one with a value, ties by lower pid.
func (c *Collector) writeProcesses(w metricWriter, snap *procwalk.Snapshot, s *session.Session) {
	match := c.cfg.Processes.Match
	top := c.top[:0]
	for _, id := range s.Members {
		p := snap.Lookup(id)
		if p == nil {
			continue
		}
		if match != nil {
			if p.ID.PID == c.cfg.SkipPID {
				continue // its own command line holds the pattern
			}
			if !match.MatchString(p.Comm) {
				c.cmdline = appendCmdline(c.cmdline[:0], p.Cmdline)
				if !match.Match(c.cmdline) {
					continue
				}
			}
		}
		top = append(top, p)
	}
	top = metric.Top(snap, top, c.cfg.Processes.Top, &c.rank)
	if err := c.monitor.ReadMore(top, procwalk.FieldCmdline); err != nil {
		c.problems = append(c.problems, fmt.Errorf("reading the command lines of session %s:%s's top processes: %w", s.Kind, s.Name, err))
	}
	for i, p := range top {
		writeProcess(w, snap, s, i+1, p, c.rank.Name, c.procMets)
	}
	clear(top[:cap(top)]) // its pointers would keep this snapshot's array alive
	c.top = top[:0]
}

// writeProcstat writes a procstat line per matching process and the
// procstat_lookup line.
func (c *Collector) writeProcstat(w metricWriter, snap *procwalk.Snapshot) {
	matched := 0
	for i := range snap.Procs {
		p := &snap.Procs[i]
		user := ""
		if p.Read&procwalk.FieldStatus != 0 {
			user = c.cfg.Users.Name(p.RealUID)
		}
		c.cmdline = appendCmdline(c.cmdline[:0], p.Cmdline)
		if !c.lookup.matches(p, user, c.cmdline) {
			continue
		}
		matched++
		writeProcstat(w, &c.lookup, p, &snap.Host, user, snap.Time)
	}
	writeLookup(w, &c.lookup, matched, snap.Time)
}

// selfUsage is this process's CPU time so far and its peak resident memory.
func selfUsage() (cpuSeconds float64, maxRSSBytes uint64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), uint64(ru.Maxrss) << 10 // Maxrss is in KiB on Linux
}
