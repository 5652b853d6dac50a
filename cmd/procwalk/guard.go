//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// guard.go is `procwalk guard -- CMD ARGS...`: run a command, watch its
// whole process tree every --interval, and end it safely when it breaks a
// memory, CPU or time limit.

// Exit codes of guard besides the command's own.
const (
	exitLimit         = 124 // procwalk ended the command for breaking a limit (as timeout(1) does)
	exitNotExecutable = 126 // the command was found but could not be run
	exitNotFound      = 127 // the command was not found
)

// guardHistory is how many kill events guard keeps for its summary.
const guardHistory = 100

type guardCommand struct {
	g       *globals
	e       *env
	maxRSS  string
	maxPSS  string
	maxCPU  time.Duration
	timeout time.Duration
	kill    string
	grace   time.Duration
	dryRun  bool
	// noCgroup keeps CMD in guard's own cgroup.
	noCgroup bool
}

const guardHelp = `Runs CMD with its stdin, stdout and stderr, watches its whole process tree
every --interval (a global flag, 1s by default) and ends it when it breaks
a limit:

  --max-rss SIZE      summed RSS of the tree (over-counts shared pages)
  --max-pss SIZE      summed PSS of the tree (exact; reads smaps_rollup of
                      the tree's processes each interval)
  --max-cpu-time D    user+system CPU of the tree, exited processes included:
                      exact from CMD's own cgroup (v2), where guard can make
                      one; else approximate (a process reaped by the kernel,
                      its parent ignoring SIGCHLD, counts as last sampled)
  --timeout D         wall-clock time since CMD started

SIZE is bytes with an optional unit: 512MiB, 2G, 1.5GiB (K M G T and KiB
MiB GiB TiB are powers of 1024; KB MB GB TB powers of 1000). D is a Go
duration: 90s, 1h30m.

POLICY (--kill)
  tree     (default) the first signal (TERM) to every process of the tree,
           --grace for them to exit, then SIGKILL; guard exits 124
  biggest  for a memory limit, only the largest process (by RSS, or PSS for
           --max-pss) is terminated; guard waits until its memory is freed
           and keeps watching. CPU and time limits always end the tree.
The protected list of procwalk kill does not apply (guard acts only on the
processes CMD started); the hard rules do (guard never signals itself).

The tree includes daemons CMD double-forks: guard is a child subreaper,
so orphans are reparented to it, watched, reaped (no zombies), and ended
with the tree. When CMD exits, whatever it left running gets the same
two-stage terminate before guard exits.

SIGTERM sent to guard is forwarded to CMD; so are SIGINT, SIGQUIT and
SIGHUP unless guard runs in the foreground of the terminal on stdin (the
terminal then sends them to CMD directly). Job control (Ctrl-Z) is not
passed through.

--dry-run watches and reports, once per limit, exactly what would be
signalled, and signals nothing: CMD runs to its own end, and guard then
exits without ending (or waiting for) what CMD left running.

On exit guard prints a summary to stderr: why it ended, peak tree RSS and
PSS (sampled each interval), the largest single process's peak RSS (from
the kernel), CPU seconds, duration, and the last 100 processes it killed.

EXAMPLES
  procwalk guard --max-rss 2G -- make -j8
  procwalk guard --max-pss 1.5GiB --kill biggest --interval 500ms -- ./run-agents.sh
  procwalk guard --timeout 30m --max-cpu-time 2h -- ./nightly.sh

EXIT CODES
  N    CMD's own exit status
  128+N CMD was killed by signal N (not by guard)
  124  guard ended CMD for breaking a limit (--max-rss, --max-pss,
       --max-cpu-time, --timeout); with --kill biggest only when the
       process it ended was CMD itself
  126  CMD could not be executed
  127  CMD was not found
  1    guard itself failed (e.g. it could not become a subreaper)
  2    usage error: a bad flag value (the message names the flag) or no CMD`

func newGuardCommand(g *globals, e *env) *ffcli.Command {
	c := &guardCommand{g: g, e: e}
	fs := newFlagSet("guard", g, e.stderr)
	fs.StringVar(&c.maxRSS, "max-rss", "", "end the tree when its summed RSS exceeds SIZE (512MiB, 2G, 1.5GiB)")
	fs.StringVar(&c.maxPSS, "max-pss", "", "end the tree when its summed PSS exceeds SIZE (reads smaps_rollup)")
	fs.DurationVar(&c.maxCPU, "max-cpu-time", 0, "end the tree when its user+system CPU time exceeds this")
	fs.DurationVar(&c.timeout, "timeout", 0, "end the tree this long after CMD started")
	fs.StringVar(&c.kill, "kill", "tree", "on a memory limit: tree (end everything) or biggest (end the largest process)")
	fs.DurationVar(&c.grace, "grace", kill.DefaultGrace, "time to exit after TERM before SIGKILL")
	fs.BoolVar(&c.dryRun, "dry-run", false, "report what each broken limit would end, once per limit; signal nothing")
	fs.BoolVar(&c.noCgroup, "no-cgroup", false, "do not run CMD in a cgroup of its own (its CPU is then counted approximately)")
	return &ffcli.Command{
		Name:       "guard",
		ShortUsage: "procwalk guard [flags] -- CMD [ARGS...]",
		ShortHelp:  "run a command and end its process tree when it breaks a memory, CPU or time limit",
		LongHelp:   guardHelp,
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

// guardLimits are the checked flag values; zero means no limit.
type guardLimits struct {
	rssBytes   uint64
	pssBytes   uint64
	cpuSeconds float64
	timeout    time.Duration
	biggest    bool
}

func (c *guardCommand) limits() (guardLimits, error) {
	var l guardLimits
	var err error
	if c.maxRSS != "" {
		if l.rssBytes, err = procwalk.ParseBytes(c.maxRSS); err != nil {
			return l, usageErrorf("--max-rss: %v", err)
		}
		if l.rssBytes == 0 {
			return l, usageErrorf("--max-rss %q: want a positive size such as 512MiB, 2G or 1.5GiB", c.maxRSS)
		}
	}
	if c.maxPSS != "" {
		if l.pssBytes, err = procwalk.ParseBytes(c.maxPSS); err != nil {
			return l, usageErrorf("--max-pss: %v", err)
		}
		if l.pssBytes == 0 {
			return l, usageErrorf("--max-pss %q: want a positive size such as 512MiB, 2G or 1.5GiB", c.maxPSS)
		}
	}
	if c.maxCPU < 0 {
		return l, usageErrorf("--max-cpu-time %v: want a positive duration such as 90s or 2h", c.maxCPU)
	}
	if c.timeout < 0 {
		return l, usageErrorf("--timeout %v: want a positive duration such as 90s or 1h30m", c.timeout)
	}
	if c.grace <= 0 {
		return l, usageErrorf("--grace %v: want a positive duration such as 5s", c.grace)
	}
	if c.g.interval <= 0 {
		return l, usageErrorf("--interval %v: want a positive duration such as 1s or 200ms", c.g.interval)
	}
	switch c.kill {
	case "tree":
	case "biggest":
		l.biggest = true
	default:
		return l, usageErrorf("--kill %q: want tree or biggest", c.kill)
	}
	l.cpuSeconds, l.timeout = c.maxCPU.Seconds(), c.timeout
	return l, nil
}

func (c *guardCommand) exec(ctx context.Context, args []string) error {
	lim, err := c.limits()
	if err != nil {
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

	stdio, err := newChildIO(c.e)
	if err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.stdin, stdio.stdout, stdio.stderr
	// A guard killed with SIGKILL cannot end the command: the kernel does
	// (PDEATHSIG, set by Supervise). What the command started and left
	// behind is not covered (README "procwalk guard").
	sentinel := c.e.newSentinel()
	defer sentinel.Close()
	res, err := kill.Supervise(ctx, fsys, cmd, kill.SuperviseConfig{
		MaxRSSBytes: lim.rssBytes, MaxPSSBytes: lim.pssBytes, MaxCPUTime: c.maxCPU, Timeout: lim.timeout,
		KillBiggest: lim.biggest, ReadPSS: c.g.pss, Interval: c.g.interval, Grace: c.grace, DryRun: c.dryRun,
		Names: kill.LimitNames{RSS: "--max-rss", PSS: "--max-pss", CPUTime: "--max-cpu-time", Timeout: "--timeout"},
		Name:  name, Requester: "guard", Signals: sigs, Foreground: terminalForeground(c.e.stdin),
		Log:   func(msg string) { fmt.Fprintf(c.e.stderr, "procwalk guard: %s\n", printable(msg)) },
		Clock: c.g.clock, HistorySize: guardHistory, Sentinel: sentinel, NoCgroup: c.noCgroup,
	})
	stdio.started()
	if errors.Is(err, kill.ErrSubreaper) {
		return err
	}
	if err != nil {
		stdio.wait(time.Second)
		return startError(args[0], err)
	}
	stdio.wait(time.Second)
	r := guardReport{c: c, res: res, name: name, root: fsys.Root()}
	r.summary()
	return r.exitError()
}

// guardReport presents a supervised run: its summary and exit code.
type guardReport struct {
	c    *guardCommand
	res  *kill.SuperviseResult
	name string
	root string
}

// outcome says why guard ended.
func (r *guardReport) outcome() string {
	res := r.res
	status := "still running"
	if res.Status != nil {
		status = describeStatus(*res.Status)
	}
	switch {
	case res.Enforced != "" && res.Unenforced != nil:
		return fmt.Sprintf("NOT stopped: %s, but every target was refused (%s %s)", res.Enforced, r.name, status)
	case res.Enforced != "":
		return fmt.Sprintf("stopped by procwalk: %s (%s %s)", res.Enforced, r.name, status)
	case res.Cancelled:
		return fmt.Sprintf("cancelled: the tree was terminated (%s %s)", r.name, status)
	case len(res.Forwarded) > 0:
		return fmt.Sprintf("%s %s (guard forwarded %s)", r.name, status, strings.Join(res.Forwarded, ","))
	}
	return r.name + " " + status
}

// summary prints how the run went to stderr.
func (r *guardReport) summary() {
	w, res := r.c.e.stderr, r.res
	if res.End.IsZero() {
		res.End = time.Now()
	}
	fmt.Fprintf(w, "procwalk guard: %s after %s\n", r.outcome(), res.End.Sub(res.Start).Round(time.Millisecond))
	kernelPeak := formatBytes(uint64(max(res.MaxRSSKiB, 0)) * 1024)
	if res.Samples == 0 {
		fmt.Fprintf(w, "  tree not sampled (it ended before the first --interval %s); largest process peak RSS at most %s (kernel high-water mark)\n", r.c.g.interval, kernelPeak)
	} else {
		pss := "PSS not read (use --max-pss or --pss)"
		if res.PSSSeen {
			pss = "peak tree PSS " + formatBytes(res.PeakPSSBytes)
		}
		fmt.Fprintf(w, "  peak tree RSS %s, %s, sampled %s every %s; largest process peak RSS at most %s (kernel high-water mark)\n",
			formatBytes(res.PeakRSSBytes), pss, countOf(res.Samples, "time", "times"), r.c.g.interval, kernelPeak)
	}
	how := "from its cgroup"
	if res.CPUCgroup == "" {
		how = "approximate: no cgroup of its own"
	}
	fmt.Fprintf(w, "  CPU %.2fs user+system (%s); %s seen; %s reaped\n",
		res.CPUSeconds, how, countOf(res.Seen, "process", "processes"), countOf(res.OrphansReaped, "orphan", "orphans"))
	switch {
	case res.Leftovers && r.c.dryRun:
		fmt.Fprintf(w, "  %s left processes running: not ended (dry run)\n", r.name)
	case res.Leftovers:
		fmt.Fprintf(w, "  %s left processes running: guard ended them\n", r.name)
	}
	for _, why := range res.WouldEnd {
		fmt.Fprintf(w, "  dry run: %s: nothing was signalled\n", why)
	}
	if res.Abandoned > 0 {
		fmt.Fprintf(w, "  %d processes outlived SIGKILL (uninterruptible sleep?): guard stopped waiting for them\n", res.Abandoned)
	}
	if res.ScanErrors > 0 {
		fmt.Fprintf(w, "  %d scans of %s failed: limits were not checked then\n", res.ScanErrors, r.root)
	}
	if events := res.History.Events(); len(events) > 0 {
		what := "signalled by guard"
		if r.c.dryRun {
			what = "would have been signalled"
		}
		fmt.Fprintf(w, "  %s: %d (last %d kept):\n", what, res.History.Total(), guardHistory)
		for _, e := range events {
			fmt.Fprintf(w, "    %s\n", printable(e.String()))
		}
	}
}

// exitError is guard's exit: 124 for an enforced limit, else CMD's status.
func (r *guardReport) exitError() error {
	res := r.res
	switch {
	case res.Enforced != "" && res.Unenforced != nil:
		return &exitErr{Code: exitError, Err: fmt.Errorf("guard: %s broke a limit and could not be stopped: %w", r.name, res.Unenforced)}
	case res.Enforced != "":
		return &exitErr{Code: exitLimit}
	case res.Status == nil:
		return &exitErr{Code: exitError, Err: fmt.Errorf("guard: %s was never reaped", r.name)}
	}
	if code := exitStatus(*res.Status); code != 0 {
		return &exitErr{Code: code}
	}
	return nil
}
