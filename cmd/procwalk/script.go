//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/suggest"
	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripting/runner"
	"github.com/procwalk/procwalk/scripts"
)

// script.go turns the flags of run, watch, test and telegraf --script into
// runner.Options: which script, its arguments, its limits, where print,
// logs and emitted lines go; runner.New builds the runtime from them.
// scripting and plugin never import each other; this file joins them
// (the line encoder, telegraf's logger and batch).

// scriptFlags are the flags every command running a script shares.
type scriptFlags struct {
	limits    runner.Limits
	dryRun    bool
	protect   string
	isolation string
}

func (f *scriptFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.dryRun, "dry-run", false, "every kill the script asks for is a dry run: reported, never sent")
	fs.DurationVar(&f.limits.Timeout, "script-timeout", scripting.DefaultLimits().Timeout, "how long one run of the script may take (waits inside kills not counted)")
	fs.Var(cmdline.NewSize(&f.limits.MemoryBytes, "256MiB", 1<<20, 0, "a size of at least 1MiB, such as 256MiB"), "script-memory", "how much the heap may grow during one run of the script before it is stopped")
	fs.Var(cmdline.NewSize(&f.limits.RetainedBytes, "64MiB", 1<<20, 0, "a size of at least 1MiB, such as 64MiB"), "script-retained", "how much more memory the script's state may keep from one run to the next (watch, telegraf --execd) before it is dropped")
	fs.StringVar(&f.protect, "protect", "", "more names the script may never kill, comma-separated globs (comm, argv[0] or script name)")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words(isolationWorker, isolationOff), Strict: true}.String(fs, &f.isolation, "script-isolation", isolationWorker, "worker: run the script in a worker process under kernel limits, restarted when it dies; off: in procwalk's own process")
	d := scripting.DefaultLimits()
	fs.DurationVar(&f.limits.GraceBudget, "script-grace-budget", d.GraceBudget, "how long the kills of one run may wait, in all, for their targets to exit (not counted in --script-timeout): each kill's grace is cut to what is left, and a kill asked for when nothing is left is refused")
	fs.IntVar(&f.limits.KillsPerRun, "script-kills-per-run", d.KillsPerRun, "the most processes the script's kills may signal in one run: a kill with more targets than are left is refused whole (dry runs do not count)")
	fs.IntVar(&f.limits.KillsPerHour, "script-kills-per-hour", d.KillsPerHour, "the most processes the script's kills may signal in an hour (watch, telegraf --execd), across runs and workers")
	fs.Var(outputBudget(&f.limits.PrintBytes), "script-print-bytes", "how much text one run may print and log (print, pw.log, pw.alert) before it is stopped")
	fs.IntVar(&f.limits.EmitLines, "script-emit-lines", d.MaxEmitLines, "how many metrics one run may emit (pw.emit, pw.alert) before it is stopped")
	fs.Var(outputBudget(&f.limits.EmitBytes), "script-emit-bytes", "how many bytes of metrics one run may emit before it is stopped")
}

// Values of --script-isolation.
const (
	isolationWorker = "worker"
	isolationOff    = "off"
)

// outputBudget is an output budget's flag value, 16MiB to start with:
// from 1 KiB to 1 GiB, one run's output being what a worker's parent may
// hold (its metrics) or write in one go.
func outputBudget(p *uint64) *cmdline.Size {
	return cmdline.NewSize(p, "16MiB", 1<<10, 1<<30, "a size from 1KiB to 1GiB, such as 16MiB")
}

// options are the script's runner.Options for mode (run, watch,
// telegraf) from the flags, the globals and the env; sf, for run and
// watch, says how the pipeline groups sessions; replay is --replay's
// recording ("" none). The caller sets where print goes, and what else
// its mode needs. --passwd is read once, when something here needs it
// (runner.Options.Users); a replay's kills send no signal, so it gets no
// sentinel.
func (f *scriptFlags) options(g *globals, e *env, sf *sessionFlags, mode string, call scriptCall, replay string) runner.Options {
	users := sync.OnceValue(func() *procwalk.Users {
		u, _ := g.users() // without a passwd file, users show as uids
		return u
	})
	o := runner.Options{
		Script:  call.name,
		Args:    call.args,
		Mode:    mode,
		Limits:  f.limits,
		DryRun:  f.dryRun,
		Protect: cmdline.SplitList(f.protect),
		PSS:     g.pss,
		Proc:    g.proc,
		Users:   users,
		Isolate: f.isolation == isolationWorker,
		Worker: scripting.WorkerConfig{Path: e.worker, Name: workerName, Args: []string{workerArg}, CommandLine: e.args,
			Self: hostFS()},
		Replay:  replay,
		Conn:    e.conn,
		Encoder: lineEncoder{},
		Stderr:  e.stderr,
		Note:    func(s *procwalk.Snapshot) string { return render.VisibilityNote(s, os.Geteuid()) },
	}
	if replay == "" {
		o.Sentinel = e.newSentinel()
	}
	if sf != nil {
		o.Pipeline = func(cfg frame.Config) (*frame.Pipeline, error) { return scriptPipeline(g, sf, users(), cfg) }
	}
	return o
}

// newScript sets up the script o names (runner.New).
func newScript(o runner.Options) (*runner.Script, error) {
	s, err := runner.New(o)
	if err != nil {
		return nil, scriptError(err)
	}
	return s, nil
}

// scriptError is err of a script's set-up or run: a script that cannot
// be loaded and a bad flag (runner.OptionError) are usage errors.
func scriptError(err error) error {
	var bad *runner.OptionError
	if errors.Is(err, runner.ErrBadScript) || errors.As(err, &bad) {
		return usageError(err)
	}
	return err
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
func (t *telegrafScript) attach(ctx context.Context, g *globals, e *env, in *plugin.Input, log *plugin.LineLogger) (script *runner.Script, close func(), err error) {
	if t.name == "" {
		if len(t.args) > 0 {
			return nil, nil, usageErrorf("--script-arg needs --script")
		}
		return nil, func() {}, nil
	}
	o := t.s.options(g, e, nil, "telegraf", scriptCall{name: t.name, args: t.args}, "")
	o.Logger = slog.New(&plugin.SlogHandler{Log: log})
	o.Print = plugin.LinePrinter{Log: log}
	o.Warn = func(msg string) { log.Warnf("%s", msg) }
	if script, err = newScript(o); err != nil {
		return nil, nil, err
	}
	in.Hook = func(f frame.Frame, b *plugin.Batch) error {
		if b == nil {
			return script.Hook.Run(ctx, f, nil)
		}
		return script.Hook.Run(ctx, f, b)
	}
	in.HookCopies = script.Isolated() // the worker gets a copy of each frame
	return script, script.Close, nil
}
