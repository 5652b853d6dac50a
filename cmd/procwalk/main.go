// Command procwalk reports, groups and safely acts on the processes and
// sessions of a Linux host.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
)

// Exit codes, listed in every command's --help (exitCodesHelp).
const (
	exitOK    = 0
	exitError = 1 // a run-time failure: missing /proc root, unreadable file, unknown session
	exitUsage = 2 // bad flags or arguments
)

const exitCodesHelp = `EXIT CODES
  0  success (partial data, e.g. processes gone mid-scan, is still success)
  1  run-time failure: /proc root missing or unreadable, unknown session, ...
  2  usage error: unknown flag, bad flag value or argument`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

// env is what a command may touch of the outside world; tests pass buffers.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// exitErr ends the program with Code after printing Err (when not nil).
type exitErr struct {
	Code int
	Err  error
}

func (e *exitErr) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *exitErr) Unwrap() error { return e.Err }

// usageErrorf is an error in the command line: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitErr{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

func exitCode(err error) int {
	var e *exitErr
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &e):
		return e.Code
	}
	return exitError
}

// globals are the flags every command accepts, before or after its name.
type globals struct {
	proc     string
	pss      bool
	interval time.Duration
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.proc, "proc", procwalk.DefaultRoot, "procfs root to read (env PROCWALK_PROC)")
	fs.BoolVar(&g.pss, "pss", false, "read smaps_rollup for PSS/USS: exact shared-memory accounting, slower, locks each target's memory map briefly (env PROCWALK_PSS)")
	fs.DurationVar(&g.interval, "interval", time.Second, "sampling interval for rates such as CPU % (two samples this far apart) (env PROCWALK_INTERVAL)")
	fs.String("config", "", "config file: one 'flag value' per line (env PROCWALK_CONFIG)")
}

// newFlagSet returns a flag set for a command, with the global flags on it.
func newFlagSet(name string, g *globals, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	return fs
}

// ffOptions gives every command env vars (PROCWALK_*) and a config file.
// Priority: flags, then env, then the config file.
func ffOptions() []ff.Option {
	return []ff.Option{
		ff.WithEnvVarPrefix("PROCWALK"),
		ff.WithConfigFileFlag("config"),
		ff.WithConfigFileParser(ff.PlainParser),
	}
}

// openFS opens the procfs root named by --proc.
func (g *globals) openFS() (procwalk.FS, error) {
	return procwalk.NewFS(g.proc)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	_ = e // handed to each subcommand constructor
	g := &globals{}
	root := &ffcli.Command{
		Name:        "procwalk",
		ShortUsage:  "procwalk [global flags] <command> [flags]",
		LongHelp:    "procwalk walks /proc once and reports processes and sessions.\n\n" + exitCodesHelp,
		FlagSet:     newFlagSet("procwalk", g, stderr),
		Options:     ffOptions(),
		Subcommands: []*ffcli.Command{
			// One line per command; each lives in its own file, e.g. newPSCommand(g, e).
		},
	}
	root.Exec = func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q: run 'procwalk --help' for the list", args[0])
		}
		return flag.ErrHelp
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		// The flag package has printed the error and the usage already.
		return &exitErr{Code: exitUsage}
	}
	err := root.Run(ctx)
	var ee *exitErr
	if err != nil && !errors.Is(err, flag.ErrHelp) && !(errors.As(err, &ee) && ee.Err == nil) {
		fmt.Fprintf(stderr, "procwalk: %v\n", err)
	}
	return err
}
