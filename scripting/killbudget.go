//go:build linux

package scripting

import "time"

// killbudget.go counts the processes a script's kills signal, so that one
// buggy rule (pw.kill("user:root") in a loop) cannot empty a host:
// Limits.KillsPerRun bounds a run, Limits.KillsPerHour the last hour.

// KillBudget says how many more processes a script's kills may signal, and
// takes the ones they did. Left is read at the start of each run.
type KillBudget interface {
	Left() int
	Spend(n int)
}

// KillLedger is the hourly KillBudget: it keeps the time of every process
// signalled in the last hour. The host owns it for as long as it runs a
// script (watch, telegraf --execd), across worker restarts: the parent of
// a worker spends from the kill outcomes the worker reports.
type KillLedger struct {
	perHour int
	now     func() time.Time
	at      []time.Time // oldest first
}

// NewKillLedger returns a ledger allowing perHour processes an hour
// (Limits.KillsPerHour's default when 0), on the clock now (time.Now when
// nil).
func NewKillLedger(perHour int, now func() time.Time) *KillLedger {
	if perHour <= 0 {
		perHour = DefaultLimits().KillsPerHour
	}
	if now == nil {
		now = time.Now
	}
	return &KillLedger{perHour: perHour, now: now}
}

// Left is how many more processes may be signalled within the hour.
func (l *KillLedger) Left() int {
	hourAgo := l.now().Add(-time.Hour)
	i := 0
	for i < len(l.at) && !l.at[i].After(hourAgo) {
		i++
	}
	l.at = l.at[i:]
	return max(l.perHour-len(l.at), 0)
}

// Spend records n processes signalled now.
func (l *KillLedger) Spend(n int) {
	t := l.now()
	for range n {
		l.at = append(l.at, t)
	}
}
