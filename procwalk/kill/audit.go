//go:build linux

package kill

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// audit.go holds what a termination produced: an Outcome per target and an
// ActionEvent per outcome, the record the CLI log, JSON output and the
// Telegraf emitter (procwalk_action) all print.

// Result is what happened to one target.
type Result int

// Results. A result is final: each target gets exactly one.
const (
	ResultExited          Result = iota + 1 // exited after the first signal
	ResultKilled                            // survived the grace period, died of SIGKILL
	ResultGone                              // had exited before anything was sent
	ResultProtected                         // refused: protected (see ProtectedError)
	ResultIdentityChanged                   // refused: the pid belongs to another process now
	ResultDenied                            // refused: the kernel denied the signal (EPERM)
	ResultSurvived                          // still alive after SIGKILL and KillWait (stuck in D state, traced)
	ResultInterrupted                       // signalled, then the caller gave up waiting (context ended)
	ResultDryRun                            // would have been signalled (dry run: nothing sent)
	ResultFailed                            // an unexpected error; see Outcome.Err
	// ResultEscaped: a process of the scope found alive after the end that
	// was never signalled (forked after the last walk, orphaned by its
	// parent's death). Reported, not signalled: see ErrEscaped.
	ResultEscaped
	// ResultBudget: refused: the plan had more targets than the
	// requester's kill budget allows (a rule's kills per run and per hour;
	// see Killer.Refuse and ErrBudget).
	ResultBudget
)

// String is the result's stable name, used as the outcome tag/field.
func (r Result) String() string {
	switch r {
	case ResultExited:
		return "exited"
	case ResultKilled:
		return "killed"
	case ResultGone:
		return "gone"
	case ResultProtected:
		return "refused_protected"
	case ResultIdentityChanged:
		return "refused_identity"
	case ResultDenied:
		return "refused_permission"
	case ResultSurvived:
		return "survived"
	case ResultInterrupted:
		return "interrupted"
	case ResultDryRun:
		return "dry_run"
	case ResultFailed:
		return "failed"
	case ResultEscaped:
		return "escaped"
	case ResultBudget:
		return "refused_budget"
	}
	return "result(" + strconv.Itoa(int(r)) + ")"
}

// Done reports whether the target is gone or, in a dry run, would be
// signalled: the result a caller asked for.
func (r Result) Done() bool {
	return r == ResultExited || r == ResultKilled || r == ResultGone || r == ResultDryRun
}

// Refused reports whether the target was left alone on purpose.
func (r Result) Refused() bool {
	return r == ResultProtected || r == ResultIdentityChanged || r == ResultDenied || r == ResultBudget
}

// Target is one process a plan will signal, as the plan's snapshot saw it.
type Target struct {
	ID       procwalk.ProcID
	PPID     int
	PGRP     int
	Comm     string
	Args     string // the command line, space-joined; "" when unread
	RSSBytes uint64
	PSSBytes uint64 // valid when HavePSS (smaps read)
	HavePSS  bool

	// young: the walk saw it less than one clock tick after it started;
	// exe is then its executable (see identity.go).
	young bool
	exe   exeID
}

func targetOf(p *procwalk.Process) Target {
	t := Target{ID: p.ID, PPID: p.PPID, PGRP: p.PGRP, Comm: p.Comm, Args: strings.Join(p.Cmdline, " "), RSSBytes: p.RSSBytes}
	if p.Read&procwalk.FieldSmaps != 0 {
		t.PSSBytes, t.HavePSS = p.Smaps.PSSBytes, true
	}
	return t
}

// Outcome is what happened to one target.
type Outcome struct {
	Target
	Result  Result
	Signals []syscall.Signal // sent, in order (none for refusals and dry runs)
	// Planned is what a dry run would send: the first signal, then KILL if
	// the grace ends first.
	Planned []syscall.Signal
	Err     error // why it was refused or failed; wraps a sentinel
	Note    string
	// SignalledAt is when the first signal was sent (zero if none).
	SignalledAt time.Time
	// KillAfter is the time from the first signal to SIGKILL (0 if not sent);
	// GoneAfter from the first signal to when the exit was seen.
	KillAfter time.Duration
	GoneAfter time.Duration
}

// ActionEvent is the audit record of one outcome.
type ActionEvent struct {
	Time      time.Time `json:"time"`
	Requester string    `json:"requester"` // "cli", "guard", "rule:<name>"
	Scope     string    `json:"scope"`     // "tree 1234@5678", "session tmux:build"
	Session   string    `json:"session,omitempty"`
	// Target is PID and StartTicks: the ProcID.
	PID        int      `json:"pid"`
	StartTicks uint64   `json:"start_ticks"`
	Comm       string   `json:"comm"`
	Args       string   `json:"args,omitempty"`
	Signals    []string `json:"signals"` // sent, e.g. ["TERM", "KILL"]; planned ones on a dry run
	Outcome    string   `json:"outcome"` // Result.String()
	Reason     string   `json:"reason,omitempty"`
	DryRun     bool     `json:"dry_run"`
	RSSBytes   uint64   `json:"rss_bytes"`
	PSSBytes   uint64   `json:"pss_bytes,omitempty"` // 0 when PSS was not read
	// GoneSeconds is from the first signal to the exit being seen.
	GoneSeconds float64 `json:"gone_seconds,omitempty"`
}

// Target is the event's ProcID.
func (e ActionEvent) Target() procwalk.ProcID {
	return procwalk.ProcID{PID: e.PID, StartTicks: e.StartTicks}
}

// String is a one-line log form:
// "killed pid 42@1234 (sleep) signals TERM,KILL after 5.01s rss 2.0 MiB [cli, tree 42@1234]".
func (e ActionEvent) String() string {
	var b strings.Builder
	if e.Outcome == ResultDryRun.String() {
		b.WriteString("would signal")
	} else {
		b.WriteString(e.Outcome)
	}
	fmt.Fprintf(&b, " pid %d (%s)", e.PID, e.Comm)
	if len(e.Signals) > 0 {
		fmt.Fprintf(&b, " signals %s", strings.Join(e.Signals, ","))
	}
	if e.GoneSeconds > 0 {
		fmt.Fprintf(&b, " gone after %.2fs", e.GoneSeconds)
	}
	fmt.Fprintf(&b, " rss %s", procwalk.FormatBytes(e.RSSBytes))
	if e.PSSBytes > 0 {
		fmt.Fprintf(&b, " pss %s", procwalk.FormatBytes(e.PSSBytes))
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	fmt.Fprintf(&b, " [%s, %s", e.Requester, e.Scope)
	if e.Session != "" && !strings.HasSuffix(e.Scope, e.Session) {
		fmt.Fprintf(&b, ", session %s", e.Session)
	}
	b.WriteString("]")
	return b.String()
}

func signalNames(sigs []syscall.Signal) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = SignalName(s)
	}
	return out
}

// event builds the audit record of o.
func (o *Outcome) event(at time.Time, requester, scope, session string, dryRun bool) ActionEvent {
	e := ActionEvent{
		Time: at, Requester: requester, Scope: scope, Session: session,
		PID: o.ID.PID, StartTicks: o.ID.StartTicks, Comm: o.Comm, Args: o.Args,
		Signals: signalNames(o.Signals), Outcome: o.Result.String(), DryRun: dryRun,
		RSSBytes: o.RSSBytes, GoneSeconds: o.GoneAfter.Seconds(),
	}
	if dryRun {
		e.Signals = signalNames(o.Planned)
	}
	if o.HavePSS {
		e.PSSBytes = o.PSSBytes
	}
	switch {
	case o.Err != nil:
		e.Reason = o.Err.Error()
	case o.Note != "":
		e.Reason = o.Note
	}
	return e
}

// AuditLog keeps the last Cap events (a ring), safe for concurrent use:
// guard keeps its kill history in one, a long-running emitter drains it.
type AuditLog struct {
	mu     sync.Mutex
	events []ActionEvent
	next   int // where the next event goes once full
	total  int
}

// NewAuditLog returns a log keeping the last capacity events (at least 1).
func NewAuditLog(capacity int) *AuditLog {
	return &AuditLog{events: make([]ActionEvent, 0, max(capacity, 1))}
}

// Add records e, dropping the oldest event when full. Its signature fits
// Config.Audit.
func (l *AuditLog) Add(e ActionEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	if len(l.events) < cap(l.events) {
		l.events = append(l.events, e)
		return
	}
	l.events[l.next] = e
	l.next = (l.next + 1) % len(l.events)
}

// Events returns the kept events, oldest first.
func (l *AuditLog) Events() []ActionEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ActionEvent, 0, len(l.events))
	out = append(out, l.events[l.next:]...)
	return append(out, l.events[:l.next]...)
}

// Total is how many events were ever added, kept or not.
func (l *AuditLog) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
