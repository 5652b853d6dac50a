//go:build linux

// Command procwalk reports, groups and safely acts on the processes and
// sessions of a Linux host.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripting/runner"
)

// Exit codes, listed in every command's --help (helpText("exit-codes")).
const (
	exitOK    = 0
	exitError = 1                 // a run-time failure: missing /proc root, unreadable file, unknown session
	exitUsage = cmdline.ExitUsage // bad flags or arguments
)

func main() {
	if versionOnly(os.Args[1:]) {
		// Before the signal handling and any command: their goroutines,
		// threads, flag sets and config options cost more than the rest
		// of the start (BenchmarkOneShotRatio's version row).
		fmt.Println(versionLine())
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first SIGINT or SIGTERM asks for a clean stop. Then the default
	// action is back, so a second one ends procwalk at once, even in a
	// read the kernel will not interrupt (a target's mmap lock held).
	go func() { <-ctx.Done(); stop() }()
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == workerArg:
		// Its comm, which the kernel took from /proc/self/exe: "exe". The
		// file is the thread group leader's, which ps shows (PR_SET_NAME
		// would rename only the thread this goroutine runs on).
		os.WriteFile("/proc/self/comm", []byte(workerName), 0)
		err = runWorker(ctx, os.Stdin, os.NewFile(3, "worker messages"), os.Stderr, procwalk.SystemClock{})
	case len(os.Args) > 1 && os.Args[1] == sentinelArg:
		err = runSentinel()
	default:
		e := newEnv(os.Stdin, os.Stdout, os.Stderr)
		// Scripts run in a worker: this binary again, whatever its path
		// now (an upgrade may have replaced the file).
		e.worker = "/proc/self/exe"
		e.sentinel = kill.SentinelCommand{Path: "/proc/self/exe", Args: []string{sentinelArg}}
		err = runEnv(ctx, e, os.Args[1:])
	}
	stop()
	// Close our output before exiting: a thread stuck in the kernel (a
	// read of a hung mount, which not even SIGKILL ends) keeps the process,
	// its exit status and its descriptors until the read returns, and a
	// reader of our stdout (| cat, a shell's $(...)) would wait as long.
	os.Stdout.Close()
	os.Stderr.Close()
	os.Exit(exitCode(err))
}

// env is what a command may touch of the outside world; tests pass buffers
// and a clock of their own.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	clock  procwalk.Clock // dates every scan: ages and rates are measured on it
	// columns is $COLUMNS (0: not set): tables fit this width, also when
	// written to a pipe or a file (outputWidth).
	columns int
	// args is the command line runEnv got, for a script worker to run.
	args []string
	// worker is the binary run as a script worker (worker.go); "": scripts
	// run in-process (tests, which are no procwalk binary).
	worker string
	// conn is set in a script worker: its pipes to the parent.
	conn *scripting.WorkerConn
	// sentinel starts the process that continues and thaws what a kill
	// stopped should procwalk die (sentinel.go); no Path: none, and kills
	// stop nothing.
	sentinel kill.SentinelCommand
}

// newEnv is the env of a procwalk process.
func newEnv(stdin io.Reader, stdout, stderr io.Writer) *env {
	return &env{stdin: stdin, stdout: stdout, stderr: stderr, clock: procwalk.SystemClock{}, columns: render.ColumnsFromEnv(os.Getenv("COLUMNS"))}
}

// exitErr ends the program with Code after printing Err (when not nil),
// naming the flag Err is about (cmdline.Error).
type exitErr = cmdline.Error

// usageErrorf is an error in the command line: exit code 2. A message
// that starts with "--NAME" is about flag NAME's value: when that came from
// env or the config file, runEnv names the variable or the file and line.
func usageErrorf(format string, args ...any) error { return cmdline.Usagef(format, args...) }

// usageError is err, an error in the command line, as usageErrorf's.
func usageError(err error) error { return cmdline.UsageError(err) }

func exitCode(err error) int {
	var e *exitErr
	var run *runner.ExitError // a run a worker ended, with its code
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &e):
		return e.Code
	case errors.As(err, &run):
		return run.Code
	}
	return exitError
}

// globals are the flags every command accepts, before or after its name.
type globals struct {
	proc     string
	pss      bool
	interval time.Duration
	passwd   string
	source   string // --source: proc, bpf or auto

	clock procwalk.Clock // env's, not a flag
	note  func(string)   // shows the source's one note (stderr; telegraf: a W! line)
	// chooser chooses the source once per run (snapshotSource).
	chooser bpfsource.Chooser
	// longRunning is set by the modes that gather again and again
	// (telegraf --execd, top, watch): only they load the BPF source under
	// --source auto, paying for the load once (bpfsource.ChooseOneShot).
	longRunning bool
	// sources says where each flag's value came from, for errors that
	// name it (named): runEnv's, nil elsewhere.
	sources *cmdline.Sources
}

// named is err naming where the value it is about came from, for a
// command that prints its error itself (telegraf --execd's E! line);
// runEnv names the others.
func (g *globals) named(err error) error {
	if g.sources == nil {
		return err
	}
	return g.sources.Rename(err)
}

// needsRates is the error of a sort key or column (flag option, name
// its value) that needs rates beside --no-rates, which is named where it
// was set: an env var or a config line is what to drop.
func (g *globals) needsRates(option, name string) error {
	return usageError(fmt.Errorf("--%s %s needs rates, which %s turns off: drop one of them", option, name, g.sources.Mention("no-rates", "")))
}

// newSources records, for one run, where each flag's value came from:
// the command line, a PROCWALK_* variable or a line of the config file.
// telegraf's --session-kinds (after Telegraf's session_kinds option) is
// --kind, as for sessions and top; --yes and --force switch off a kill's
// safety, and are taken from the command line only.
func newSources() *cmdline.Sources {
	s := cmdline.NewSources("PROCWALK")
	s.Alias = func(name string) string {
		if name == "kind" {
			return "session-kinds"
		}
		return ""
	}
	s.CommandLineOnly = []string{"yes", "force"}
	return s
}

// defaultPasswd is the user database read for uid -> name; --passwd changes
// it (tests point it at a fixture).
const defaultPasswd = "/etc/passwd"

func (g *globals) register(fs *flag.FlagSet) {
	cmdline.Path("DIR").String(fs, &g.proc, "proc", procwalk.DefaultRoot, "procfs root to read (env PROCWALK_PROC)")
	fs.BoolVar(&g.pss, "pss", false, "read smaps_rollup for PSS/USS: exact shared-memory accounting, slower, locks each target's memory map briefly (env PROCWALK_PSS)")
	fs.DurationVar(&g.interval, "interval", time.Second, "sampling interval for rates such as CPU % (two samples this far apart) (env PROCWALK_INTERVAL)")
	cmdline.Path("FILE").String(fs, &g.passwd, "passwd", defaultPasswd, "user database mapping uids to names, passwd(5) format (env PROCWALK_PASSWD)")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words(bpfsource.ModeAuto, bpfsource.ModeProc, bpfsource.ModeBPF)}.String(fs, &g.source, "source", bpfsource.ModeAuto, "snapshot source of ps, tree, sessions, top, telegraf, run and watch: proc (read /proc), bpf (a BPF task iterator; /proc with a note if it cannot load) or auto (bpf in telegraf --execd, top and watch when root or CAP_BPF+CAP_PERFMON, kernel BTF and Linux 5.19+; /proc in one-shot commands, where loading costs more than it saves) (env PROCWALK_SOURCE)")
	// --config: ff reads the file it names (ffOptions), and
	// cmdline.Sources the lines of it.
	cmdline.Path("FILE").String(fs, new(string), "config", "", "config file: one 'flag value' per line, '#' comments; flags and env override it (env PROCWALK_CONFIG)")
}

// newFlagSet returns a flag set for a command, with the global flags on it.
// It prints nothing: a parse error is one line from runEnv, and help asked
// for goes to stdout (writeHelp).
func newFlagSet(name string, g *globals, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	return fs
}

// ffOptions gives every command env vars (PROCWALK_*) and a config file.
// Priority: flags, then env, then the config file. runEnv adds the config
// file parser (configFileOptions) once every command's flags are known.
func ffOptions() []ff.Option {
	return []ff.Option{
		ff.WithEnvVarPrefix("PROCWALK"),
		ff.WithConfigFileFlag("config"),
	}
}

// openFS opens the procfs root named by --proc.
func (g *globals) openFS() (procwalk.FS, error) {
	return procwalk.NewFS(g.proc)
}

// defaultCommand runs when no command is named: plain "procwalk" shows this
// host's sessions, biggest first.
const defaultCommand = "sessions"

// runEnv runs the command line args with e's surroundings: streams and
// clock.
func runEnv(ctx context.Context, e *env, args []string) error {
	e.args = args
	// Every line on stderr, in every mode, is cut at one length
	// (procwalk.MaxLogLineBytes): a reader such as Telegraf's execd stops
	// reading at a line over 64 KiB, and a script's print or error can be
	// of any length.
	e.stderr = procwalk.CapLines(e.stderr)
	stderr := e.stderr
	if versionOnly(args) { // before any command is built (see main)
		fmt.Fprintln(e.stdout, versionLine())
		return nil
	}
	g := &globals{clock: e.clock, note: func(n string) { fmt.Fprintf(stderr, "procwalk: note: %s\n", printable(n)) }}
	defer g.chooser.Close()
	root := newRoot(g, e, stderr, plainCommand(args))
	for _, c := range append([]*ffcli.Command{root}, root.Subcommands...) {
		if c.UsageFunc == nil {
			c.UsageFunc = cmdline.Usage // ffcli would set its own, which writes -flag
		}
	}
	sources := newSources()
	sources.AddConfigFileOptions(root)
	g.sources = sources

	// fail prints err as procwalk's one error line, and returns it.
	fail := func(err error) error {
		fmt.Fprintf(stderr, "procwalk: %s\n", printable(err.Error()))
		return err
	}
	switch {
	case len(args) >= 1 && args[0] == completeCommand: // hidden: no help lists it
		return complete(ctx, root, e, args[1:])
	case len(args) > 2 && args[0] == "help":
		return fail(usageErrorf("help takes one command name, got %q", args[1:]))
	case len(args) == 2 && args[0] == "help" && args[1] != "help":
		args = []string{args[1], "--help"} // procwalk help CMD
	case len(args) >= 1 && args[0] == "help":
		args = []string{"--help"}
	}
	program := cmdline.Program{Root: root, Default: defaultCommand, Globals: (&globals{}).register, FlagsAnywhere: func(name string) bool { return commandNamed(name).flagsAnywhere }}
	cmdArgs, err := program.Args(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, root.UsageFunc(root)) // help asked for: stdout, exit 0
			return err
		}
		return fail(usageError(err))
	}
	sub := cmdline.Program{Root: root}.Command(cmdArgs[0])
	err = sources.ReadCommandLine(sub.FlagSet, cmdArgs[1:])
	if err == nil {
		err = sources.CheckEnv(sub.FlagSet)
	}
	if err != nil {
		return fail(usageError(err))
	}
	if err := root.Parse(cmdArgs); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, sub.UsageFunc(sub))
			return err
		}
		return fail(usageError(cmdline.ParseError(err, sub)))
	}
	err = sources.Rename(root.Run(ctx))
	var ee *exitErr
	if err != nil && !errors.Is(err, flag.ErrHelp) && !(errors.As(err, &ee) && ee.Err == nil) {
		return e.sayError(ctx, err)
	}
	return err
}

// command is a command's name, its constructor, and how it reads the
// words after its name.
type command struct {
	name  string
	build func(*globals, *env) *ffcli.Command
	// flagsAnywhere: its flags may follow its arguments too (tree 1
	// --pss, kill 42 --yes), as users of every modern CLI expect. Not
	// for guard, run and watch: what follows their command or script
	// belongs to it.
	flagsAnywhere bool
	// takesRest: what follows its first argument belongs to the command
	// it runs (guard -- CMD ARGS), where no flag of its own completes.
	takesRest bool
}

// commands are the commands newRoot builds, in the order help lists them
// (completion and man follow).
func commands() []command {
	return []command{
		{name: "ps", build: newPSCommand},
		{name: "tree", build: newTreeCommand, flagsAnywhere: true},
		{name: "telegraf", build: newTelegrafCommand},
		{name: "sessions", build: newSessionsCommand},
		{name: "session", build: newSessionCommand, flagsAnywhere: true},
		{name: "kill", build: newKillCommand, flagsAnywhere: true},
		{name: "guard", build: newGuardCommand, takesRest: true},
		{name: "run", build: newRunCommand},
		{name: "watch", build: newWatchCommand},
		{name: "top", build: newTopCommand},
		{name: "record", build: newRecordCommand},
		{name: "test", build: newTestCommand},
	}
}

// commandNamed is the command called name; zero for none.
func commandNamed(name string) command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return command{}
}

// newRoot is procwalk's command tree: every command, or only the one
// plainCommand found. The others' flag sets, defaults and help texts cost a
// one-shot command more than a millisecond of CPU (BenchmarkOneShotRatio).
func newRoot(g *globals, e *env, stderr io.Writer, only string) *ffcli.Command {
	root := &ffcli.Command{
		Name:       "procwalk",
		ShortUsage: "procwalk [global flags] [<command>] [flags] (default command: " + defaultCommand + ")",
		LongHelp:   helpText("root"),
		FlagSet:    newFlagSet("procwalk", g, stderr),
	}
	for _, c := range commands() {
		if only == "" || only == c.name {
			root.Subcommands = append(root.Subcommands, c.build(g, e))
		}
	}
	if only == "" {
		root.Subcommands = append(root.Subcommands, newCompletionCommand(e), newManCommand(root, e))
	}
	return root
}

// plainCommand is the command args run when they name it plainly: global
// flags that parse, then the command's name or none (the default), and no
// config file, whose options are checked against every command's flags.
// "" otherwise, and for help, completion, man and names of no command,
// which list or describe every command: then every command is built.
func plainCommand(args []string) string {
	if os.Getenv("PROCWALK_CONFIG") != "" || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "-") && strings.HasPrefix(strings.TrimLeft(a, "-"), "config")
	}) {
		return ""
	}
	flags := flag.NewFlagSet("procwalk", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	(&globals{}).register(flags)
	if flags.Parse(args) != nil {
		return ""
	}
	name := defaultCommand
	if rest := flags.Args(); len(rest) > 0 {
		name = rest[0]
	}
	for _, c := range commands() {
		if strings.EqualFold(c.name, name) {
			return c.name
		}
	}
	return ""
}

// sayError prints err as procwalk's one error line on stderr and returns
// it; runEnv does so for a command's error, a command that must write it
// itself (kill, while it holds SIGPIPE) returns an exitErr without Err.
func (e *env) sayError(ctx context.Context, err error) error {
	if f, ok := procwalk.FileOf(e.stderr); ok && ctx.Err() != nil && procwalk.IsTerminal(f) {
		fmt.Fprintln(e.stderr) // the terminal echoed ^C where the message would start
	}
	fmt.Fprintf(e.stderr, "procwalk: %s\n", printable(err.Error()))
	return err
}

// versionOnly reports whether args ask for the version alone.
func versionOnly(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version")
}

// printable is procwalk.Printable, the one escaping of every name shown to
// a person, under the short name the CLI's many messages use.
func printable(s string) string { return procwalk.Printable(s) }

// outputWidth is how wide lines written to w may be (render.OutputWidth).
func (e *env) outputWidth(w io.Writer, wide bool) int {
	return render.OutputWidth(w, e.columns, wide)
}

// printTable writes t to w as wide as outputWidth says.
func printTable(e *env, t *render.Table, w io.Writer, wide bool) error {
	return t.Write(w, e.outputWidth(w, wide))
}
