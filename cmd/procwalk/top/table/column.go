//go:build linux

package table

import "github.com/procwalk/procwalk/procwalk"

// Column is one column of a view's table.
type Column struct {
	Title string
	Width int  // the width it needs at least (cells are cut to it)
	Right bool // numbers align right
	// Keep ranks columns when the terminal is narrow: the lowest go first.
	Keep int
	// Flex takes the width left over (command line, info).
	Flex bool
	// Alphabetic columns hold text and sort by it, A to Z (any case);
	// the others hold values and sort by them, largest first.
	Alphabetic bool
	// Sortable columns are cycled through by the view's sort key.
	Sortable bool
}

// ProcessColumns are the process table's columns. The titles of the
// metric columns are the catalogue's labels (TestColumnTitlesAreLabels).
func ProcessColumns() []Column {
	return []Column{
		{Title: "PID", Width: 7, Right: true, Keep: 10, Sortable: true},
		{Title: "USER", Width: 8, Keep: 4, Alphabetic: true, Sortable: true},
		{Title: "NAME", Width: 15, Keep: 9, Alphabetic: true, Sortable: true},
		{Title: "CPU%", Width: 5, Right: true, Keep: 8, Sortable: true},
		{Title: "USS", Width: 9, Right: true, Keep: 6, Sortable: true},
		{Title: "PSS", Width: 9, Right: true, Keep: 5, Sortable: true},
		{Title: "RSS", Width: 9, Right: true, Keep: 7, Sortable: true},
		{Title: "USS+", Width: 9, Right: true, Keep: 3, Sortable: true},
		{Title: "READ/s", Width: 10, Right: true, Keep: 2, Sortable: true},
		{Title: "WRITE/s", Width: 10, Right: true, Keep: 1, Sortable: true},
		{Title: "AGE", Width: 6, Right: true, Keep: 3, Sortable: true},
		{Title: "COMMAND", Width: 10, Keep: 10, Flex: true, Alphabetic: true},
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
		{Title: "KIND", Width: 6, Keep: 10, Alphabetic: true, Sortable: true},
		{Title: "NAME", Width: 24, Keep: 10, Alphabetic: true, Sortable: true},
		{Title: "PROCS", Width: 6, Right: true, Keep: 8, Sortable: true},
		{Title: "RSS", Width: 9, Right: true, Keep: 9, Sortable: true},
		{Title: "PSS", Width: 9, Right: true, Keep: 4, Sortable: true},
		{Title: "CPU%", Width: 6, Right: true, Keep: 8, Sortable: true},
		{Title: "READ/s", Width: 10, Right: true, Keep: 2, Sortable: true},
		{Title: "WRITE/s", Width: 10, Right: true, Keep: 1, Sortable: true},
		{Title: "AGE", Width: 6, Right: true, Keep: 3, Sortable: true},
		{Title: "INFO", Width: 8, Keep: 5, Flex: true, Alphabetic: true},
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
		{Title: "AGENT", Width: 18, Keep: 10, Alphabetic: true, Sortable: true},
		{Title: "STATUS", Width: 12, Keep: 9, Sortable: true}, // by session.AttentionRank
		{Title: "MODEL", Width: 16, Keep: 6, Alphabetic: true, Sortable: true},
		{Title: "CTX%", Width: 5, Right: true, Keep: 8, Sortable: true},
		{Title: "PROCS", Width: 5, Right: true, Keep: 3, Sortable: true},
		{Title: "RSS", Width: 9, Right: true, Keep: 7, Sortable: true},
		{Title: "CPU%", Width: 6, Right: true, Keep: 5, Sortable: true},
		{Title: "AGE", Width: 6, Right: true, Keep: 4, Sortable: true},
		{Title: "TMUX", Width: 8, Keep: 8, Flex: true, Alphabetic: true, Sortable: true},
	}
}

// AgentStatusColumn is the agents table's default sort: what needs a
// person first.
const AgentStatusColumn = 1
