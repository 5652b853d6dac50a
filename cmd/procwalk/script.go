//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/suggest"
	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripting/runner"
	"github.com/procwalk/procwalk/scripts"
)

// script.go wires the Lua runtime (scripting) to the outside world for
// run, watch and telegraf --script: which script, its arguments, the limits,
// where print, logs and emitted lines go, and the Killer behind its kills.
// scripting and plugin never import each other; this file joins them.

// scriptFlags are the flags every command running a script shares.
type scriptFlags struct {
	dryRun       bool
	timeout      time.Duration
	maxMemory    uint64
	retained     uint64
	protect      string
	isolation    string
	graceBudget  time.Duration
	killsPerRun  int
	killsPerHour int
	printBytes   uint64
	emitLines    int
	emitBytes    uint64
}

func (f *scriptFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.dryRun, "dry-run", false, "every kill the script asks for is a dry run: reported, never sent")
	fs.DurationVar(&f.timeout, "script-timeout", scripting.DefaultLimits().Timeout, "how long one run of the script may take (waits inside kills not counted)")
	fs.Var(cmdline.NewSize(&f.maxMemory, "256MiB", 1<<20, 0, "a size of at least 1MiB, such as 256MiB"), "script-memory", "how much the heap may grow during one run of the script before it is stopped")
	fs.Var(cmdline.NewSize(&f.retained, "64MiB", 1<<20, 0, "a size of at least 1MiB, such as 64MiB"), "script-retained", "how much more memory the script's state may keep from one run to the next (watch, telegraf --execd) before it is dropped")
	fs.StringVar(&f.protect, "protect", "", "more names the script may never kill, comma-separated globs (comm, argv[0] or script name)")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words(isolationWorker, isolationOff), Strict: true}.String(fs, &f.isolation, "script-isolation", isolationWorker, "worker: run the script in a worker process under kernel limits, restarted when it dies; off: in procwalk's own process")
	d := scripting.DefaultLimits()
	fs.DurationVar(&f.graceBudget, "script-grace-budget", d.GraceBudget, "how long the kills of one run may wait, in all, for their targets to exit (not counted in --script-timeout): each kill's grace is cut to what is left, and a kill asked for when nothing is left is refused")
	fs.IntVar(&f.killsPerRun, "script-kills-per-run", d.KillsPerRun, "the most processes the script's kills may signal in one run: a kill with more targets than are left is refused whole (dry runs do not count)")
	fs.IntVar(&f.killsPerHour, "script-kills-per-hour", d.KillsPerHour, "the most processes the script's kills may signal in an hour (watch, telegraf --execd), across runs and workers")
	fs.Var(outputBudget(&f.printBytes), "script-print-bytes", "how much text one run may print and log (print, pw.log, pw.alert) before it is stopped")
	fs.IntVar(&f.emitLines, "script-emit-lines", d.MaxEmitLines, "how many metrics one run may emit (pw.emit, pw.alert) before it is stopped")
	fs.Var(outputBudget(&f.emitBytes), "script-emit-bytes", "how many bytes of metrics one run may emit before it is stopped")
}

// Values of --script-isolation.
const (
	isolationWorker = "worker"
	isolationOff    = "off"
)

// isolated reports whether scripts run in a worker process: asked for, and
// possible (e has a binary to start; tests run in-process).
func (f *scriptFlags) isolated(e *env) bool {
	return f.isolation == isolationWorker && e.worker != "" && e.conn == nil
}

// limits checks the flags and returns the runtime's limits.
func (f *scriptFlags) limits() (scripting.Limits, error) {
	l := scripting.Limits{Timeout: f.timeout, GraceBudget: f.graceBudget, KillsPerRun: f.killsPerRun, KillsPerHour: f.killsPerHour}
	switch {
	case f.timeout <= 0:
		return l, usageErrorf("--script-timeout %v: want a positive duration such as 2s", f.timeout)
	case f.graceBudget <= 0:
		return l, usageErrorf("--script-grace-budget %v: want a positive duration such as 30s", f.graceBudget)
	case f.killsPerRun <= 0:
		return l, usageErrorf("--script-kills-per-run %d: want 1 or more (--dry-run turns every kill into a report)", f.killsPerRun)
	case f.killsPerHour < f.killsPerRun:
		return l, usageErrorf("--script-kills-per-hour %d: want at least --script-kills-per-run (%d)", f.killsPerHour, f.killsPerRun)
	}
	l.HeapBudgetBytes, l.RetainedBytes = f.maxMemory, f.retained
	l.MaxPrintBytes, l.MaxEmitBytes = int(f.printBytes), int(f.emitBytes)
	if f.emitLines < 1 || f.emitLines > 10_000_000 {
		return l, usageErrorf("--script-emit-lines %d: want 1 to 10000000", f.emitLines)
	}
	l.MaxEmitLines = f.emitLines
	return l, nil
}

// outputBudget is an output budget's flag value, 16MiB to start with:
// from 1 KiB to 1 GiB, one run's output being what a worker's parent may
// hold (its metrics) or write in one go.
func outputBudget(p *uint64) *cmdline.Size {
	return cmdline.NewSize(p, "16MiB", 1<<10, 1<<30, "a size from 1KiB to 1GiB, such as 16MiB")
}

// killer returns the Killer behind the script's kills: procwalk's, with the
// default protected list plus --protect, each outcome logged and passed to
// audit.
func (f *scriptFlags) killer(e *env, fsys procwalk.FS, name string, pss bool, audit func(kill.ActionEvent)) (scripting.Killer, error) {
	cfg, err := f.killConfig(name, pss, audit)
	if err != nil {
		return nil, err
	}
	cfg.Sentinel = e.newSentinel()
	return scripting.EngineKiller{FS: fsys, Base: cfg}, nil
}

// killConfig is the configuration of the script's kills (killer), without
// the sentinel a kill that sends signals needs: a replay's kills, planned
// on recorded frames, send none.
func (f *scriptFlags) killConfig(name string, pss bool, audit func(kill.ActionEvent)) (kill.Config, error) {
	cfg := kill.Config{DryRun: f.dryRun, Requester: "rule:" + name, Audit: audit}
	if pss {
		cfg.Fields |= procwalk.FieldSmaps // PSS in the audit events
	}
	var err error
	if cfg.Protected, err = kill.ProtectedPlus(cmdline.SplitList(f.protect)); err != nil {
		return cfg, usageErrorf("--protect: %v", err)
	}
	return cfg, nil
}

// scriptCall is a command line naming a script: its name and arguments.
type scriptCall struct {
	name string
	args []string
}

// parseScriptCall splits "SCRIPT [flags] [-- ARGS]". Flags may follow the
// script's name (procwalk watch memory-guard --interval 10s); fs parses
// them. Everything after "--" goes to the script; anything else after the
// name is an error, so a mistyped flag never silently becomes an argument.
func parseScriptCall(fs *flag.FlagSet, args []string) (scriptCall, error) {
	if len(args) == 0 {
		return scriptCall{}, usageErrorf("name a script: a file, or a bundled script (%s); 'procwalk run --list' describes them", strings.Join(scripts.Names(), ", "))
	}
	call := scriptCall{name: args[0]}
	rest := args[1:]
	for i, a := range rest {
		if a == "--" {
			call.args = rest[i+1:]
			rest = rest[:i]
			break
		}
	}
	if err := fs.Parse(rest); err != nil {
		return call, usageErrorf("%v", err)
	}
	if extra := fs.Args(); len(extra) > 0 {
		return call, usageErrorf("unexpected %q after the script name: script arguments go after --, as in procwalk %s %s -- %s",
			extra[0], fs.Name(), call.name, strings.Join(extra, " "))
	}
	return call, nil
}

// loadScript compiles the script call names (runner.Load): a missing
// script or a syntax error is a usage error.
func loadScript(name string) (*scripting.Script, error) {
	s, err := runner.Load(name)
	if errors.Is(err, runner.ErrBadScript) {
		return nil, usageErrorf("%v", err)
	}
	return s, err
}

// withHint adds to a run's error the flag that raises the limit it hit.
func withHint(err error) error {
	switch {
	case errors.Is(err, scripting.ErrTimeout):
		return fmt.Errorf("%w (raise --script-timeout, or do less per run)", err)
	case errors.Is(err, scripting.ErrRetained):
		return fmt.Errorf("%w (raise --script-retained, or keep less in procwalk.state and globals)", err)
	case errors.Is(err, scripting.ErrMemory):
		return fmt.Errorf("%w (raise --script-memory, or keep less per run)", err)
	}
	return err
}

// showScript prints bundled script name: its source, to copy and change.
func showScript(w io.Writer, name string) error {
	s, ok := scripts.Lookup(name)
	if !ok {
		if close := suggest.Closest(name, scripts.Names(), 3); len(close) > 0 {
			return usageErrorf("--show %q: no bundled script of that name: did you mean %s? (procwalk run --list)", name, strings.Join(close, ", "))
		}
		return usageErrorf("--show %q: no bundled script of that name: they are %s", name, strings.Join(scripts.Names(), ", "))
	}
	_, err := w.Write(s.Source)
	return err
}

// textLogger logs script records as text lines on w: "time=... level=...
// msg=... script=...".
func textLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

// telegrafScript is `procwalk telegraf --script`: a script run on every
// gather, after procwalk's own lines, whose emits, alerts and kills
// (procwalk_action) join the same batch.
type telegrafScript struct {
	name string
	args cmdline.StringList
	s    scriptFlags
}

func (t *telegrafScript) register(fs *flag.FlagSet) {
	cmdline.Spec{Meta: "SCRIPT"}.String(fs, &t.name, "script", "", "run this Lua script (a file, or a bundled script's name) on every gather; its emits, alerts and kills join the output")
	fs.Var(&t.args, "script-arg", "an argument for --script, such as limit=2GiB; repeat for several")
	t.s.register(fs)
}

// attach sets in.Hook to run the script, when --script names one. Call it
// before in.Init. The script sees every field: those the gather does not
// read are read of the processes it asks about (rates need --io or --pss
// in the gather); close releases its Lua state, or its worker. The script
// runs in a worker process (--script-isolation), under --execd and in exec
// mode alike: in-process, a Go call a script makes cannot be interrupted,
// and only a worker's kernel limits bound what the Go runtime does (its
// stacks, an allocation of gigabytes at once).
func (t *telegrafScript) attach(ctx context.Context, g *globals, e *env, in *plugin.Input, log *plugin.LineLogger) (hook *scriptHook, close func(), err error) {
	if t.name == "" {
		if len(t.args) > 0 {
			return nil, nil, usageErrorf("--script-arg needs --script")
		}
		return nil, func() {}, nil
	}
	script, err := loadScript(t.name)
	if err != nil {
		return nil, nil, err
	}
	limits, err := t.s.limits()
	if err != nil {
		return nil, nil, err
	}
	fsys, err := g.openFS()
	if err != nil {
		return nil, nil, err
	}
	hook = &scriptHook{Hook: &runner.Hook{Script: script, Hint: withHint, Warn: func(msg string) { log.Warnf("%s", msg) },
		Conn: e.conn, Guard: e.conn.Guard(limits)}, limits: limits}
	in.Hook = func(f frame.Frame, b *plugin.Batch) error {
		if b == nil {
			return hook.Run(ctx, f, nil)
		}
		return hook.Run(ctx, f, b)
	}
	if t.s.isolated(e) {
		in.HookCopies = true // the worker gets a copy of each frame
		cfg := workerConfig(e, limits, io.Discard, scripting.WorkerGatherWait)
		cfg.Emit, cfg.Action = hook.ToBatch, hook.ActionToBatch // an action was logged by the worker
		hook.Worker = scripting.NewWorker(cfg)
		return hook, hook.Close, nil
	}
	out := &runner.Checked{Enc: lineEncoder{}, To: hook.Keep}
	if e.conn != nil {
		out.To = e.conn.Emit
	}
	killer, err := t.s.killer(e, fsys, script.Name, g.pss, hook.Action)
	if err != nil {
		return nil, nil, err
	}
	users, _ := g.users()
	hook.Start(workerSide(e, scripting.Config{
		Killer:  killer,
		Emitter: out,
		Logger:  slog.New(&plugin.SlogHandler{Log: log}),
		Print:   plugin.LinePrinter{Log: log},
		DryRun:  t.s.dryRun,
		Mode:    "telegraf",
		Args:    t.args,
		Users:   users,
		Limits:  limits,
	}))
	return hook, hook.Close, nil
}

// scriptHook is the telegraf --script hook (runner.Hook), with the limits
// its worker serves under.
type scriptHook struct {
	*runner.Hook
	limits scripting.Limits
}
