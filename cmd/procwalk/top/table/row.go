//go:build linux

package table

import (
	"cmp"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// Row is one line of a table: a process or a session, the values it sorts
// by and its cells.
type Row struct {
	// cells are the texts, formatted when first needed (Cells: a row on
	// screen, a sort by a text column): most rows of a big host never are.
	cells   []string
	builder *Builder          // formats a process row's cells
	Proc    *procwalk.Process // a process row, or nil
	Session *session.Session  // a session row, or nil
	// Tree views: bit d is set when the ancestor at depth d+1 has a later
	// sibling (its connector line goes on).
	Lines uint64
	// values sort the numeric columns (Value), and have says which have
	// one (bit c: column c). An array, not a slice: a table of 10,000
	// rows is one allocation. float32, as a view holds two tables of
	// 10,000 rows at once (the one shown and the next): 120 bytes a row
	// rather than 184. It is exact for pids, for byte counts in pages
	// (RSS) up to 64 GiB and in KiB (PSS, USS) up to 16 GiB, and within a
	// ten-millionth elsewhere, far below the digits a cell shows.
	values [MaxColumns]float32
	have   uint16
	Depth  int32 // tree views: nesting
	Last   bool  // tree views: the last of its siblings
	Folded bool  // tree views: its children are hidden
	Kids   bool  // tree views: it has children
	// dim marks a protected (system) process; known once dimKnown, asked
	// of the builder's Protected for rows drawn only (Dim).
	dim, dimKnown bool
}

// MaxColumns is the most columns a table has.
const MaxColumns = 12

// Row.have has a bit for each column: this fails to compile when a table
// has more columns than it has bits.
const _ = uint16(1 << (MaxColumns - 1))

// Value is column c's value of r, and whether it has one.
func (r *Row) Value(c int) (float64, bool) { return float64(r.values[c]), r.Has(c) }

// Has says whether r has a value in column c.
func (r *Row) Has(c int) bool { return r.have&(1<<c) != 0 }

// set sets column c's value of r (v when ok).
func (r *Row) set(c int, v float64, ok bool) {
	r.values[c] = float32(v)
	if ok {
		r.have |= 1 << c
	} else {
		r.have &^= 1 << c
	}
}

// Cells are the texts r shows, a column each, formatted once.
func (r *Row) Cells() []string {
	if r.cells == nil {
		r.cells = r.builder.processCells(r)
	}
	return r.cells
}

// Dim says whether r is a protected (system) process, drawn dimmed. Only
// rows on screen ask: the check reads procwalk's own ancestry (its stat
// files), too costly for every process of every frame.
func (r *Row) Dim() bool {
	if !r.dimKnown && r.Proc != nil {
		r.dim, r.dimKnown = r.builder.protected(r.Proc), true
	}
	return r.dim
}

// CPU is the CPU % of r's process or session, and whether it was measured.
func (r *Row) CPU() (float64, bool) {
	if r.Proc != nil {
		return r.Value(ColCPU)
	}
	return r.Session.Totals.CPUPercent, r.Session.Totals.RatesMeasured > 0
}

// RSS is the resident memory of r's process or session, in bytes.
func (r *Row) RSS() float64 {
	if r.Proc != nil {
		return float64(r.Proc.RSSBytes)
	}
	return float64(r.Session.Totals.RSSBytes)
}

// ID names what a row stands for: a process or a session; the zero ID
// names none.
type ID struct {
	Proc procwalk.ProcID
	Ref  string
}

// ID is what r stands for.
func (r *Row) ID() ID {
	switch {
	case r.Proc != nil:
		return ID{Proc: r.Proc.ID}
	case r.Session != nil:
		return ID{Ref: r.Session.Ref()}
	}
	return ID{}
}

// Matches reports whether lower (a search or filter text in lower case)
// is in r's process name or command line, or in its session's reference.
func (r *Row) Matches(lower string) bool {
	switch {
	case r.Proc != nil:
		return matches(r.Proc, lower)
	case r.Session != nil:
		return strings.Contains(strings.ToLower(r.Session.Ref()), lower)
	}
	return false
}

// matches reports whether lower (a filter in lower case) is in p's name or
// command line (any case).
func matches(p *procwalk.Process, lower string) bool {
	if lower == "" {
		return true
	}
	return strings.Contains(strings.ToLower(p.Comm), lower) || strings.Contains(strings.ToLower(strings.Join(p.Cmdline, " ")), lower)
}

// TmuxTarget is the tmux pane of a session row: an agent's pane, a tmux
// session's first pane; "" for other rows.
func (r *Row) TmuxTarget() string {
	if r == nil || r.Session == nil {
		return ""
	}
	return r.Session.Attrs[session.AttrTmuxTarget]
}

// Sort orders rows by column c of cols: numbers largest first, text A to
// Z, reverse the other way; rows without a value last whatever the
// direction; ties by the first column's value (pid) or the second's text,
// so the order is stable between refreshes.
func Sort(rows []Row, cols []Column, c int, reverse bool) {
	if cols[c].Alphabetic {
		for i := range rows {
			rows[i].Cells() // the comparisons get copies: format once here
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		if cols[c].Alphabetic {
			r := cmp.Compare(strings.ToLower(a.Cells()[c]), strings.ToLower(b.Cells()[c]))
			if reverse {
				r = -r
			}
			return cmp.Or(r, cmp.Compare(a.values[0], b.values[0]), cmp.Compare(a.Cells()[1], b.Cells()[1]))
		}
		// The catalogue's rule: without a value last, whatever the order.
		av, aok := a.Value(c)
		bv, bok := b.Value(c)
		if r := metric.Compare(av, aok, bv, bok); r != 0 {
			if reverse && aok && bok {
				r = -r
			}
			return r
		}
		if a.values[0] != b.values[0] {
			return cmp.Compare(a.values[0], b.values[0]) // pids; sessions have 0
		}
		return cmp.Compare(a.Cells()[1], b.Cells()[1])
	})
}
