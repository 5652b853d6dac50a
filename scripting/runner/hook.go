//go:build linux

package runner

import (
	"context"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
)

// hook.go runs a script on each gather of a host that batches its own
// lines (procwalk telegraf --script): the script's metrics, alerts and
// kills' outcomes join the gather's batch, after the host's lines.

// Batch is where a gather's lines go (the plugin's Batch).
type Batch interface {
	// Add adds a metric, checked when the script emitted it.
	Add(measurement string, tags map[string]string, fields map[string]any) error
	// AddAction adds the line of a kill's outcome.
	AddAction(e kill.ActionEvent)
}

// Hook runs a script on each gather: in this process (Start), in a worker
// (Worker set, its Emit and Action the hook's ToBatch and ActionToBatch),
// or as the worker (Conn set), where it runs on a gather without a batch.
type Hook struct {
	Script *scripting.Script
	// Hint adds to a failed run's error how to raise the limit it hit;
	// nil: nothing.
	Hint func(error) error
	// Warn logs a kill's outcome (Action).
	Warn   func(msg string)
	Worker *scripting.Worker     // the parent's side of the worker running the script
	Conn   *scripting.WorkerConn // in the worker: outcomes go to the parent too
	Guard  *scripting.RunGuard   // in the worker: brackets each run

	rt      *scripting.Runtime
	pending scripting.RunOutput // in-process: the run's output, for the batch once it ends
	batch   Batch               // the gather's, during a run
}

// Keep keeps a metric of the running run for the batch: the To of the
// script's Emitter (Checked) in this process.
func (h *Hook) Keep(m scripting.WorkerEmit) { h.pending.Emit(m) }

// Start builds the runtime of cfg, for runs in this process.
func (h *Hook) Start(cfg scripting.Config) { h.rt = scripting.New(cfg) }

// Close releases the runtime, or the worker.
func (h *Hook) Close() {
	if h.Worker != nil {
		h.Worker.Close()
	}
	if h.rt != nil {
		h.rt.Close()
	}
}

// Run runs the script on f, its lines added to b (nil: none, in a worker).
func (h *Hook) Run(ctx context.Context, f frame.Frame, b Batch) error {
	h.batch = b
	defer func() { h.batch = nil }()
	if h.Worker != nil {
		d, err := h.Worker.Tick(ctx, f)
		if err != nil {
			return err
		}
		return Done(d)
	}
	sessions := func() ([]session.Session, error) { return f.Sessions, nil }
	h.Guard.Begin()
	err := h.rt.Run(ctx, h.Script, scripting.Input{Snapshot: f.Snapshot, Sessions: sessions, ReadMore: f.ReadMore})
	if err != nil && ctx.Err() == nil && h.Hint != nil { // as Run: an interrupted gather needs no hint
		err = h.Hint(err)
	}
	h.Guard.End()
	h.pending.End(err == nil, h.ToBatch, h.ActionToBatch)
	return err
}

// ToBatch adds a run's metric to the gather's batch (none in a worker,
// which sends it to its parent).
func (h *Hook) ToBatch(m scripting.WorkerEmit) {
	if h.batch != nil {
		h.batch.Add(m.Measurement, m.Tags, m.Fields) // checked when the script emitted it
	}
}

// ActionToBatch adds a kill's outcome to the gather's batch.
func (h *Hook) ActionToBatch(e kill.ActionEvent) {
	if h.batch != nil {
		h.batch.AddAction(e)
	}
}

// Action logs a kill's audit event, its names escaped, and keeps it for
// the batch (a worker sends it to its parent): the Killer's audit.
func (h *Hook) Action(e kill.ActionEvent) {
	h.Warn(procwalk.Printable(e.String()))
	if h.Conn != nil {
		h.Conn.Action(e)
		return
	}
	h.pending.Action(e)
}
