//go:build linux

package plugin

import (
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// A Hook adds lines to a gather's batch after procwalk's own: a script's
// metrics and actions, for example. Its error is reported as a partial
// failure; the batch is still written. A Collector with a hook keeps every
// frame (frame.KeepAll): a Lua script in this process keeps process
// objects in its state, each pointing into the snapshot it came from.
type Hook func(f frame.Frame, b *Batch) error

// Collector gathers batches of metrics, one per call, keeping what must
// persist between gathers: the Pipeline (the source's buffers, the rate
// sampler, the session grouper's counters) and the encoder's buffer. It is
// not safe for concurrent use.
type Collector struct {
	cfg      Config
	pipeline *frame.Pipeline
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

	// The last gather's counts, for benchmarks.
	lastProcesses, lastSessions int
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
	var grouper *session.Grouper
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
		g, err := session.NewGrouper(fs, c.cfg.Group)
		if err != nil {
			return nil, fmt.Errorf("%w: sessions: %w", ErrConfig, err)
		}
		grouper = g
		if cfg.Processes.Top > 0 && cfg.Processes.Match != nil {
			// Matching looks at every member's command line; without a
			// match only the top members' are read, after ranking.
			fields |= procwalk.FieldCmdline
		}
	}
	mem := frame.Memory{Retention: frame.Recycle}
	if cfg.Hook != nil && !cfg.HookCopies {
		mem.Retention = frame.KeepAll // see Hook
	}
	c.pipeline = frame.New(fs, frame.Config{Fields: fields, Source: cfg.Source, Grouper: grouper, Memory: mem})
	return c, nil
}

// Prime gathers once without emitting, so that the next batch has rates.
func (c *Collector) Prime() error {
	_, err := c.Gather()
	return err
}

// Gather gathers once without writing anything: for a caller that runs a
// hook on the frame itself.
func (c *Collector) Gather() (frame.Frame, error) {
	c.problems, c.notes = c.problems[:0], nil
	if c.cfg.Schema == SchemaProcstat {
		c.cfg.Users.Refresh() // its user tag; a Grouper refreshes its own (procwalk.Users)
	}
	f, err := c.pipeline.Gather()
	if err != nil {
		return f, fmt.Errorf("%w: %w", ErrNothingGathered, err)
	}
	c.notes = f.Notes
	return f, nil
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
	f, err := c.Gather()
	if err != nil {
		return err
	}
	return c.writeFrame(f, out, log)
}

// writeFrame writes the batch of frame f to out in one Write.
func (c *Collector) writeFrame(f frame.Frame, out io.Writer, log Logger) error {
	c.lw.reset()
	c.collect(f, &c.lw)
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
	f, err := c.Gather()
	if err != nil {
		return err
	}
	c.collect(f, &accWriter{acc: acc})
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

// collect writes the batch of frame f to w: the schema's lines, the
// hook's, then the self metrics, which count everything before them.
func (c *Collector) collect(f frame.Frame, w metricWriter) {
	start := time.Now()
	snap := f.Snapshot
	c.lastProcesses, c.lastSessions = len(snap.Procs), len(f.Sessions)
	t := snap.Time
	switch c.cfg.Schema {
	case SchemaProcstat:
		c.writeProcstat(w, snap)
	default:
		for i := range f.Sessions {
			writeSession(w, &f.Sessions[i], snap.Fields, t, c.sessMets)
			if f.Sessions[i].Agent != nil {
				writeAgentStatus(w, &f.Sessions[i], t)
			}
		}
		if c.cfg.Processes.Top > 0 {
			for i := range f.Sessions {
				c.writeProcesses(w, f, &f.Sessions[i])
			}
		}
	}
	if c.cfg.Hook != nil {
		if err := c.cfg.Hook(f, &Batch{w: w, t: t}); err != nil {
			c.problems = append(c.problems, fmt.Errorf("hook: %w", err))
		}
	}
	if c.cfg.NoSelfMetrics {
		return
	}
	st := selfStats{
		schema: c.cfg.Schema,
		// The frame's gather (scan, grouping) and this batch's lines.
		gatherSeconds: (f.Duration + time.Since(start)).Seconds(),
		scanSeconds:   snap.Duration.Seconds(),
		sessions:      len(f.Sessions),
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
}

// writeProcesses writes the top members of s, ranked by the catalogue's
// one rule: largest first, a member without a value (PSS not read, a rate
// not measured yet) after every one with a value, ties by lower pid.
func (c *Collector) writeProcesses(w metricWriter, f frame.Frame, s *session.Session) {
	snap := f.Snapshot
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
	if err := f.ReadMore(top, procwalk.FieldCmdline); err != nil {
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
	// Summed in whole microseconds, getrusage's resolution, and divided
	// once: a sum of float seconds prints noise (0.30000000000000004).
	us := func(t syscall.Timeval) int64 { return int64(t.Sec)*1e6 + int64(t.Usec) }
	return float64(us(ru.Utime)+us(ru.Stime)) / 1e6, uint64(ru.Maxrss) << 10 // Maxrss is in KiB on Linux
}
