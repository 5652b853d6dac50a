package main

import (
	"context"
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
	"golang.org/x/sys/unix"
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

const (
	// guardHistory is how many kill events guard keeps for its summary.
	guardHistory = 100
	// signalCauseWindow: main cancels ctx on the first SIGINT or SIGTERM,
	// which os/signal hands to guard's own channel in the same breath. A
	// cancel after which no INT or TERM has reached guard within this window
	// came from elsewhere (an embedding caller). Only an embedder's cancel
	// waits this long, so the margin can be generous for a loaded machine.
	signalCauseWindow = time.Second
	// giveUpAfterKill bounds the wait for processes that survive SIGKILL
	// (stuck in uninterruptible sleep) once guard has ended the tree.
	giveUpAfterKill = 30 * time.Second
	// releaseWait bounds the wait for a killed process's memory to be freed
	// before the next check can pick another victim.
	releaseWait = 10 * time.Second
)

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
}

const guardHelp = `Runs CMD with its stdin, stdout and stderr, watches its whole process tree
every --interval (a global flag, 1s by default) and ends it when it breaks
a limit:

  --max-rss SIZE      summed RSS of the tree (over-counts shared pages)
  --max-pss SIZE      summed PSS of the tree (exact; reads smaps_rollup of
                      the tree's processes each interval)
  --max-cpu-time D    user+system CPU of the tree, exited processes included
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
	if err := becomeSubreaper(); err != nil {
		return err
	}
	r := &guardRun{c: c, lim: lim, fs: fsys, self: os.Getpid(), history: kill.NewAuditLog(guardHistory),
		monitor: procwalk.NewMonitor(fsys, procwalk.MonitorConfig{Clock: c.g.clock, NoRates: true}), seen: make(map[procwalk.ProcID]bool), name: printable(args[0]),
		reported:   make(map[string]bool),
		foreground: terminalForeground(c.e.stdin)}
	r.killer, err = kill.NewKiller(fsys, kill.Config{
		Grace: c.grace, Force: true, Requester: "guard", Audit: r.record, DryRun: c.dryRun,
	})
	if err != nil {
		return err
	}

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
	// (PDEATHSIG), so the command never runs on unwatched. What the command
	// started and left behind is not covered (README "procwalk guard").
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.start = time.Now()
	err = cmd.Start()
	stdio.started()
	if err != nil {
		stdio.wait(time.Second)
		return startError(args[0], err)
	}
	r.child = cmd.Process.Pid
	r.openChild()
	defer r.closeChild()

	reaps := make(chan reaped, 64)
	go reapAll(reaps)
	r.loop(ctx, reaps, sigs)
	cmd.Process.Release() // reaped by reapAll, never by os/exec
	stdio.wait(time.Second)
	r.summary()
	return r.exitError()
}

// guardRun is the state of one guarded command.
type guardRun struct {
	c          *guardCommand
	lim        guardLimits
	fs         procwalk.FS
	monitor    *procwalk.Monitor
	killer     *kill.Killer
	history    *kill.AuditLog
	self       int
	name       string // the command as typed, escaped (printable): every message names it
	foreground bool

	child       int
	childID     procwalk.ProcID
	childHandle *kill.ProcHandle // forwards signals; nil if it exited at once
	start       time.Time
	end         time.Time

	childStatus *unix.WaitStatus
	interrupted bool // guard got SIGINT or SIGTERM: main's cancel of ctx came from it
	forwarded   []string
	enforced    string // why guard ended CMD for a limit; "" if it did not
	// unenforced says why ending the tree for a limit signalled nothing
	// (every target refused): guard then never claims it stopped CMD.
	unenforced    error
	cancelled     bool
	leftovers     bool // CMD left processes that guard ended
	abandoned     int  // processes that outlived SIGKILL and giveUpAfterKill
	reapedCPU     float64
	maxRSSKiB     int64
	orphansReaped int
	peakRSS       uint64
	peakPSS       uint64
	pssSeen       bool
	samples       int
	cpuSeconds    float64
	seen          map[procwalk.ProcID]bool
	scanErrors    int
	// dryRun breaches, by limit flag: reported once each.
	wouldEnd []string
	reported map[string]bool
}

// openChild takes a pidfd on the command, to forward signals through. The
// command is our unreaped child, so its pid is still its own.
func (r *guardRun) openChild() {
	id, err := r.fs.ReadProcID(r.child)
	if err != nil {
		return // already gone: nothing to forward to
	}
	r.childID = id
	if h, err := kill.OpenProc(r.fs, id); err == nil {
		r.childHandle = h
	}
}

func (r *guardRun) closeChild() {
	if r.childHandle != nil {
		r.childHandle.Close()
	}
}

// record keeps the audit events of processes guard actually signalled.
func (r *guardRun) record(e kill.ActionEvent) {
	if len(e.Signals) > 0 {
		r.history.Add(e)
	}
}

// loop runs until every child is reaped.
func (r *guardRun) loop(ctx context.Context, reaps <-chan reaped, sigs <-chan os.Signal) {
	// Guard finishes what it starts even after a Ctrl-C cancelled ctx.
	work := context.WithoutCancel(ctx)
	tick := time.NewTicker(r.c.g.interval)
	defer tick.Stop()
	var timeout <-chan time.Time
	if r.lim.timeout > 0 {
		t := time.NewTimer(r.lim.timeout)
		defer t.Stop()
		timeout = t.C
	}
	done := ctx.Done()
	var cancelCheck, giveUp <-chan time.Time
	for {
		select {
		case rp, ok := <-reaps:
			if !ok {
				r.end = time.Now()
				return
			}
			if r.reaped(rp) {
				r.endLeftovers(work) // whatever CMD left running, however it ended
				if r.c.dryRun {
					r.end = time.Now() // what CMD left runs on: a dry run ends nothing
					return
				}
			}
		case s := <-sigs:
			r.forward(s.(syscall.Signal))
		case <-tick.C:
			r.check(work)
		case <-timeout:
			timeout = nil
			r.endTree(work, "timeout", fmt.Sprintf("--timeout %s reached", r.c.timeout))
		case <-done:
			done = nil
			cancelCheck = time.After(signalCauseWindow)
		case <-cancelCheck:
			cancelCheck = nil
			r.forwardQueued(sigs) // a signal already queued is the cancel's cause
			if !r.interrupted && r.childStatus == nil {
				r.cancelled = true
				r.terminate(work, "cancelled")
			}
		case <-giveUp:
			r.abandoned = r.countTree()
			r.end = time.Now()
			return
		}
		if giveUp == nil && (r.enforced != "" || r.leftovers || r.cancelled) {
			giveUp = time.After(r.c.grace + kill.DefaultKillWait + giveUpAfterKill)
		}
	}
}

// reaped accounts for one reaped child; true when it was CMD.
func (r *guardRun) reaped(rp reaped) bool {
	r.reapedCPU += rp.cpuSeconds()
	r.maxRSSKiB = max(r.maxRSSKiB, rp.usage.Maxrss)
	if rp.pid != r.child {
		r.orphansReaped++
		return false
	}
	ws := rp.status
	r.childStatus = &ws
	return true
}

// forward passes a signal sent to guard on to CMD, through its pidfd.
func (r *guardRun) forward(sig syscall.Signal) {
	if sig == syscall.SIGINT || sig == syscall.SIGTERM {
		r.interrupted = true
	}
	if sig != syscall.SIGTERM && r.foreground {
		return // the terminal delivered it to CMD's process group, ours
	}
	if r.childStatus != nil || r.childHandle == nil {
		return // CMD is gone; its leftovers are being ended
	}
	if err := r.childHandle.Signal(sig); err == nil {
		r.forwarded = append(r.forwarded, kill.SignalName(sig))
	}
}

// forwardQueued forwards the signals already waiting on sigs.
func (r *guardRun) forwardQueued(sigs <-chan os.Signal) {
	for {
		select {
		case s := <-sigs:
			r.forward(s.(syscall.Signal))
		default:
			return
		}
	}
}

// check scans the tree, updates the peaks and acts on a breached limit.
func (r *guardRun) check(ctx context.Context) {
	if r.enforced != "" || r.cancelled {
		return
	}
	snap, err := r.monitor.Gather()
	if err != nil {
		r.scanErrors++
		return
	}
	tree := snap.Descendants(r.self)
	readPSS := r.lim.pssBytes > 0 || r.c.g.pss
	var t procwalk.Totals
	cpu := r.reapedCPU
	if readPSS {
		r.monitor.ReadMore(tree, procwalk.FieldSmaps) // a denied or vanished process counts without PSS
	}
	for _, p := range tree {
		t.Add(p)
		cpu += p.CPUSeconds() + p.ChildrenUserCPUSeconds + p.ChildrenSystemCPUSeconds
		r.seen[p.ID] = true
	}
	r.samples++
	r.peakRSS = max(r.peakRSS, t.RSSBytes)
	if t.SmapsRead > 0 {
		r.pssSeen = true
		r.peakPSS = max(r.peakPSS, t.PSSBytes)
	}
	r.cpuSeconds = max(r.cpuSeconds, cpu)

	switch {
	case r.lim.rssBytes > 0 && t.RSSBytes > r.lim.rssBytes:
		r.memoryBreach(ctx, snap, tree, "rss", "max-rss", fmt.Sprintf("tree RSS %s over --max-rss %s", formatBytes(t.RSSBytes), formatBytes(r.lim.rssBytes)))
	case r.lim.pssBytes > 0 && t.SmapsRead > 0 && t.PSSBytes > r.lim.pssBytes:
		r.memoryBreach(ctx, snap, tree, "pss", "max-pss", fmt.Sprintf("tree PSS %s over --max-pss %s", formatBytes(t.PSSBytes), formatBytes(r.lim.pssBytes)))
	case r.lim.cpuSeconds > 0 && cpu > r.lim.cpuSeconds:
		r.endTree(ctx, "max-cpu-time", fmt.Sprintf("tree CPU time %.1fs over --max-cpu-time %s", cpu, r.c.maxCPU))
	}
}

// dryRunOnce reports whether a dry run has already reported limit; the
// first call records why.
func (r *guardRun) dryRunOnce(limit, why string) bool {
	if r.reported[limit] {
		return true
	}
	r.reported[limit] = true
	r.wouldEnd = append(r.wouldEnd, why)
	return false
}

// memoryBreach applies the --kill policy to a memory limit.
func (r *guardRun) memoryBreach(ctx context.Context, snap *procwalk.Snapshot, tree []*procwalk.Process, metric, limit, why string) {
	if !r.lim.biggest {
		r.endTree(ctx, limit, why)
		return
	}
	if r.c.dryRun && r.dryRunOnce(limit, why) {
		return
	}
	by, _ := procwalk.LookupMetric(metric)
	for _, p := range kill.Biggest(snap, tree, -1, by) {
		if r.killer.Check(p) != nil {
			continue
		}
		verb := "terminating"
		if r.c.dryRun {
			verb = "would terminate (dry run)"
		}
		fmt.Fprintf(r.c.e.stderr, "procwalk guard: %s: %s the biggest process, pid %d (%s)\n", why, verb, p.ID.PID, printable(p.Comm))
		o := r.killer.WithRequester("guard:"+metric).Terminate(ctx, p.ID)
		if o.Result != kill.ResultExited && o.Result != kill.ResultKilled {
			return // not ended by guard (gone already, dry run ...): judge again next interval
		}
		if p.ID == r.childID {
			r.enforced = why + "; CMD itself was the biggest process"
		}
		// Do not judge the next check on memory that is still being freed.
		kill.WaitReleased(ctx, r.fs, p.ID, releaseWait)
		return
	}
}

// endTree ends the whole tree for a limit.
func (r *guardRun) endTree(ctx context.Context, limit, why string) {
	if r.enforced != "" {
		return
	}
	if r.c.dryRun {
		if !r.dryRunOnce(limit, why) {
			fmt.Fprintf(r.c.e.stderr, "procwalk guard: %s: would terminate the tree of %s (dry run)\n", why, r.name)
			r.terminate(ctx, why)
		}
		return
	}
	r.enforced = why
	fmt.Fprintf(r.c.e.stderr, "procwalk guard: %s: terminating the tree of %s\n", why, r.name)
	if rep := r.terminate(ctx, why); rep != nil && len(rep.Outcomes) > 0 && !signalledAny(rep) {
		r.unenforced = rep.Err()
		fmt.Fprintf(r.c.e.stderr, "procwalk guard: could not end the tree of %s: %s\n", r.name, printable(r.unenforced.Error()))
	}
}

// signalledAny reports whether a terminate sent a signal or found a
// target already gone.
func signalledAny(rep *kill.Report) bool {
	for _, o := range rep.Outcomes {
		if len(o.Signals) > 0 || o.Result == kill.ResultGone {
			return true
		}
	}
	return false
}

// endLeftovers ends what CMD left running when it exited.
func (r *guardRun) endLeftovers(ctx context.Context) {
	if r.countTree() == 0 {
		return
	}
	r.leftovers = true
	r.terminate(ctx, "left running by "+r.name)
}

// terminate runs the two-stage terminate over every descendant of guard
// and returns its report (nil when it could not plan).
func (r *guardRun) terminate(ctx context.Context, why string) *kill.Report {
	rep, err := r.killer.TerminateScope(ctx, guardScope{self: r.self, why: why})
	if err != nil {
		fmt.Fprintf(r.c.e.stderr, "procwalk guard: ending the tree: %v\n", err)
	}
	return rep
}

// countTree counts guard's live descendants.
func (r *guardRun) countTree() int {
	snap, err := r.monitor.Gather()
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range snap.Descendants(r.self) {
		if !p.Zombie() {
			n++
		}
	}
	return n
}

// guardScope is every descendant of guard: CMD's tree and the orphans
// reparented to guard as subreaper.
type guardScope struct {
	self int
	why  string
}

func (s guardScope) String() string          { return fmt.Sprintf("guarded tree (%s)", s.why) }
func (s guardScope) Fields() procwalk.Fields { return 0 }
func (s guardScope) Grows() bool             { return true }
func (s guardScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	return snap.Descendants(s.self)
}

// outcome says why guard ended.
func (r *guardRun) outcome() string {
	status := "still running"
	if r.childStatus != nil {
		status = describeStatus(*r.childStatus)
	}
	switch {
	case r.enforced != "" && r.unenforced != nil:
		return fmt.Sprintf("NOT stopped: %s, but every target was refused (%s %s)", r.enforced, r.name, status)
	case r.enforced != "":
		return fmt.Sprintf("stopped by procwalk: %s (%s %s)", r.enforced, r.name, status)
	case r.cancelled:
		return fmt.Sprintf("cancelled: the tree was terminated (%s %s)", r.name, status)
	case len(r.forwarded) > 0:
		return fmt.Sprintf("%s %s (guard forwarded %s)", r.name, status, strings.Join(r.forwarded, ","))
	}
	return r.name + " " + status
}

// summary prints how the run went to stderr.
func (r *guardRun) summary() {
	w := r.c.e.stderr
	if r.end.IsZero() {
		r.end = time.Now()
	}
	fmt.Fprintf(w, "procwalk guard: %s after %s\n", r.outcome(), r.end.Sub(r.start).Round(time.Millisecond))
	kernelPeak := formatBytes(uint64(max(r.maxRSSKiB, 0)) * 1024)
	if r.samples == 0 {
		fmt.Fprintf(w, "  tree not sampled (it ended before the first --interval %s); largest process peak RSS at most %s (kernel high-water mark)\n", r.c.g.interval, kernelPeak)
	} else {
		pss := "PSS not read (use --max-pss or --pss)"
		if r.pssSeen {
			pss = "peak tree PSS " + formatBytes(r.peakPSS)
		}
		fmt.Fprintf(w, "  peak tree RSS %s, %s, sampled %s every %s; largest process peak RSS at most %s (kernel high-water mark)\n",
			formatBytes(r.peakRSS), pss, countOf(r.samples, "time", "times"), r.c.g.interval, kernelPeak)
	}
	fmt.Fprintf(w, "  CPU %.2fs user+system; %s seen; %s reaped\n",
		max(r.cpuSeconds, r.reapedCPU), countOf(len(r.seen), "process", "processes"), countOf(r.orphansReaped, "orphan", "orphans"))
	switch {
	case r.leftovers && r.c.dryRun:
		fmt.Fprintf(w, "  %s left processes running: not ended (dry run)\n", r.name)
	case r.leftovers:
		fmt.Fprintf(w, "  %s left processes running: guard ended them\n", r.name)
	}
	for _, why := range r.wouldEnd {
		fmt.Fprintf(w, "  dry run: %s: nothing was signalled\n", why)
	}
	if r.abandoned > 0 {
		fmt.Fprintf(w, "  %d processes outlived SIGKILL (uninterruptible sleep?): guard stopped waiting for them\n", r.abandoned)
	}
	if r.scanErrors > 0 {
		fmt.Fprintf(w, "  %d scans of %s failed: limits were not checked then\n", r.scanErrors, r.fs.Root())
	}
	if events := r.history.Events(); len(events) > 0 {
		what := "signalled by guard"
		if r.c.dryRun {
			what = "would have been signalled"
		}
		fmt.Fprintf(w, "  %s: %d (last %d kept):\n", what, r.history.Total(), guardHistory)
		for _, e := range events {
			fmt.Fprintf(w, "    %s\n", printable(e.String()))
		}
	}
}

// exitError is guard's exit: 124 for an enforced limit, else CMD's status.
func (r *guardRun) exitError() error {
	switch {
	case r.enforced != "" && r.unenforced != nil:
		return &exitErr{Code: exitError, Err: fmt.Errorf("guard: %s broke a limit and could not be stopped: %w", r.name, r.unenforced)}
	case r.enforced != "":
		return &exitErr{Code: exitLimit}
	case r.childStatus == nil:
		return &exitErr{Code: exitError, Err: fmt.Errorf("guard: %s was never reaped", r.name)}
	}
	if code := exitStatus(*r.childStatus); code != 0 {
		return &exitErr{Code: code}
	}
	return nil
}
