//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
)

// run.go runs a compiled script on frames: the host builds the Run (its
// script, output and surroundings), gives it the runtime's config (Start),
// then hands it frames (Frame), here or in a worker (Script.Worker).

// Run is a compiled script with its runtime, ready to run on frames: once
// (procwalk run), once a tick (watch, Loop), once a recorded frame
// (Replay).
type Run struct {
	Script *scripting.Script
	// Out holds the lines of the run that ended, until Flush.
	Out *Lines
	// Stderr hears the grouping's notes (when the script asks for
	// sessions), a replay's lines and a failed tick's.
	Stderr io.Writer
	// Guard brackets each run in a worker (scripting.WorkerConn.Guard);
	// nil elsewhere.
	Guard *scripting.RunGuard
	// Hint adds to a failed run's error how to raise the limit it hit;
	// nil: nothing.
	Hint func(error) error
	// Note is what the host says of a frame's snapshot after a run: the
	// processes it could not read; nil: nothing.
	Note func(*procwalk.Snapshot) string
	// Replay is set when the script runs on a recording's frames: its
	// clock is the frame's, and in mode "run" each frame is a fresh run.
	Replay *Replay
	// Pipeline gathers this host's frames for Loop.Every; nil in a worker
	// (it runs on its parent's frames) and in a replay.
	Pipeline *frame.Pipeline

	cfg     scripting.Config
	rt      *scripting.Runtime
	pending scripting.RunOutput // the run's metrics and kills' outcomes, until it ends
}

// Keep keeps a metric of the running run until it ends: the To of the
// script's Emitter (Checked) in this process.
func (r *Run) Keep(m scripting.WorkerEmit) { r.pending.Emit(m) }

// KeepAction keeps a kill's outcome of the running run until it ends.
func (r *Run) KeepAction(e kill.ActionEvent) { r.pending.Action(e) }

// Start builds the runtime of cfg. A replay's runs are on the recorded
// clock and host name; the host name is this host's when cfg has none.
func (r *Run) Start(cfg scripting.Config) {
	if r.Replay != nil {
		cfg.Now, cfg.Hostname = r.Replay.Now, r.Replay.Header.Host
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	r.cfg = cfg
	r.rt = scripting.New(cfg)
}

// Config is the config of the runtime Start built.
func (r *Run) Config() scripting.Config { return r.cfg }

// Frame runs the script on f, writes its lines to stdout, and returns the
// snapshot's note and the run's error. A reader of stdout that has gone
// is no error of the run.
func (r *Run) Frame(ctx context.Context, f frame.Frame, stdout io.Writer) (string, error) {
	runErr := r.run(ctx, f)
	if err := r.Out.Flush(stdout); err != nil && !ClosedPipe(err) {
		return "", fmt.Errorf("writing metrics: %w", err)
	}
	note := ""
	if r.Note != nil {
		note = r.Note(f.Snapshot)
	}
	return note, runErr
}

// run runs the script once on f; the notes of grouping are printed when
// the script asks for sessions.
func (r *Run) run(ctx context.Context, f frame.Frame) error {
	if rp := r.Replay; rp != nil {
		rp.frame = f
		if r.cfg.Mode == "run" && rp.ran { // each frame a run of its own, as procwalk run then
			r.rt.Close()
			r.rt = scripting.New(r.cfg)
		}
		rp.ran = true
	}
	sessions := func() ([]session.Session, error) {
		for _, n := range f.Notes {
			fmt.Fprintf(r.Stderr, "procwalk: note: %s\n", procwalk.Printable(n))
		}
		return f.Sessions, nil
	}
	r.Guard.Begin()
	err := r.rt.Run(ctx, r.Script, scripting.Input{Snapshot: f.Snapshot, Sessions: sessions, ReadMore: f.ReadMore})
	r.Guard.End()
	r.pending.End(err == nil, r.Out.Add, r.Out.Action)
	if err != nil && ctx.Err() == nil && r.Hint != nil {
		return r.Hint(err)
	}
	return err
}

// Close releases the runtime and the recording.
func (r *Run) Close() {
	r.rt.Close()
	if r.Replay != nil {
		r.Replay.Close()
	}
}

// ExitError is the error of a run a worker ended, with the exit code it
// gave.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Done is the error of a run a worker ended (nil: it succeeded).
func Done(d scripting.WorkerDone) error {
	if d.Err == "" {
		return nil
	}
	return &ExitError{Code: d.Code, Err: errors.New(d.Err)}
}
