//go:build linux

package frame

import (
	"context"
	"fmt"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Config configures a Pipeline. The zero value gathers stat and statm of
// every process from the FS's /proc, with rates, on the wall clock,
// without sessions, each frame valid until the next gather.
type Config struct {
	// Fields are read of every process, besides stat, statm and what the
	// Grouper plans.
	Fields procwalk.Fields
	// Clock dates each frame; nil is the wall clock.
	Clock procwalk.Clock
	// Source takes the snapshots; nil is a Scanner of the FS.
	Source procwalk.Source
	// Grouper groups each snapshot into sessions, the pipeline's last
	// stage; it also takes part in the scan (it asks tmux meanwhile, walks
	// cgroupfs before). Nil: frames have no sessions.
	Grouper *session.Grouper
	// System reads the host's load, memory and pressure with each frame.
	System bool
	// NoRates skips the Sampler: no Rates, nothing kept between gathers
	// for them.
	NoRates bool
	// Memory says how long frames stay valid and what the process gives
	// back between them (memory.go).
	Memory Memory
}

// Pipeline is procwalk's one pipeline: plan what to read, scan, sample
// rates, group sessions, and hand out one Frame per gather. It owns the
// memory its frames live in (see Memory). It is not safe for concurrent
// use: one goroutine gathers and reads more at a time (Run's).
type Pipeline struct {
	fs      procwalk.FS
	cfg     Config
	monitor *procwalk.Monitor
	grouper *session.Grouper
	// gen counts the scans (frames, and Prime's scans); valid is the
	// oldest generation whose memory is still its frame's.
	gen, valid uint64
	memory     memoryState
}

// New returns a Pipeline reading fs (or cfg.Source).
func New(fs procwalk.FS, cfg Config) *Pipeline {
	p := &Pipeline{fs: fs, cfg: cfg, grouper: cfg.Grouper}
	mc := procwalk.MonitorConfig{Fields: cfg.Fields, Clock: cfg.Clock, Source: cfg.Source, NoRates: cfg.NoRates}
	switch cfg.Memory.Retention {
	case KeepAll:
		mc.Keep = true
	case HoldLast:
		mc.KeepLast = true
	}
	p.monitor = procwalk.NewMonitor(fs, mc, p.stages()...)
	return p
}

func (p *Pipeline) stages() []procwalk.Stage {
	if p.grouper == nil {
		return nil
	}
	return []procwalk.Stage{p.grouper}
}

// Grouper is the pipeline's session Grouper, nil without one: for what a
// consumer asks of it beyond a frame's sessions (a tmux pane's foreground).
func (p *Pipeline) Grouper() *session.Grouper { return p.grouper }

// SetGrouper replaces the Grouper from the next gather on (nil: no
// sessions): a live view groups every kind for its sessions view, and only
// the cgroups of its gauges for the others. A Grouper's cumulative
// counters are its own: one set aside and set again later goes on from
// where it was.
func (p *Pipeline) SetGrouper(g *session.Grouper) {
	p.grouper = g
	p.monitor.SetStages(p.stages()...)
}

// SetFields changes what is read of every process from the next gather on
// (Config.Fields). A rate needs its field in two gathers in a row.
func (p *Pipeline) SetFields(f procwalk.Fields) { p.monitor.SetFields(f) }

// Gather scans once as planned, samples rates against the gather before
// and groups the snapshot. The error is the source's: a root that cannot
// be listed.
func (p *Pipeline) Gather() (Frame, error) {
	start := time.Now()
	snap, err := p.monitor.Gather()
	p.retire() // the scan recycled what the retention let go
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Snapshot: snap, Generation: p.gen, owner: p}
	if p.grouper != nil {
		f.Sessions, f.Notes = p.grouper.Group(snap)
	}
	if p.cfg.System {
		f.System = p.fs.System()
	}
	f.Duration = time.Since(start)
	return f, nil
}

// Prime takes the first sample of a pair for rates: a scan of what rates
// need alone, not grouped, no frame. The next Gather then has rates.
func (p *Pipeline) Prime() error {
	err := p.monitor.Prime()
	p.retire()
	return err
}

// Sample gathers a frame with rates measured over interval: Prime, a wait
// until interval has passed since it started, and Gather. ctx cancels the
// wait.
func (p *Pipeline) Sample(ctx context.Context, interval time.Duration) (Frame, error) {
	start := time.Now()
	if err := p.Prime(); err != nil {
		return Frame{}, err
	}
	wait := time.NewTimer(interval - time.Since(start))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return Frame{}, fmt.Errorf("interrupted while sampling rates over %v: %w", interval, ctx.Err())
	case <-wait.C:
	}
	return p.Gather()
}

// retire counts a scan and moves the oldest valid generation past the
// frames whose memory it recycled: every one before it with Recycle, every
// one but the last before it with HoldLast, none with KeepAll. A scan that
// failed counts too: it recycled all the same.
func (p *Pipeline) retire() {
	p.gen++
	switch p.cfg.Memory.Retention {
	case Recycle:
		p.valid = p.gen
	case HoldLast:
		p.valid = p.gen - 1
	}
}

// check panics with a RecycledError when generation gen is no longer valid.
func (p *Pipeline) check(gen uint64) {
	if gen < p.valid {
		panic(&RecycledError{Generation: gen, Newest: p.gen, Retention: p.cfg.Memory.Retention})
	}
}
