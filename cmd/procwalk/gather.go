//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// gather.go takes the snapshot a command shows, and says what it missed.

// pipeline opens --proc and returns a Pipeline of cfg on the command's
// clock and --source (cfg.Clock and cfg.Source are set here).
func (g *globals) pipeline(cfg frame.Config) (*frame.Pipeline, error) {
	fsys, err := g.openFS()
	if err != nil {
		return nil, err // names the root and the fix
	}
	if cfg.Source, err = g.snapshotSource(fsys); err != nil {
		return nil, err
	}
	cfg.Clock = g.clock
	return frame.New(fsys, cfg), nil
}

// snapshotSource returns the source --source chooses on fsys, once per
// run (bpfsource.Chooser): a BPF program is loaded at most once, a
// collection run around its load. When it is not the source asked for
// (BPF not allowed, or failing to load), one note says why on stderr, and
// /proc is read: never a failed gather.
func (g *globals) snapshotSource(fsys procwalk.FS) (procwalk.Source, error) {
	c := &g.chooser
	c.Mode, c.OneShot, c.Loading, c.Note = g.source, !g.longRunning, frame.CollectingGarbage, g.note
	src, err := c.Source(fsys)
	if err != nil {
		return nil, usageErrorf("--source: %v", err)
	}
	return src, nil
}

// gather takes the frame a command shows through p: one scan or, when
// rates are wanted, two --interval apart. CPU % and IO bytes/s need two
// samples, and the pipeline fills Rates on the second scan for every
// process seen in both; the first reads only what rates need. Processes
// first seen in the second scan have no rates (Rates.Measured false). ctx
// cancels the wait between the scans.
func (g *globals) gather(ctx context.Context, p *frame.Pipeline, rates bool) (frame.Frame, error) {
	if !rates {
		return p.Gather()
	}
	if err := checkRateInterval(g.interval); err != nil {
		return frame.Frame{}, err
	}
	f, err := p.Sample(ctx, g.interval)
	if err != nil && ctx.Err() != nil {
		return f, fmt.Errorf("interrupted while sampling rates over --interval %v: %w", g.interval, context.Cause(ctx))
	}
	return f, err
}

// users reads --passwd. Callers that only print names may ignore the error:
// a nil *Users prints numeric uids.
func (g *globals) users() (*procwalk.Users, error) {
	return procwalk.ReadUsers(g.passwd)
}

// writeVisibilityNote prints visibilityNote to w when there is one.
func writeVisibilityNote(w io.Writer, s *procwalk.Snapshot) {
	if note := render.VisibilityNote(s, os.Geteuid()); note != "" {
		fmt.Fprintf(w, "procwalk: %s\n", note)
	}
}

// checkRateInterval says what is wrong with --interval as the time between
// the two samples of a rate.
func checkRateInterval(d time.Duration) error {
	if d <= 0 {
		return usageErrorf("--interval %v: rates need two samples a positive time apart, such as 1s or 500ms", d)
	}
	return nil
}
