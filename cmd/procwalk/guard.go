//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// guard.go is `procwalk guard -- CMD ARGS...`: run a command, watch its
// whole process tree every --interval, and end it safely when it breaks a
// memory, CPU or time limit (kill.Supervise, its stdio kill.Stdio).
//
// Supervise reaps with wait4(-1): any child of this process. That is right
// in the procwalk binary, where guard is the only thing running; code that
// embeds run() next to other child processes must not run guard.

// Exit codes of guard besides the command's own.
const (
	exitLimit         = kill.ExitLimit // procwalk ended the command for breaking a limit (as timeout(1) does)
	exitNotExecutable = 126            // the command was found but could not be run
	exitNotFound      = 127            // the command was not found
)

// guardHistory is how many kill events guard keeps for its summary.
const guardHistory = 100

type guardCommand struct {
	g       *globals
	e       *env
	maxRSS  uint64 // bytes; 0: no limit
	maxPSS  uint64
	maxCPU  time.Duration
	timeout time.Duration
	kill    string
	grace   time.Duration
	dryRun  bool
	// noCgroup keeps CMD in guard's own cgroup.
	noCgroup bool
}

func newGuardCommand(g *globals, e *env) *ffcli.Command {
	c := &guardCommand{g: g, e: e}
	fs := newFlagSet("guard", g, e.stderr)
	const positive = "a positive size such as 512MiB, 2G or 1.5GiB"
	fs.Var(cmdline.NewSize(&c.maxRSS, "", 1, 0, positive), "max-rss", "end the tree when its summed RSS exceeds SIZE (512MiB, 2G, 1.5GiB)")
	fs.Var(cmdline.NewSize(&c.maxPSS, "", 1, 0, positive), "max-pss", "end the tree when its summed PSS exceeds SIZE (reads smaps_rollup)")
	fs.DurationVar(&c.maxCPU, "max-cpu-time", 0, "end the tree when its user+system CPU time exceeds this")
	fs.DurationVar(&c.timeout, "timeout", 0, "end the tree this long after CMD started")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words("tree", "biggest"), Strict: true}.String(fs, &c.kill, "kill", "tree", "on a memory limit: tree (end everything) or biggest (end the largest process)")
	fs.DurationVar(&c.grace, "grace", kill.DefaultGrace, "time to exit after TERM before SIGKILL")
	fs.BoolVar(&c.dryRun, "dry-run", false, "report what each broken limit would end, once per limit; signal nothing")
	fs.BoolVar(&c.noCgroup, "no-cgroup", false, "do not run CMD in a cgroup of its own (its CPU is then counted approximately)")
	return &ffcli.Command{
		Name:       "guard",
		ShortUsage: "procwalk guard [flags] -- CMD [ARGS...]",
		ShortHelp:  "run a command and end its process tree when it breaks a memory, CPU or time limit",
		LongHelp:   helpText("guard"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

// checkLimits checks the flags' durations (the sizes are checked as they
// are parsed).
func (c *guardCommand) checkLimits() error {
	if c.maxCPU < 0 {
		return usageErrorf("--max-cpu-time %v: want a positive duration such as 90s or 2h", c.maxCPU)
	}
	if c.timeout < 0 {
		return usageErrorf("--timeout %v: want a positive duration such as 90s or 1h30m", c.timeout)
	}
	if c.grace <= 0 {
		return usageErrorf("--grace %v: want a positive duration such as 5s", c.grace)
	}
	if c.g.interval <= 0 {
		return usageErrorf("--interval %v: want a positive duration such as 1s or 200ms", c.g.interval)
	}
	return nil
}

func (c *guardCommand) exec(ctx context.Context, args []string) error {
	if err := c.checkLimits(); err != nil {
		return err
	}
	if len(args) == 0 {
		return usageErrorf("guard needs a command: procwalk guard [flags] -- CMD [ARGS...]")
	}
	fsys, err := c.g.openFS()
	if err != nil {
		return err
	}
	name := printable(args[0]) // every message names it

	// Listen before starting CMD, so no signal meant for it is missed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	stdio, err := kill.NewStdio(c.e.stdin, c.e.stdout, c.e.stderr)
	if err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	// A guard killed with SIGKILL cannot end the command: the kernel does
	// (PDEATHSIG, set by Supervise). What the command started and left
	// behind is not covered (README "procwalk guard").
	sentinel := c.e.newSentinel()
	defer sentinel.Close()
	res, err := kill.Supervise(ctx, fsys, cmd, kill.SuperviseConfig{
		MaxRSSBytes: c.maxRSS, MaxPSSBytes: c.maxPSS, MaxCPUTime: c.maxCPU, Timeout: c.timeout,
		KillBiggest: c.kill == "biggest", ReadPSS: c.g.pss, Interval: c.g.interval, Grace: c.grace, DryRun: c.dryRun,
		Names: kill.LimitNames{RSS: "--max-rss", PSS: "--max-pss", CPUTime: "--max-cpu-time", Timeout: "--timeout"},
		Name:  name, Requester: "guard", Signals: sigs, Foreground: kill.Foreground(c.e.stdin),
		Log:   func(msg string) { fmt.Fprintf(c.e.stderr, "procwalk guard: %s\n", printable(msg)) },
		Clock: c.g.clock, HistorySize: guardHistory, Sentinel: sentinel, NoCgroup: c.noCgroup,
	})
	stdio.Started()
	if errors.Is(err, kill.ErrSubreaper) {
		return err
	}
	if err != nil {
		stdio.Wait(time.Second)
		return startError(args[0], err)
	}
	stdio.Wait(time.Second)
	render.GuardSummary(c.e.stderr, render.GuardRun{Result: res, Name: name, Root: fsys.Root(), Interval: c.g.interval,
		DryRun: c.dryRun, HistorySize: guardHistory})
	return guardExit(res, name)
}

// guardExit is guard's exit: 124 for an enforced limit, else CMD's status
// (SuperviseResult.ExitCode).
func guardExit(res *kill.SuperviseResult, name string) error {
	code, err := res.ExitCode()
	switch {
	case err != nil:
		return &exitErr{Code: exitError, Err: fmt.Errorf("guard: %s %w", name, err)}
	case code != 0:
		return &exitErr{Code: code}
	}
	return nil
}

// startError maps a failure to start the command onto the shell's codes:
// 127 not found, 126 found but not executable.
func startError(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return &exitErr{Code: exitNotFound, Err: fmt.Errorf("guard: %s: command not found: %v", name, err)}
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return &exitErr{Code: exitNotExecutable, Err: fmt.Errorf("guard: %s: cannot execute: %v", name, err)}
	}
	return &exitErr{Code: exitNotExecutable, Err: fmt.Errorf("guard: starting %s: %w", name, err)}
}
