//go:build linux

package render

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

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

// Errors of ConfirmKill: the answer was not yes, or ctx ended (Ctrl-C)
// while it waited for one.
var (
	ErrNotConfirmed = errors.New("not confirmed: nothing was signalled")
	ErrInterrupted  = errors.New("not confirmed (interrupted): nothing was signalled")
)

// ConfirmKill asks on w whether to carry plan out, its targets listed
// first (KillPlan): send sig, then KILL after grace unless sig is KILL.
// It reads the answer, a line, from in: y or yes (any case, spaces
// around ignored) confirms; anything else is ErrNotConfirmed, and the end
// of in before a line another error. ctx ending while it waits is
// ErrInterrupted. The reading goroutine ends when in delivers a line or
// is closed; a program that gives up on a prompt exits, taking it along.
func ConfirmKill(ctx context.Context, w io.Writer, in io.Reader, plan *kill.Plan, sig syscall.Signal, grace time.Duration) error {
	KillPlan(w, plan)
	what := kill.SignalName(sig)
	if what != "KILL" {
		what += fmt.Sprintf(" (then KILL after %s)", grace)
	}
	fmt.Fprintf(w, "Send %s to these %d processes? [y/N] ", what, len(plan.Targets))
	answer, err := readLine(ctx, in)
	switch {
	case err != nil && ctx.Err() != nil:
		return ErrInterrupted
	case err != nil:
		return fmt.Errorf("no answer: %w", err)
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return ErrNotConfirmed
	}
	return nil
}

// readLine reads one line from r, giving up when ctx ends.
func readLine(ctx context.Context, r io.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err == io.EOF && line != "" {
			err = nil
		}
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
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
