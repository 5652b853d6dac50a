//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"golang.org/x/sys/unix"
)

// supervise.go runs a command and watches its whole process tree every
// interval, ending it safely when it breaks a memory, CPU or time limit:
// the engine of `procwalk guard`, for library users too.
//
// Supervise makes this process a child subreaper and reaps every child it
// has (wait4(-1)): run it in a process that waits for no other children,
// one at a time.

// SuperviseConfig says what Supervise enforces; a zero limit is no limit.
type SuperviseConfig struct {
	MaxRSSBytes uint64        // summed RSS of the tree (over-counts shared pages)
	MaxPSSBytes uint64        // summed PSS of the tree (reads smaps_rollup each interval)
	MaxCPUTime  time.Duration // user+system CPU of the tree, exited processes included (see CPUExact)
	Timeout     time.Duration // wall-clock time since the command started
	// KillBiggest ends only the largest process on a memory limit (by RSS,
	// or PSS for MaxPSSBytes), waits until its memory is freed and keeps
	// watching; CPU and time limits always end the tree.
	KillBiggest bool
	// ReadPSS samples the tree's PSS each interval without a PSS limit.
	ReadPSS bool
	// Interval between checks; 0 means one second.
	Interval time.Duration
	// Grace is the time to exit after TERM before SIGKILL; 0 means
	// DefaultGrace.
	Grace time.Duration
	// DryRun reports, once per limit, what would be signalled and signals
	// nothing: the command runs to its own end, and what it leaves
	// running is neither ended nor waited for.
	DryRun bool
	// Names name the limits in messages, e.g. the flags that set them;
	// "" means "max_rss", "max_pss", "max_cpu_time", "timeout".
	Names LimitNames
	// Name is the command in messages; "" means its path.
	Name string
	// Requester labels the audit events (Result.History); "" means
	// "supervise".
	Requester string
	// Signals are forwarded to the command through its pidfd, until it is
	// reaped; a SIGINT or SIGTERM among them marks the run interrupted.
	// With Foreground, only SIGTERM is: the terminal delivers INT, QUIT
	// and HUP to the command itself.
	Signals    <-chan os.Signal
	Foreground bool
	// Log receives a line for each action (not escaped: process names
	// are in it); nil discards them.
	Log func(msg string)
	// HistorySize bounds the events kept in Result.History; 0 means 100.
	HistorySize int
	// Clock stamps the snapshots and the result's Start and End; nil is
	// the system clock.
	Clock procwalk.Clock
	// NoCgroup keeps the command in this process's cgroup: its CPU is
	// then counted approximately (see supervise_cpu.go).
	NoCgroup bool
	// Sentinel continues what ending the tree stopped should this process
	// die meanwhile (see Config.Sentinel); nil: the tree is not stopped
	// around its signals. Its processes, children of this one, are never
	// part of the tree.
	Sentinel *Sentinel
}

// LimitNames name the limits in messages.
type LimitNames struct{ RSS, PSS, CPUTime, Timeout string }

// SuperviseResult says how a supervised run went.
type SuperviseResult struct {
	// Status is the command's wait status; nil when it was never reaped
	// (Supervise stopped waiting for processes that outlived SIGKILL).
	Status *unix.WaitStatus
	// Enforced says why the command was ended for a limit ("" if not);
	// Unenforced, why that signalled nothing (every target refused).
	Enforced   string
	Unenforced error
	// Cancelled: ctx was cancelled by the caller (not by a forwarded
	// SIGINT or SIGTERM), and the tree was terminated.
	Cancelled   bool
	Interrupted bool     // a SIGINT or SIGTERM reached Signals
	Forwarded   []string // the signals forwarded, by name
	Leftovers   bool     // the command left processes running when it exited
	Abandoned   int      // processes that outlived SIGKILL
	WouldEnd    []string // dry run: each limit broken, and why

	Start, End   time.Time
	Samples      int // checks made
	ScanErrors   int // checks whose scan failed: limits were not checked then
	PeakRSSBytes uint64
	PeakPSSBytes uint64
	PSSSeen      bool    // PeakPSSBytes was measured
	CPUSeconds   float64 // the tree's user+system CPU, exited processes included
	// CPUCgroup is the cgroup the command ran in, whose usage CPUSeconds
	// is, exact; "" when none could be made: CPUSeconds is then
	// approximate (a process the kernel reaped counts as last sampled).
	CPUCgroup     string
	MaxRSSKiB     int64 // the largest reaped process's peak RSS (wait4's ru_maxrss)
	OrphansReaped int   // children reaped other than the command
	Seen          int   // processes seen in the tree
	History       *AuditLog
}

// SignalCauseWindow is how long Supervise waits, after ctx is cancelled,
// for a SIGINT or SIGTERM on Signals that explains the cancel: a CLI
// cancels ctx on the first one, which os/signal hands to Signals in the
// same breath. A cancel without one came from elsewhere (an embedding
// caller), and the tree is terminated. Only such a cancel waits this long,
// so the margin can be generous for a loaded machine.
const SignalCauseWindow = time.Second

const (
	// giveUpAfterKill bounds the wait for processes that survive SIGKILL
	// (stuck in uninterruptible sleep) once the tree has been ended.
	giveUpAfterKill = 30 * time.Second
	// releaseWait bounds the wait for a killed process's memory to be freed
	// before the next check can pick another victim.
	releaseWait = 10 * time.Second
)

// ErrSubreaper means Supervise could not become a child subreaper.
var ErrSubreaper = errors.New("becoming a child subreaper")

// Supervise starts cmd (not yet started; its stdio set by the caller),
// watches its tree until every process of it is reaped (or, after the tree
// was ended, until the survivors of SIGKILL are given up), and returns how
// it went. The command gets SIGKILL should this process die (PDEATHSIG).
// An error means the command could not be started (it wraps exec's error)
// or supervision could not begin.
func Supervise(ctx context.Context, fs procwalk.FS, cmd *exec.Cmd, cfg SuperviseConfig) (*SuperviseResult, error) {
	cfg = cfg.withDefaults(cmd)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSubreaper, err)
	}
	r := &supervision{cfg: cfg, fs: fs, self: os.Getpid(), seen: make(map[procwalk.ProcID]bool), reported: make(map[string]bool),
		pipeline: frame.New(fs, frame.Config{NoRates: true, Clock: cfg.Clock}),
		res:      &SuperviseResult{History: NewAuditLog(cfg.HistorySize)}}
	var err error
	r.killer, err = NewKiller(fs, Config{Grace: cfg.Grace, Force: true, Requester: cfg.Requester, Audit: r.record, DryRun: cfg.DryRun, Sentinel: cfg.Sentinel})
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A supervisor killed with SIGKILL cannot end the command: the kernel
	// does, so the command never runs on unwatched.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if !cfg.NoCgroup {
		r.cgroup = newCPUCgroup(fs)
	}
	if r.cgroup != nil {
		defer r.cgroup.remove()
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, r.cgroup.fd
		r.res.CPUCgroup = r.cgroup.dir
	}
	r.res.Start = r.cfg.Clock.Now()
	err = cmd.Start()
	if err != nil && r.cgroup != nil && !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
		// clone3 into a cgroup refused (a kernel before 5.7, a seccomp
		// filter): start it where we are, and count approximately.
		r.cgroup.remove()
		r.cgroup, r.res.CPUCgroup = nil, ""
		attr := *cmd.SysProcAttr
		attr.UseCgroupFD = false
		// A Cmd whose Start failed is not started again: a fresh one.
		*cmd = exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin, Stdout: cmd.Stdout,
			Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles, SysProcAttr: &attr}
		err = cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	r.child = cmd.Process.Pid
	r.openChild()
	defer r.closeChild()
	reaps := make(chan reaped, 64)
	go reapAll(reaps)
	r.loop(ctx, reaps)
	cmd.Process.Release() // reaped by reapAll, never by os/exec
	r.res.Seen = len(r.seen)
	r.res.CPUSeconds = max(r.res.CPUSeconds, r.treeCPU(nil)) // exits after the last check
	return r.res, nil
}

func (c SuperviseConfig) withDefaults(cmd *exec.Cmd) SuperviseConfig {
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Clock == nil {
		c.Clock = procwalk.SystemClock{}
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Name == "" {
		c.Name = cmd.Path
	}
	if c.Requester == "" {
		c.Requester = "supervise"
	}
	if c.HistorySize <= 0 {
		c.HistorySize = 100
	}
	if c.Log == nil {
		c.Log = func(string) {}
	}
	n := &c.Names
	for _, f := range []struct {
		name *string
		def  string
	}{{&n.RSS, "max_rss"}, {&n.PSS, "max_pss"}, {&n.CPUTime, "max_cpu_time"}, {&n.Timeout, "timeout"}} {
		if *f.name == "" {
			*f.name = f.def
		}
	}
	return c
}

// supervision is the state of one supervised command.
type supervision struct {
	cfg SuperviseConfig
	fs  procwalk.FS
	// pipeline gathers the checks' frames (Run drives them: loop) and
	// countTree's.
	pipeline *frame.Pipeline
	killer   *Killer
	self     int
	res      *SuperviseResult

	child       int
	childID     procwalk.ProcID
	childHandle *ProcHandle // forwards signals; nil if it exited at once
	reapedCPU   float64
	cgroup      *cpuCgroup // the command's, for its CPU; nil when none
	cpu         cpuTracker // without one
	statusBuf   []byte
	seen        map[procwalk.ProcID]bool
	reported    map[string]bool // dry run: limits reported
}

func (r *supervision) logf(format string, args ...any) { r.cfg.Log(fmt.Sprintf(format, args...)) }

// openChild takes a pidfd on the command, to forward signals through. The
// command is our unreaped child, so its pid is still its own.
func (r *supervision) openChild() {
	id, err := r.fs.ReadProcID(r.child)
	if err != nil {
		return // already gone: nothing to forward to
	}
	r.childID = id
	if h, err := OpenProc(r.fs, id); err == nil {
		r.childHandle = h
	}
}

func (r *supervision) closeChild() {
	if r.childHandle != nil {
		r.childHandle.Close()
	}
}

// record keeps the audit events of processes actually signalled.
func (r *supervision) record(e ActionEvent) {
	if len(e.Signals) > 0 {
		r.res.History.Add(e)
	}
}

// loop runs until every child is reaped: the pipeline's driver, a check
// of the tree on each tick, the trigger's Wait handling everything else.
func (r *supervision) loop(ctx context.Context, reaps <-chan reaped) {
	// Supervision finishes what it starts even after ctx is cancelled.
	work := context.WithoutCancel(ctx)
	t := &superviseTrigger{r: r, reaps: reaps, done: ctx.Done(), work: work, tick: time.NewTicker(r.cfg.Interval)}
	defer t.tick.Stop()
	if r.cfg.Timeout > 0 {
		timer := time.NewTimer(r.cfg.Timeout)
		defer timer.Stop()
		t.timeout = timer.C
	}
	r.pipeline.Run(work, t, func(f frame.Frame, err error) error {
		r.check(work, f, err)
		return nil
	})
}

// superviseTrigger is the supervision's Trigger: Wait fires on each tick
// while limits are watched, and handles every other event itself (a child
// reaped, a signal to forward, the timeout, a cancel, giving up) until one
// of them ends the supervision.
type superviseTrigger struct {
	r                   *supervision
	reaps               <-chan reaped
	work                context.Context
	tick                *time.Ticker
	done                <-chan struct{}
	timeout             <-chan time.Time
	cancelCheck, giveUp <-chan time.Time
}

func (t *superviseTrigger) Wait(context.Context) bool {
	r, res, work := t.r, t.r.res, t.work
	for {
		select {
		case rp, ok := <-t.reaps:
			if !ok {
				res.End = r.cfg.Clock.Now()
				return false
			}
			if r.reaped(rp) {
				r.endLeftovers(work) // whatever the command left running, however it ended
				if r.cfg.DryRun {
					res.End = r.cfg.Clock.Now() // what it left runs on: a dry run ends nothing
					return false
				}
			}
		case s := <-r.cfg.Signals:
			r.forward(s.(syscall.Signal))
		case <-t.tick.C:
			if res.Enforced == "" && !res.Cancelled {
				return true // a check of the tree
			}
		case <-t.timeout:
			t.timeout = nil
			r.endTree(work, r.cfg.Names.Timeout, fmt.Sprintf("%s %s reached", r.cfg.Names.Timeout, r.cfg.Timeout))
		case <-t.done:
			t.done = nil
			t.cancelCheck = time.After(SignalCauseWindow)
		case <-t.cancelCheck:
			t.cancelCheck = nil
			r.forwardQueued() // a signal already queued is the cancel's cause
			if !res.Interrupted && res.Status == nil {
				res.Cancelled = true
				r.terminate(work, "cancelled")
			}
		case <-t.giveUp:
			res.Abandoned = r.countTree()
			res.End = r.cfg.Clock.Now()
			return false
		}
		if t.giveUp == nil && (res.Enforced != "" || res.Leftovers || res.Cancelled) {
			t.giveUp = time.After(r.cfg.Grace + DefaultKillWait + giveUpAfterKill)
		}
	}
}

// reaped accounts for one reaped child; true when it was the command.
func (r *supervision) reaped(rp reaped) bool {
	if r.cfg.Sentinel.Started(rp.pid) {
		return false // ours, not the command's
	}
	r.reapedCPU += rp.cpuSeconds()
	r.res.MaxRSSKiB = max(r.res.MaxRSSKiB, rp.usage.Maxrss)
	if rp.pid != r.child {
		r.res.OrphansReaped++
		return false
	}
	ws := rp.status
	r.res.Status = &ws
	return true
}

// forward passes a signal on to the command, through its pidfd.
func (r *supervision) forward(sig syscall.Signal) {
	if sig == syscall.SIGINT || sig == syscall.SIGTERM {
		r.res.Interrupted = true
	}
	if sig != syscall.SIGTERM && r.cfg.Foreground {
		return // the terminal delivered it to the command's process group
	}
	if r.res.Status != nil || r.childHandle == nil {
		return // the command is gone; its leftovers are being ended
	}
	if err := r.childHandle.Signal(sig); err == nil {
		r.res.Forwarded = append(r.res.Forwarded, SignalName(sig))
	}
}

// forwardQueued forwards the signals already waiting.
func (r *supervision) forwardQueued() {
	for {
		select {
		case s := <-r.cfg.Signals:
			r.forward(s.(syscall.Signal))
		default:
			return
		}
	}
}

// check looks at the tree in frame f (err: its gather's), updates the
// peaks and acts on a breached limit.
func (r *supervision) check(ctx context.Context, f frame.Frame, err error) {
	res, cfg := r.res, &r.cfg
	if err != nil {
		res.ScanErrors++
		return
	}
	snap := f.Snapshot
	tree := slices.DeleteFunc(snap.Descendants(r.self), func(p *procwalk.Process) bool { return r.cfg.Sentinel.Started(p.ID.PID) })
	var t procwalk.Totals
	if cfg.MaxPSSBytes > 0 || cfg.ReadPSS {
		f.ReadMore(tree, procwalk.FieldSmaps) // a denied or vanished process counts without PSS
	}
	for _, p := range tree {
		t.Add(p)
		r.seen[p.ID] = true
	}
	cpu := r.treeCPU(tree)
	res.Samples++
	res.PeakRSSBytes = max(res.PeakRSSBytes, t.RSSBytes)
	if t.SmapsRead > 0 {
		res.PSSSeen = true
		res.PeakPSSBytes = max(res.PeakPSSBytes, t.PSSBytes)
	}
	res.CPUSeconds = max(res.CPUSeconds, cpu)

	switch {
	case cfg.MaxRSSBytes > 0 && t.RSSBytes > cfg.MaxRSSBytes:
		r.memoryBreach(ctx, snap, tree, "rss", cfg.Names.RSS, fmt.Sprintf("tree RSS %s over %s %s", procwalk.FormatBytes(t.RSSBytes), cfg.Names.RSS, procwalk.FormatBytes(cfg.MaxRSSBytes)))
	case cfg.MaxPSSBytes > 0 && t.SmapsRead > 0 && t.PSSBytes > cfg.MaxPSSBytes:
		r.memoryBreach(ctx, snap, tree, "pss", cfg.Names.PSS, fmt.Sprintf("tree PSS %s over %s %s", procwalk.FormatBytes(t.PSSBytes), cfg.Names.PSS, procwalk.FormatBytes(cfg.MaxPSSBytes)))
	case cfg.MaxCPUTime > 0 && cpu > cfg.MaxCPUTime.Seconds():
		r.endTree(ctx, cfg.Names.CPUTime, fmt.Sprintf("tree CPU time %.1fs over %s %s", cpu, cfg.Names.CPUTime, cfg.MaxCPUTime))
	}
}

// treeCPU is the tree's user+system CPU: its cgroup's usage, or the
// approximate count over tree, the live processes of a sample (nil: none
// sampled, only what was reaped and last sampled counts).
func (r *supervision) treeCPU(tree []*procwalk.Process) float64 {
	if r.cgroup != nil {
		if s, ok := r.cgroup.cpuSeconds(); ok {
			return s
		}
	}
	if tree == nil {
		return r.reapedCPU + r.cpu.lost
	}
	ignores := make(map[int]bool)
	for _, p := range tree {
		if _, ok := ignores[p.PPID]; !ok {
			ignores[p.PPID] = false
			if p.PPID != r.self {
				ignores[p.PPID], r.statusBuf = ignoresSIGCHLD(r.fs, p.PPID, r.statusBuf)
			}
		}
	}
	return r.cpu.sample(tree, r.reapedCPU, func(p *procwalk.Process) bool { return ignores[p.PPID] })
}

// dryRunOnce reports whether a dry run has already reported limit; the
// first call records why.
func (r *supervision) dryRunOnce(limit, why string) bool {
	if r.reported[limit] {
		return true
	}
	r.reported[limit] = true
	r.res.WouldEnd = append(r.res.WouldEnd, why)
	return false
}

// memoryBreach applies the KillBiggest policy to a memory limit.
func (r *supervision) memoryBreach(ctx context.Context, snap *procwalk.Snapshot, tree []*procwalk.Process, metricName, limit, why string) {
	if !r.cfg.KillBiggest {
		r.endTree(ctx, limit, why)
		return
	}
	if r.cfg.DryRun && r.dryRunOnce(limit, why) {
		return
	}
	by, _ := metric.Lookup(metricName)
	check := r.killer.Checker() // our ancestry read once, not per process
	for _, p := range Biggest(snap, tree, -1, &by) {
		if check(p) != nil {
			continue
		}
		verb := "terminating"
		if r.cfg.DryRun {
			verb = "would terminate (dry run)"
		}
		r.logf("%s: %s the biggest process, pid %d (%s)", why, verb, p.ID.PID, p.Comm)
		o := r.killer.WithRequester(r.cfg.Requester+":"+metricName).Terminate(ctx, p.ID)
		if o.Result != ResultExited && o.Result != ResultKilled {
			return // not ended here (gone already, dry run ...): judge again next interval
		}
		if p.ID == r.childID {
			r.res.Enforced = why + "; CMD itself was the biggest process"
		}
		// Do not judge the next check on memory that is still being freed.
		WaitReleased(ctx, r.fs, p.ID, releaseWait)
		return
	}
}

// endTree ends the whole tree for a limit.
func (r *supervision) endTree(ctx context.Context, limit, why string) {
	res := r.res
	if res.Enforced != "" {
		return
	}
	if r.cfg.DryRun {
		if !r.dryRunOnce(limit, why) {
			r.logf("%s: would terminate the tree of %s (dry run)", why, r.cfg.Name)
			r.terminate(ctx, why)
		}
		return
	}
	res.Enforced = why
	r.logf("%s: terminating the tree of %s", why, r.cfg.Name)
	if rep := r.terminate(ctx, why); rep != nil && len(rep.Outcomes) > 0 && !signalledAny(rep) {
		res.Unenforced = rep.Err()
		r.logf("could not end the tree of %s: %s", r.cfg.Name, res.Unenforced)
	}
}

// signalledAny reports whether a terminate sent a signal or found a
// target already gone.
func signalledAny(rep *Report) bool {
	for _, o := range rep.Outcomes {
		if len(o.Signals) > 0 || o.Result == ResultGone {
			return true
		}
	}
	return false
}

// endLeftovers ends what the command left running when it exited.
func (r *supervision) endLeftovers(ctx context.Context) {
	if r.countTree() == 0 {
		return
	}
	r.res.Leftovers = true
	r.terminate(ctx, "left running by "+r.cfg.Name)
}

// terminate runs the two-stage terminate over every descendant of this
// process and returns its report (nil when it could not plan).
func (r *supervision) terminate(ctx context.Context, why string) *Report {
	rep, err := r.killer.TerminateScope(ctx, supervisedScope{self: r.self, why: why, sentinel: r.cfg.Sentinel})
	if err != nil {
		r.logf("ending the tree: %v", err)
	}
	return rep
}

// countTree counts the live descendants of this process.
func (r *supervision) countTree() int {
	f, err := r.pipeline.Gather()
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range f.Snapshot.Descendants(r.self) {
		if !p.Zombie() && !r.cfg.Sentinel.Started(p.ID.PID) {
			n++
		}
	}
	return n
}

// supervisedScope is every descendant of this process: the command's tree
// and the orphans reparented to it as subreaper.
type supervisedScope struct {
	self     int
	why      string
	sentinel *Sentinel // its processes are ours, not the command's
}

func (s supervisedScope) String() string          { return fmt.Sprintf("guarded tree (%s)", s.why) }
func (s supervisedScope) Fields() procwalk.Fields { return 0 }
func (s supervisedScope) Grows() bool             { return true }
func (s supervisedScope) Members(snap *procwalk.Snapshot, _ map[procwalk.ProcID]bool) []*procwalk.Process {
	tree := snap.Descendants(s.self)
	return slices.DeleteFunc(tree, func(p *procwalk.Process) bool { return s.sentinel.Started(p.ID.PID) })
}

// reaped is one child collected by wait4.
type reaped struct {
	pid    int
	status unix.WaitStatus
	usage  unix.Rusage
}

// cpuSeconds is the child's user+system time, its reaped descendants
// included (wait4's rusage counts them).
func (r reaped) cpuSeconds() float64 {
	return tvSeconds(r.usage.Utime) + tvSeconds(r.usage.Stime)
}

func tvSeconds(tv unix.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// reapAll waits for children until there are none (ECHILD), sending each on
// out, and closes out. Its stop path: every descendant has been reaped,
// which Supervise brings about by terminating what is left when the
// command ends. When Supervise stops waiting first (a dry run leaves the
// command's leftovers running; a process outlives SIGKILL), it stays
// blocked in wait4 until the next child exits. Start it only once a child
// exists.
func reapAll(out chan<- reaped) {
	defer close(out)
	for {
		var r reaped
		pid, err := unix.Wait4(-1, &r.status, 0, &r.usage)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left to wait for
		}
		r.pid = pid
		out <- r
	}
}
