//go:build linux

package kill

import (
	"errors"
	"time"
)

// ErrBudget is wrapped by the error of a target refused because its
// requester's kill budget would be overrun (ResultBudget).
var ErrBudget = errors.New("over the kill budget")

// Refuse reports every target of plan as refused for err (which should
// wrap ErrBudget), audited as Execute would, and signals nothing: for a
// requester whose budget the plan would overrun. The plan's skipped members
// keep their own results.
func (k *Killer) Refuse(plan *Plan, err error) *Report {
	r := &Report{Scope: plan.Scope, Session: plan.Session, DryRun: k.cfg.DryRun}
	add := func(o Outcome) {
		r.Outcomes = append(r.Outcomes, o)
		k.audit(&o, time.Now(), plan.Scope, plan.Session)
	}
	for _, o := range plan.Skipped {
		add(o)
	}
	for _, t := range plan.Targets {
		add(Outcome{Target: t, Result: ResultBudget, Err: err})
	}
	return r
}
