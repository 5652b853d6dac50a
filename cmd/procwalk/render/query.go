//go:build linux

package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// query.go is a listing of processes as procwalk ps asks for one: which
// processes, in which order, in which columns, and from that what a
// gather must read.

// ProcessQuery is a listing of processes: those Filter selects, in Order,
// the first Limit of them, shown in Columns or as JSON (WriteJSONSnapshot).
// NewProcessQuery builds one from names; Fields says what to read, Rows
// picks the rows from a frame.
type ProcessQuery struct {
	Order   metric.ProcessOrder
	Columns []ProcessColumn // the table's; ignored with JSON
	Filter  procwalk.Filter
	Limit   int  // rows kept after sorting; 0: all
	JSON    bool // every value WriteJSONSnapshot writes
	// PSS reads smaps_rollup (PSS, USS) of the rows shown: asked for, or
	// needed by Order or a column.
	PSS bool
	// Rates samples twice: for JSON, and for an order or a column that
	// is a rate (CPU %, IO bytes/s), unless rates were turned off.
	Rates bool
}

// Errors of NewProcessQuery, wrapped in a *QueryError.
var (
	ErrUnknownColumn = errors.New("unknown column")
	ErrNeedsRates    = errors.New("needs rates, which are turned off")
)

// QueryError is a sort key or column NewProcessQuery refused.
type QueryError struct {
	Option string // "columns" or "sort"
	Name   string // the column or sort key
	Err    error  // ErrUnknownColumn or ErrNeedsRates
}

func (e *QueryError) Error() string { return fmt.Sprintf("%s %q: %v", e.Option, e.Name, e.Err) }
func (e *QueryError) Unwrap() error { return e.Err }

// DefaultProcessColumns are the columns shown when none are named: PSS
// and USS when PSS is read, the rates when they are measured.
func DefaultProcessColumns(pss, rates bool) string {
	names := "pid,ppid,user,state,threads,rss"
	if pss {
		names += ",pss,uss"
	}
	if rates {
		names += ",cpu,read,write"
	}
	return names + ",time,age,command"
}

// NewProcessQuery is the listing sorted by order in the comma-separated
// columns (any case; "" is DefaultProcessColumns), or as JSON. pss asks
// for PSS; noRates turns rates off, and an order or column that is a rate
// is then refused.
func NewProcessQuery(order metric.ProcessOrder, columns string, json, pss, noRates bool) (ProcessQuery, error) {
	q := ProcessQuery{Order: order, JSON: json, Filter: procwalk.Filter{UID: procwalk.AnyOwner}}
	// Asking for PSS, by sort or column, is asking to read it; the default
	// columns then show it too.
	q.PSS = pss || order.Needs()&procwalk.FieldSmaps != 0
	if columns == "" {
		columns = DefaultProcessColumns(q.PSS, !noRates)
	}
	for _, name := range strings.Split(columns, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		col, ok := FindProcessColumn(name)
		if !ok {
			return q, &QueryError{Option: "columns", Name: name, Err: ErrUnknownColumn}
		}
		if col.Rates && noRates {
			return q, &QueryError{Option: "columns", Name: name, Err: ErrNeedsRates}
		}
		q.PSS = q.PSS || col.Needs&procwalk.FieldSmaps != 0
		q.Columns = append(q.Columns, col)
	}
	if noRates && order.NeedsRates() {
		return q, &QueryError{Option: "sort", Name: order.Name, Err: ErrNeedsRates}
	}
	q.Rates = !noRates && (json || order.NeedsRates() || slices.ContainsFunc(q.Columns, func(c ProcessColumn) bool { return c.Rates }))
	return q, nil
}

// ShowsUsers reports whether the rows show user names: a user column,
// or JSON.
func (q ProcessQuery) ShowsUsers() bool {
	return q.JSON || slices.ContainsFunc(q.Columns, func(c ProcessColumn) bool { return c.Name == "user" })
}

// Fields are what the scan reads of every process, the union of what is
// shown, sorted and filtered (a table of pid,ppid,rss,comm reads stat and
// statm alone), and what is read after it of the rows shown alone:
// smaps_rollup, which takes each target's mmap lock, unless a PSS or USS
// growth rate is shown or sorted by (a rate needs it in both samples).
func (q ProcessQuery) Fields() (scan, later procwalk.Fields) {
	if q.JSON {
		// JSON shows every value of the default scan: the owner, the
		// command line, swap, and with rates io and its rates.
		scan = procwalk.FieldStatus | procwalk.FieldCmdline
		if q.Rates {
			scan |= procwalk.FieldIO
		}
	} else {
		scan = q.Order.Needs()
		for _, col := range q.Columns {
			scan |= col.Needs
		}
		if q.Filter.Contains != "" || q.Filter.Regexp != nil {
			scan |= procwalk.FieldCmdline
		}
		if q.Filter.UID >= 0 {
			scan |= procwalk.FieldOwner // status, read for JSON, serves it too
		}
	}
	if !q.PSS {
		return scan, 0
	}
	scan &^= procwalk.FieldSmaps
	if q.Rates && q.showsSmapsRate() {
		return scan | procwalk.FieldSmaps, 0
	}
	return scan, procwalk.FieldSmaps
}

// showsSmapsRate reports whether a PSS or USS growth rate is shown or
// sorted by: JSON with rates has them.
func (q ProcessQuery) showsSmapsRate() bool {
	if q.JSON || q.Order.NeedsRates() && q.Order.Needs()&procwalk.FieldSmaps != 0 {
		return true
	}
	return slices.ContainsFunc(q.Columns, func(c ProcessColumn) bool { return c.Rates && c.Needs&procwalk.FieldSmaps != 0 })
}

// Rows selects and sorts the processes of f to show, reading what Fields
// leaves for later of those alone: of the matches when the order needs
// it, else of the rows left after Limit.
func (q ProcessQuery) Rows(f frame.Frame) ([]*procwalk.Process, error) {
	snap := f.Snapshot
	_, later := q.Fields()
	procs := make([]*procwalk.Process, 0, len(snap.Procs))
	for i := range snap.Procs {
		if p := &snap.Procs[i]; q.Filter.Match(p) {
			procs = append(procs, p)
		}
	}
	sortNeeds := later & q.Order.Needs()
	if sortNeeds != 0 {
		if err := f.ReadMore(procs, sortNeeds); err != nil {
			return nil, err
		}
	}
	q.Order.Sort(snap, procs)
	if q.Limit > 0 && len(procs) > q.Limit {
		procs = procs[:q.Limit]
	}
	if rest := later &^ sortNeeds; rest != 0 {
		if err := f.ReadMore(procs, rest); err != nil {
			return nil, err
		}
	}
	return procs, nil
}

// TreeQuery is a drawing of the process tree (TreeTable, WriteJSONTree):
// PID's subtree, or every root's when PID is 0; kernel threads with
// Kernel, or when PID is a kernel thread; with PSS; or as JSON, which has each
// process's owner and command line.
type TreeQuery struct {
	PID    int
	Kernel bool
	PSS    bool
	JSON   bool
}

// ErrNoProcess is TreeQuery.Read's error for a PID not in the snapshot.
var ErrNoProcess = errors.New("no such process")

// Read picks from f the roots to draw from and which processes below them
// are drawn (shown: a process not shown hides its subtree too), and reads
// of the processes drawn alone what the scan left out: smaps_rollup for
// PSS, which takes each target's mmap lock, and the owner and command
// line for JSON.
func (q TreeQuery) Read(f frame.Frame) (roots []*procwalk.Process, shown func(*procwalk.Process) bool, err error) {
	snap := f.Snapshot
	kernel := q.Kernel
	if q.PID != 0 {
		p := snap.Process(q.PID)
		if p == nil {
			return nil, nil, fmt.Errorf("pid %d: %w", q.PID, ErrNoProcess)
		}
		roots = []*procwalk.Process{p}
		kernel = kernel || p.Kernel
	} else {
		for _, p := range snap.Roots() {
			if kernel || !p.Kernel {
				roots = append(roots, p)
			}
		}
	}
	shown = func(p *procwalk.Process) bool { return kernel || !p.Kernel }
	var more procwalk.Fields
	if q.PSS {
		more |= procwalk.FieldSmaps
	}
	if q.JSON {
		more |= procwalk.FieldStatus | procwalk.FieldCmdline
	}
	if more == 0 {
		return roots, shown, nil
	}
	var drawn []*procwalk.Process
	for _, r := range roots {
		snap.Walk(r.ID.PID, func(p *procwalk.Process, depth int) bool {
			if depth > 0 && !shown(p) {
				return false // nor its subtree
			}
			drawn = append(drawn, p)
			return true
		})
	}
	return roots, shown, f.ReadMore(drawn, more)
}
