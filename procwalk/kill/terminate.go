//go:build linux

package kill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// terminate.go is the Killer, which terminates in two stages: the first
// signal (TERM unless configured otherwise) to every target, a grace period
// during which exits are seen by polling pidfds and the scope is re-walked
// for newcomers, then SIGKILL through the same pidfds for whatever is left.
// plan.go decides the targets, execute.go sends the signals,
// scope_actions.go acts on a cgroup or tmux session as a whole.
//
// Usage:
//
//	k, err := kill.NewKiller(fs, kill.Config{Requester: "cli"})
//	plan, err := k.Plan(procwalk.TreeScope{Root: id})  // nothing is signalled yet
//	report := k.Execute(ctx, plan)                      // or k.Terminate(ctx, id)

// Defaults of Config.
const (
	DefaultGrace    = 5 * time.Second
	DefaultKillWait = 5 * time.Second
	// defaultRescan paces the re-walks that find processes joining a scope
	// during termination: a full /proc scan costs a few milliseconds.
	defaultRescan = 100 * time.Millisecond
	// maxFreezeRounds bounds the SIGSTOP/re-walk rounds of one freeze; a
	// scope that still grows after that many rounds is signalled as it
	// stands (each round stops every process found so far, so only a
	// storm faster than a /proc walk gets that far).
	maxFreezeRounds = 8
	// stopWait bounds the wait for SIGSTOP to take effect on every victim
	// (state T in stat); stopPoll paces the stat re-reads meanwhile.
	stopWait = 500 * time.Millisecond
	stopPoll = 2 * time.Millisecond
)

// Config configures a Killer. The zero value is useful: SIGTERM, 5 s
// grace, the default protected list, requester "procwalk".
type Config struct {
	// Signal is the first signal; 0 means SIGTERM. SIGKILL skips the grace.
	Signal syscall.Signal
	// Grace is how long targets get to exit after the first signal before
	// SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// KillWait is how long to wait for exits after SIGKILL before reporting
	// survivors; 0 means DefaultKillWait.
	KillWait time.Duration
	// DryRun plans and reports exactly what would be signalled, sending
	// nothing.
	DryRun bool
	// Force overrides the protected list, never the hard rules (procwalk,
	// its ancestors, pid 1, kernel threads).
	Force bool
	// Protected are name globs (path.Match) matched against the comm,
	// argv[0]'s base name and an interpreter's script; nil means
	// DefaultProtected(). An empty non-nil slice protects nothing beyond the
	// hard rules.
	Protected []string
	// Requester names who asked, for the audit trail: "cli", "guard",
	// "rule:<name>"; "" means "procwalk".
	Requester string
	// SelfPID is procwalk's own pid for the hard rules; 0 means os.Getpid()
	// when the FS is this pid namespace's procfs. Under a foreign root (a
	// fixture, another namespace's /proc) our pid means nothing there, and
	// nothing can be signalled anyway (OpenProc refuses): no self rule.
	SelfPID int
	// Fields are read in addition for the scope's members, e.g. FieldSmaps
	// for PSS in the audit events (smaps_rollup of the members only).
	Fields procwalk.Fields
	// Audit receives an event per outcome as it becomes final; nil drops
	// them (the Report still has the outcomes).
	Audit func(ActionEvent)
	// Rescan paces the re-walks of a growing scope; 0 means 100ms.
	Rescan time.Duration
	// Sentinel continues and thaws what an execution stopped or froze
	// should this process die first (see Sentinel). Without one nothing
	// is stopped: a growing scope is signalled as it runs, and what
	// escapes is reported.
	Sentinel *Sentinel
}

// handle is what the Killer needs of an open process; *ProcHandle is one.
type handle interface {
	Signal(syscall.Signal) error
	Wait(ctx context.Context, d time.Duration) bool
	Stopped() bool
	ReleaseMemory() error
	Close() error
}

// Killer terminates processes safely. It holds no state between calls and
// is safe for concurrent use.
type Killer struct {
	fs   procwalk.FS
	cfg  Config
	open func(procwalk.ProcID) (handle, error)
	// tmux runs tmux with args; tests replace it.
	tmux func(ctx context.Context, args ...string) error
	// selfPID is os.Getpid() under our own procfs, -1 under a foreign root.
	selfPID int
	// hooks let tests act inside a race window, deterministically.
	hooks hooks
	// keep makes an execution's keeper; nil means Config.Sentinel's.
	keep func() (keeper, error)
}

// hooks are called at points of an execution where the world may change
// under it; nil ones are skipped. Only tests set them.
type hooks struct {
	// beforeKill runs after the KILL stage's last walk and check, right
	// before SIGKILL is sent.
	beforeKill func()
	// stopped runs while the scope is stopped or frozen, each time it has
	// been.
	stopped func()
	// graceOver, when set, ends the grace in place of the clock: it runs
	// at each step of the grace with the targets that joined the scope
	// during it so far, and the grace ends once it returns true (or no
	// target is alive). A test waiting for an event of the real kernel
	// (a fork) then depends on no machine being fast.
	graceOver func(joined []Target) bool
}

// NewKiller returns a Killer acting on the processes of fs, which must be
// the procfs of procwalk's own pid namespace (OpenProc checks).
func NewKiller(fs procwalk.FS, cfg Config) (*Killer, error) {
	if cfg.Protected != nil {
		if err := ValidateProtected(cfg.Protected); err != nil {
			return nil, err
		}
	}
	if cfg.Signal < 0 || cfg.Grace < 0 || cfg.KillWait < 0 || cfg.Rescan < 0 {
		return nil, fmt.Errorf("bad kill config: negative signal or duration")
	}
	k := &Killer{fs: fs, cfg: cfg, tmux: runTmux, selfPID: -1}
	if fs.CheckOwnNamespace() == nil {
		k.selfPID = os.Getpid()
	}
	k.open = func(id procwalk.ProcID) (handle, error) {
		h, err := OpenProc(fs, id)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	return k, nil
}

// WithRequester returns a copy of k whose audit events name requester (a
// rule name, say), sharing everything else.
func (k *Killer) WithRequester(requester string) *Killer {
	c := *k
	c.cfg.Requester = requester
	return &c
}

// WithSignal returns a copy of k whose first signal is sig (SIGKILL: no
// grace), sharing everything else: for a caller that lets a person pick
// the signal of each kill (the live view's picker). sig is a signal
// number above 0, as NewKiller requires of Config.Signal: a kill with
// another fails at its first signal.
func (k *Killer) WithSignal(sig syscall.Signal) *Killer {
	c := *k
	c.cfg.Signal = sig
	return &c
}

// Config returns the configuration with defaults filled in.
func (k *Killer) Config() Config {
	c := k.cfg
	if c.Signal == 0 {
		c.Signal = syscall.SIGTERM
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.KillWait == 0 {
		c.KillWait = DefaultKillWait
	}
	if c.Protected == nil {
		c.Protected = DefaultProtected()
	}
	if c.Requester == "" {
		c.Requester = "procwalk"
	}
	if c.SelfPID == 0 {
		c.SelfPID = k.selfPID
	}
	if c.Rescan == 0 {
		c.Rescan = defaultRescan
	}
	return c
}

// Report is what Execute did.
type Report struct {
	Scope    string
	Session  string
	DryRun   bool
	Outcomes []Outcome
	// Notes are scope-wide actions: a cgroup frozen, tmux kill-session.
	Notes []string
	// Left says what the scope still holds after the end that no outcome
	// names: processes of a cgroup outside procwalk's pid namespace, or
	// hidden from it. Err reports them.
	Left []string
}

// Err summarises the outcomes that are not Done: nil when every target is
// gone (or, in a dry run, would be signalled). The message lists them as
// "pid 42 (sleep) refused_protected"; the error wraps the Err of the first
// one, so errors.Is finds its sentinel (ErrProtected, ErrIdentityChanged,
// ErrDenied ...) and its text says why.
func (r *Report) Err() error {
	var bad []string
	var first error
	for _, o := range r.Outcomes {
		if o.Result.Done() {
			continue
		}
		bad = append(bad, fmt.Sprintf("pid %d (%s) %s", o.ID.PID, o.Comm, o.Result))
		if first == nil && o.Err != nil {
			first = o.Err
		}
	}
	if len(bad) == 0 && len(r.Left) == 0 {
		return nil
	}
	if len(bad) == 0 {
		return fmt.Errorf("%w: %s", ErrLeft, strings.Join(r.Left, "; "))
	}
	if first == nil {
		first = errors.New("no reason recorded")
	}
	left := ""
	if len(r.Left) > 0 {
		left = "; and " + strings.Join(r.Left, "; ")
	}
	return fmt.Errorf("%d of %d targets not terminated (%s)%s; first: %w", len(bad), len(r.Outcomes), strings.Join(bad, ", "), left, first)
}

// Terminate terminates one process: first signal, grace, SIGKILL.
func (k *Killer) Terminate(ctx context.Context, id procwalk.ProcID) Outcome {
	plan, err := k.Plan(ProcessScope{ID: id})
	if err != nil {
		o := Outcome{Target: Target{ID: id}, Result: ResultFailed, Err: err}
		k.audit(&o, time.Now(), "process "+id.String(), "")
		return o
	}
	r := k.Execute(ctx, plan)
	if len(r.Outcomes) == 0 { // cannot happen: a process scope yields a target or a skip
		return Outcome{Target: Target{ID: id}, Result: ResultFailed, Err: fmt.Errorf("pid %d: no outcome", id.PID)}
	}
	return r.Outcomes[0]
}

// TerminateScope plans and executes in one call.
func (k *Killer) TerminateScope(ctx context.Context, scope Scope) (*Report, error) {
	plan, err := k.Plan(scope)
	if err != nil {
		return nil, err
	}
	return k.Execute(ctx, plan), nil
}

func (k *Killer) audit(o *Outcome, at time.Time, scope, session string) {
	if k.cfg.Audit == nil {
		return
	}
	requester := k.cfg.Requester
	if requester == "" {
		requester = "procwalk"
	}
	k.cfg.Audit(o.event(at, requester, scope, session, k.cfg.DryRun))
}
