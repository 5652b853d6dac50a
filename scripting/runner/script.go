//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// script.go builds a script's runtime from a host's options, once for
// every way procwalk runs a script: run, watch and their replays (Run),
// telegraf --script (Hook); each in this process, in a worker process
// (Script.Worker), or as that worker (Options.Conn: Script.Serve).

// Options say which script runs, how and where its output goes: what a
// command line gives (a script's flags) and what the host injects (its
// line encoder, its worker's command, its streams). New checks them.
type Options struct {
	// Script names the script: a file or a bundled script (Load).
	Script string
	// Args are the script's arguments (procwalk.args).
	Args []string
	// Mode is procwalk.mode: "run" (each frame a fresh run), "watch" (the
	// state kept from run to run), or "telegraf", which builds a Hook
	// instead of a Run.
	Mode   string
	Limits Limits // checked by New (Limits.Check)
	// DryRun turns every kill into a dry run (--dry-run); a replay's are
	// always.
	DryRun bool
	// Protect are more names the script may never kill (--protect: globs
	// of comm, argv[0] or script name), checked by New (Protected).
	Protect []string
	// PSS puts PSS in the kills' audit events (procwalk --pss).
	PSS bool
	// Proc is the procfs root the frames are read from (--proc): the
	// script's kills act there, and a worker reads more fields there.
	Proc string
	// Users names the uids of the frames, called when a runtime here
	// needs them (not in the parent of a telegraf worker, not in a replay
	// whose recording names its host's users); nil: uids alone.
	Users func() *procwalk.Users
	// Replay is a recording (procwalk record) to run on instead of this
	// host's frames, on its clock, every kill rehearsed on its frame; ""
	// for none. Not for Mode telegraf.
	Replay string
	// Pipeline builds the pipeline of this host's frames from cfg, when
	// the script runs on them (not in a worker, not in a replay, not in
	// Mode telegraf, whose host gathers). New sets what the scan reads
	// and how long its snapshots live; the host adds its grouper (every
	// session kind), its source and its clock.
	Pipeline func(cfg frame.Config) (*frame.Pipeline, error)

	// Isolate asks for the script to run in a worker process (Worker):
	// it does when Worker.Path is set and this is no worker itself.
	Isolate bool
	// Worker is how to start a worker (Path, Args, Name, CommandLine)
	// and the host's own /proc (Self); New sets the rest.
	Worker scripting.WorkerConfig
	// Conn is set in a worker: runs serve the parent (Serve), their
	// metrics and kills' outcomes sent to it.
	Conn *scripting.WorkerConn
	// Sentinel continues and thaws what a kill stopped should the host
	// die; nil: none, and kills stop nothing.
	Sentinel *kill.Sentinel

	// Encoder encodes metrics and kills' outcomes as the host's lines
	// (the plugin's line protocol: runner never imports plugin).
	Encoder Encoder
	// Stderr hears a run's notes and failures and, unless Logger is set,
	// its log records as text.
	Stderr io.Writer
	// Print receives the script's print(...) as it is: the host escapes
	// it (procwalk.EscapingWriter).
	Print io.Writer
	// Logger receives procwalk.log and alert records; nil: text records
	// on Stderr, dated on a replay's clock.
	Logger *slog.Logger
	// Warn logs a kill's outcome under Mode telegraf (escaped), where a
	// Run logs it through Logger.
	Warn func(msg string)
	// Note is what the host says of a frame's snapshot after a run (the
	// processes it could not read); nil: nothing.
	Note func(*procwalk.Snapshot) string
}

// users are Options.Users', nil when it is nil.
func (o Options) users() *procwalk.Users {
	if o.Users == nil {
		return nil
	}
	return o.Users()
}

// Script is a script New set up: its Run (Mode run and watch) or its Hook
// (Mode telegraf), the limits it runs under, and how to start its worker.
type Script struct {
	Run  *Run
	Hook *Hook
	// Limits are the runtime's, Options.Limits checked.
	Limits scripting.Limits

	o         Options
	protected []string // kill's default names plus Options.Protect
}

// New loads the script o names, checks o and builds the script's runtime:
// in this process, or the side of a worker (o.Conn) that serves its
// parent. A script that cannot be found or compiled wraps ErrBadScript;
// a bad setting is an *OptionError naming its flag (a replay that cannot
// be opened is --replay's).
func New(o Options) (*Script, error) {
	script, err := Load(o.Script)
	if err != nil {
		return nil, err
	}
	limits, err := o.Limits.Check()
	if err != nil {
		return nil, err
	}
	// --protect here, whatever runs the kills: a script in a worker reads
	// it only there, where a bad glob would end every run.
	protected, err := Protected(o.Protect)
	if err != nil {
		return nil, err
	}
	fsys, err := procwalk.NewFS(o.Proc)
	if err != nil {
		return nil, err
	}
	s := &Script{Limits: limits, o: o, protected: protected}
	if o.Mode == "telegraf" {
		s.hook(script, fsys)
	} else if err := s.run(script, fsys); err != nil {
		return nil, err
	}
	return s, nil
}

// Isolated reports whether the script runs in a worker process: asked
// for, possible (a binary to start), and this is no worker.
func (s *Script) Isolated() bool {
	return s.o.Isolate && s.o.Worker.Path != "" && s.o.Conn == nil
}

// run builds the Run of Mode run and watch.
func (s *Script) run(script *scripting.Script, fsys procwalk.FS) (err error) {
	o := s.o
	r := &Run{Script: script, Out: &Lines{Enc: o.Encoder}, Stderr: o.Stderr, Guard: o.Conn.Guard(s.Limits), Hint: Hint, Note: o.Note}
	s.Run = r
	var users *procwalk.Users
	if o.Replay != "" {
		if r.Replay, err = OpenReplay(o.Replay, o.Conn == nil); err != nil {
			return &OptionError{Flag: "replay", Err: err}
		}
		users = r.Replay.Header.UserNames() // the recorded host's names
	}
	if users == nil {
		users = o.users()
	}
	log := o.Logger
	switch {
	case log != nil:
	case r.Replay != nil:
		log = r.Replay.Logger(o.Stderr)
	default:
		log = slog.New(slog.NewTextHandler(o.Stderr, nil))
	}
	// Metrics and kills' outcomes wait for the run's end (Keep); in a
	// worker they go to the parent, which keeps them the same way: the
	// same bytes either way.
	emitter := &Checked{Enc: o.Encoder, To: r.Keep}
	action := r.KeepAction
	if o.Conn != nil {
		emitter.To, action = o.Conn.Emit, o.Conn.Action
	}
	audit := func(ev kill.ActionEvent) {
		log.Warn(ev.String(), "script", script.Name)
		action(ev)
	}
	kc := s.killConfig(script.Name, audit)
	var killer scripting.Killer
	if r.Replay != nil {
		killer = scripting.ReplayKiller{Base: kc, Snapshot: r.Replay.Snapshot}
	} else {
		kc.Sentinel = o.Sentinel
		killer = scripting.EngineKiller{FS: fsys, Base: kc}
	}
	if o.Conn == nil && r.Replay == nil && o.Pipeline != nil {
		if r.Pipeline, err = o.Pipeline(s.pipelineConfig()); err != nil {
			return err
		}
	}
	r.Start(s.workerSide(scripting.Config{
		Killer:  killer,
		Emitter: emitter,
		Logger:  log,
		Print:   o.Print,
		DryRun:  o.DryRun || r.Replay != nil,
		Mode:    o.Mode,
		Args:    o.Args,
		Users:   users,
		Limits:  s.Limits,
	}))
	return nil
}

// hook builds the Hook of Mode telegraf: in a worker when isolated, else
// here, its metrics and kills' outcomes joining the gather's batch.
func (s *Script) hook(script *scripting.Script, fsys procwalk.FS) {
	o := s.o
	h := &Hook{Script: script, Hint: Hint, Warn: o.Warn, Conn: o.Conn, Guard: o.Conn.Guard(s.Limits)}
	s.Hook = h
	if s.Isolated() {
		cfg := s.workerConfig(io.Discard)
		cfg.Emit, cfg.Action = h.ToBatch, h.ActionToBatch // an action was logged by the worker
		h.Worker = scripting.NewWorker(cfg)
		return
	}
	out := &Checked{Enc: o.Encoder, To: h.Keep}
	if o.Conn != nil {
		out.To = o.Conn.Emit
	}
	kc := s.killConfig(script.Name, h.Action)
	kc.Sentinel = o.Sentinel
	h.Start(s.workerSide(scripting.Config{
		Killer:  scripting.EngineKiller{FS: fsys, Base: kc},
		Emitter: out,
		Logger:  o.Logger,
		Print:   o.Print,
		DryRun:  o.DryRun,
		Mode:    o.Mode,
		Args:    o.Args,
		Users:   o.users(),
		Limits:  s.Limits,
	}))
}

// pipelineConfig is what the pipeline of a Run reads and keeps: the scan
// reads what rates need (a field the script asks of a process beyond that
// is read then: Input.ReadMore); snapshots are recycled, unless the
// script keeps process objects from run to run in this process (watch,
// not isolated).
func (s *Script) pipelineConfig() frame.Config {
	cfg := frame.Config{Fields: procwalk.FieldIO, Memory: frame.Memory{Retention: frame.Recycle}}
	if s.o.PSS {
		cfg.Fields |= procwalk.FieldSmaps
	}
	if s.o.Mode == "watch" && !s.Isolated() {
		cfg.Memory.Retention = frame.KeepAll
	}
	return cfg
}

// killConfig is the configuration of the script's kills, without the
// sentinel a kill that sends signals needs: a replay's kills, planned on
// recorded frames, send none.
func (s *Script) killConfig(name string, audit func(kill.ActionEvent)) kill.Config {
	cfg := kill.Config{DryRun: s.o.DryRun, Requester: "rule:" + name, Audit: audit, Protected: s.protected}
	if s.o.PSS {
		cfg.Fields |= procwalk.FieldSmaps // PSS in the audit events
	}
	return cfg
}

// workerSide is cfg for a runtime in a worker (Conn set): the hourly kill
// budget is the parent's allowance, and a kill that moves the script's
// deadline moves the parent's too. Elsewhere cfg as it is.
func (s *Script) workerSide(cfg scripting.Config) scripting.Config {
	if c := s.o.Conn; c != nil {
		cfg.KillBudget, cfg.DeadlineMoved = c, c.DeadlineMoved
	}
	return cfg
}

// workerConfig is the config of the parent's side of a worker running
// this script, its output passed through the one escaping function. What
// the worker writes was escaped there already; escaping it again changes
// nothing that is safe (procwalk.Printable leaves backslashes alone), and
// holds if the worker was subverted.
func (s *Script) workerConfig(stdout io.Writer) scripting.WorkerConfig {
	cfg := s.o.Worker
	cfg.Limits = s.Limits
	cfg.Stdout = procwalk.EscapingWriter{W: stdout}
	cfg.Stderr = procwalk.EscapingWriter{W: s.o.Stderr}
	return cfg
}

// Worker returns the parent's side of a worker running a Run, its stdout
// relayed to stdout and its stderr to Options.Stderr, its metrics and
// kills' outcomes encoded into Run.Out; nil when the script is not
// isolated. The caller closes it.
func (s *Script) Worker(stdout io.Writer) *scripting.Worker {
	if !s.Isolated() || s.Run == nil {
		return nil
	}
	cfg := s.workerConfig(stdout)
	cfg.Emit, cfg.Action = s.Run.Out.Add, s.Run.Out.Action
	return scripting.NewWorker(cfg)
}

// Once is procwalk run's one run on f, here or in the worker, which it
// closes first: everything the worker printed is written before the run's
// lines, as a run in this process writes them. The frame's note is
// written to Options.Stderr. A run the worker ended in failure says what
// the worker's memory peaked at, what the script cost; one its worker did
// not finish because ctx ended says so; a reader of stdout that has gone
// ends it quietly.
func (s *Script) Once(ctx context.Context, f frame.Frame, stdout *Stdout) error {
	w := s.Worker(stdout)
	var note string
	var err error
	if w == nil {
		note, err = s.Run.Frame(ctx, f, stdout)
	} else {
		var d scripting.WorkerDone
		d, err = w.Tick(ctx, f)
		w.Close()
		if ferr := s.Run.Out.Flush(stdout); ferr != nil && !ClosedPipe(ferr) && err == nil {
			err = fmt.Errorf("writing metrics: %w", ferr)
		}
		if err == nil {
			if note, err = d.Note, Done(d); err != nil {
				err = fmt.Errorf("%w (the worker's peak RSS: %s)", err, procwalk.FormatBytes(w.PeakRSSBytes()))
			}
		}
	}
	switch {
	case stdout.Gone():
		return nil // nobody reads the rest: done, as watch is
	case w != nil && ctx.Err() != nil:
		return fmt.Errorf("%s interrupted: %w", s.Run.Script.Name, context.Cause(ctx))
	}
	if note != "" {
		fmt.Fprintf(s.o.Stderr, "procwalk: %s\n", note)
	}
	return err
}

// ReplayRuns is run --replay: one run per frame of the recording, each a
// fresh run as procwalk run would have made then, a line on stderr before
// each saying which (FrameLine), or only the frame at names (PickAt; "":
// every frame). It fails when a run failed, when there was no frame to
// run on, or when ctx ended; a bad at is an *OptionError.
func (s *Script) ReplayRuns(ctx context.Context, stdout *Stdout, at string) error {
	l := &Loop{Run: s.Run, Stdout: stdout, What: "run: frame", Worker: s.Worker(stdout)}
	if l.Worker != nil {
		defer l.Worker.Close()
	}
	rp := s.Run.Replay
	pick, err := rp.PickAt(at)
	if err != nil {
		return err
	}
	// The line names the frame by its place in the recording and its time
	// since the recording's start, also when --at picked it alone.
	var first time.Time
	seen := 0
	counted := func(f frame.Frame) bool {
		if seen++; seen == 1 {
			first = f.Snapshot.Time
		}
		return pick == nil || pick(f)
	}
	frames, _, _ := rp.Each(s.o.Stderr, counted, func(_ int, f frame.Frame) bool {
		fmt.Fprintln(s.o.Stderr, FrameLine(seen, f.Snapshot.Time, first))
		return l.Tick(ctx, seen, f, nil)
	})
	switch {
	case stdout.Gone():
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s interrupted: %w", s.Run.Script.Name, context.Cause(ctx))
	case frames == 0:
		return fmt.Errorf("--replay %s: no frame to run on", rp.Path)
	case l.Failed() > 0:
		return fmt.Errorf("%d of %d runs failed", l.Failed(), frames)
	}
	return nil
}

// Watch is procwalk watch: a run every interval on this host's frames
// (Loop.Every) or, replaying, on the recording's frames interval apart
// on the recorded clock (Loop.Replay; 0: every frame), here or in the
// worker, until count runs (0: no end), ctx ends or stdout's reader goes.
// A failed run is a line on Options.Stderr, and the next goes on.
func (s *Script) Watch(ctx context.Context, stdout *Stdout, interval time.Duration, count int) {
	l := &Loop{Run: s.Run, Stdout: stdout, Worker: s.Worker(stdout)}
	if l.Worker != nil {
		defer l.Worker.Close()
	}
	if s.Run.Replay != nil {
		l.Replay(ctx, interval, count)
		return
	}
	l.Every(ctx, interval, count)
}

// errNoConn is Serve's error outside a worker.
var errNoConn = errors.New("runner: Serve outside a worker (Options.Conn not set)")

// Serve is a worker's life (Options.Conn set): it answers the parent's
// requests, one run each on the frame the parent sent, until the parent
// is done. code is the exit code an error means, sent back with it.
func (s *Script) Serve(ctx context.Context, code func(error) int) error {
	c := s.o.Conn
	if c == nil {
		return errNoConn
	}
	data, err := procwalk.NewFS(s.o.Proc)
	if err != nil {
		return err
	}
	tick := func(ctx context.Context, f frame.Frame) (string, error) { return s.Run.Frame(ctx, f, c.Stdout()) }
	if s.Hook != nil {
		tick = func(_ context.Context, f frame.Frame) (string, error) { return "", s.Hook.Run(ctx, f, nil) }
	}
	return c.Serve(ctx, s.Limits, s.o.Worker.Self, data, tick, code)
}

// Close releases the runtime, the recording, or the worker.
func (s *Script) Close() {
	if s.Run != nil {
		s.Run.Close()
	}
	if s.Hook != nil {
		s.Hook.Close()
	}
}
