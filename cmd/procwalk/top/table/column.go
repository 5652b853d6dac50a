//go:build linux

package table

import (
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
)

// Column is one column of a view's table: how it is laid out (the
// render.Column's Header, Width, Right, and Drop: its rank when the
// terminal is narrow, the lowest going first; the last column takes the
// width left) and how it sorts.
type Column struct {
	render.Column
	// Alphabetic columns hold text and sort by it, A to Z (any case);
	// the others hold values and sort by them, largest first.
	Alphabetic bool
	// Sortable columns are cycled through by the view's sort key.
	Sortable bool
}

// number is a sortable column of values, aligned right, width cells
// wide and dropped at rank drop.
func number(header string, width, drop int) Column {
	return Column{Column: render.Column{Header: header, Width: width, Drop: drop, Right: true}, Sortable: true}
}

// text is a column of text, width cells wide and dropped at rank drop.
func text(header string, width, drop int, sortable bool) Column {
	return Column{Column: render.Column{Header: header, Width: width, Drop: drop}, Alphabetic: true, Sortable: sortable}
}

// ProcessColumns are the process table's columns. The headers of the
// metric columns are the catalogue's labels (TestColumnTitlesAreLabels).
func ProcessColumns() []Column {
	return []Column{
		number("PID", 7, 10),
		text("USER", 8, 4, true),
		text("NAME", 15, 9, true),
		number("CPU%", 5, 8),
		number("USS", 9, 6),
		number("PSS", 9, 5),
		number("RSS", 9, 7),
		number("USS+", 9, 3),
		number("READ/s", 10, 2),
		number("WRITE/s", 10, 1),
		number("AGE", 6, 3),
		text("COMMAND", 10, 0, false), // the last: takes the width left
	}
}

// Process columns by index.
const (
	ColPID = iota
	ColUser
	ColName
	ColCPU
	ColUSS
	ColPSS
	ColRSS
	ColGrowth
	ColRead
	ColWrite
	ColAge
)

// RowFields are what a process row shows beyond stat and statm: the
// caller reads them of the rows on screen alone, unless the sort or a
// filter needs them of every process (SortNeeds).
const RowFields = procwalk.FieldOwner | procwalk.FieldCmdline | procwalk.FieldIO | procwalk.FieldSmaps

// SortNeeds is what sorting the process table by column c needs read of
// every process.
func SortNeeds(c int) procwalk.Fields {
	switch c {
	case ColUser:
		return procwalk.FieldOwner
	case ColName:
		return procwalk.FieldCmdline // the name is argv[0]'s when it is read
	case ColUSS, ColPSS:
		return procwalk.FieldSmaps
	case ColGrowth, ColRead, ColWrite:
		// Rates need their field read in two frames: of the rows on
		// screen alone, only they would have one to sort by.
		return RowFields
	}
	return 0
}

// SessionColumns are the sessions table's columns.
func SessionColumns() []Column {
	return []Column{
		text("KIND", 6, 10, true),
		text("NAME", 24, 10, true),
		number("PROCS", 6, 8),
		number("RSS", 9, 9),
		number("PSS", 9, 4),
		number("CPU%", 6, 8),
		number("READ/s", 10, 2),
		number("WRITE/s", 10, 1),
		number("AGE", 6, 3),
		text("INFO", 8, 0, false), // the last: takes the width left
	}
}

// SessionRSSColumn is the sessions table's default sort.
const SessionRSSColumn = 3

// SessionMetricColumns are the catalogue metrics of the sessions table's
// columns from PROCS (column 2) on, in order.
func SessionMetricColumns() []string {
	return []string{"procs", "rss_bytes", "pss_bytes", "cpu_percent", "read_bytes_per_second", "write_bytes_per_second", "age_seconds"}
}

// AgentColumns are the agents table's columns: the sessions of AI agents,
// their status, model, context use and tmux pane as columns of their own.
func AgentColumns() []Column {
	return []Column{
		text("AGENT", 18, 10, true),
		{Column: render.Column{Header: "STATUS", Width: 12, Drop: 9, CutEnd: true}, Sortable: true},                  // by session.AttentionRank
		{Column: render.Column{Header: "MODEL", Width: 16, Drop: 6, CutEnd: true}, Alphabetic: true, Sortable: true}, // "claude-sonnet-4…"
		number("CTX%", 5, 8),
		number("PROCS", 5, 3),
		number("RSS", 9, 7),
		number("CPU%", 6, 5),
		number("AGE", 6, 4),
		text("TMUX", 8, 0, true), // the last: takes the width left
	}
}

// AgentStatusColumn is the agents table's default sort: what needs a
// person first.
const AgentStatusColumn = 1
