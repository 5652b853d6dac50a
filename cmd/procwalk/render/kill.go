//go:build linux

package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// kill.go is what procwalk kill prints: its plan before a confirmation,
// and the events of the kill.

// KillPlan writes what a kill will do, for its confirmation: the scope,
// a table of the targets, and the members it leaves alone with why.
func KillPlan(w io.Writer, plan *kill.Plan) {
	fmt.Fprintf(w, "%s: %d to signal", procwalk.Printable(plan.Scope), len(plan.Targets))
	if len(plan.Skipped) > 0 {
		fmt.Fprintf(w, ", %d left alone", len(plan.Skipped))
	}
	fmt.Fprintln(w)
	t := &Table{Cols: []Column{{Header: "PID", Right: true}, {Header: "PPID", Right: true}, {Header: "RSS", Right: true}, {Header: "COMMAND"}}}
	for _, tg := range plan.Targets {
		cmd := tg.Args
		if cmd == "" {
			cmd = "[" + tg.Comm + "]"
		}
		t.Add(strconv.Itoa(tg.ID.PID), strconv.Itoa(tg.PPID), Bytes(tg.RSSBytes), procwalk.Printable(cmd))
	}
	t.Write(w, TerminalWidth(w))
	for _, o := range plan.Skipped {
		fmt.Fprintf(w, "  left alone: %s\n", procwalk.Printable(fmt.Sprint(o.Err)))
	}
}

// EventPrinter writes audit events as text or JSON lines. A write that
// fails (EPIPE: the reader has gone; EIO: the terminal hung up) stops the
// printing, never the kill: the outcomes are final whether or not anyone
// reads them, and the exit status says how the kill went.
type EventPrinter struct {
	W      io.Writer
	JSON   bool // a JSON object a line, else text
	failed bool
}

// Print writes e.
func (p *EventPrinter) Print(e kill.ActionEvent) {
	if p.failed {
		return
	}
	line := procwalk.Printable(e.String())
	if p.JSON {
		b, err := json.Marshal(e)
		if err != nil {
			line = fmt.Sprintf(`{"error":%q}`, err.Error()) // cannot happen: the event's fields all encode
		} else {
			line = string(b)
		}
	}
	if _, err := io.WriteString(p.W, line+"\n"); err != nil {
		p.failed = true
	}
}
