//go:build linux

package top

import (
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/render"

	"github.com/procwalk/procwalk/procwalk/session"
)

// agents.go is the agents view: the sessions view with AI agents alone
// ("a" from the sessions view), their status, model, context use and tmux
// pane as columns of their own, sortable; "g" switches the tmux client to
// the selected agent's pane.

// agentColumns are the agents table's columns.
func agentColumns() []column {
	return []column{
		{title: "AGENT", width: 18, keep: 10, text: true, sortable: true},
		{title: "STATUS", width: 12, keep: 9, sortable: true}, // by statusRank
		{title: "MODEL", width: 16, keep: 6, text: true, sortable: true},
		{title: "CTX%", width: 5, right: true, keep: 8, sortable: true},
		{title: "PROCS", width: 5, right: true, keep: 3, sortable: true},
		{title: "RSS", width: 9, right: true, keep: 7, sortable: true},
		{title: "CPU%", width: 6, right: true, keep: 5, sortable: true},
		{title: "AGE", width: 6, right: true, keep: 4, sortable: true},
		{title: "TMUX", width: 8, keep: 8, flex: true, text: true, sortable: true},
	}
}

// agentStatusColumn is the agents table's default sort: working first.
const agentStatusColumn = 1

// agentRows are the agent sessions whose reference matches filter.
func (b *rowBuilder) agentRows(filter string) []row {
	f := strings.ToLower(filter)
	var rows []row
	for i := range b.frame.Sessions {
		s := &b.frame.Sessions[i]
		if s.Kind != session.KindAgent || f != "" && !strings.Contains(strings.ToLower(s.Ref()), f) {
			continue
		}
		t := &s.Totals
		status, model, ctx, ctxOK := "-", s.Attrs[session.AttrModel], 0.0, false
		if a := s.Agent; a != nil {
			status = a.Status
			if a.Status == session.AgentBlocked || a.Status == session.AgentEnded {
				status += " " + session.HumanDuration(a.StatusFor)
			}
			ctx, ctxOK = a.ContextPercent, a.Transcript != nil && a.ContextWindowTokens > 0 && a.Transcript.ContextUsedTokens > 0
		}
		rates := t.RatesMeasured > 0
		age := b.frame.Snapshot.Time.Sub(t.OldestStart).Seconds()
		cpu := render.NotMeasured
		if rates {
			cpu = render.Percent(t.CPUPercent)
		}
		ctxCell := render.NotMeasured
		if ctxOK {
			ctxCell = strconv.FormatFloat(ctx, 'f', 0, 64)
		}
		r := row{
			cells: []string{b.escape(s.Name), status, b.escape(cellOr(model)), ctxCell, strconv.Itoa(t.Procs),
				render.Bytes(t.RSSBytes), cpu, render.Duration(time.Duration(age * float64(time.Second))),
				b.escape(cellOr(s.Attrs[session.AttrTmuxTarget]))},
			sess: s,
		}
		for c, v := range []struct {
			v  float64
			ok bool
		}{{0, false}, {statusRank(status), true}, {0, false}, {ctx, ctxOK}, {float64(t.Procs), true}, {float64(t.RSSBytes), true}, {t.CPUPercent, rates}, {age, true}} {
			r.set(c, v.v, v.ok)
		}
		rows = append(rows, r)
	}
	return rows
}

// statusRank orders agents by what needs a person first: blocked (waiting
// for an answer), stopped on a failed model call (error, then
// rate_limited, which passes by itself), working, idle, then ended.
func statusRank(status string) float64 {
	switch word, _, _ := strings.Cut(status, " "); word {
	case session.AgentBlocked:
		return 6
	case session.AgentError:
		return 5
	case session.AgentRateLimited:
		return 4
	case session.AgentWorking:
		return 3
	case session.AgentIdle:
		return 2
	case session.AgentEnded:
		return 1
	}
	return 0
}

func cellOr(s string) string {
	if s == "" {
		return render.NotMeasured
	}
	return s
}

// tmuxTarget is the tmux pane of a session row: an agent's pane, a tmux
// session's first pane; "" for other rows.
func tmuxTarget(r *row) string {
	if r == nil || r.sess == nil {
		return ""
	}
	return r.sess.Attrs[session.AttrTmuxTarget]
}
