//go:build linux

package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// ps.go is procwalk ps's table: its columns, text or a metric of the
// catalogue, each cell escaped.

// ProcessColumn is one --columns name: a metric of the catalogue, or one of the
// text columns (user, state, comm, command).
type ProcessColumn struct {
	Name   string
	Header string
	Right  bool
	Needs  procwalk.Fields
	Rates  bool
	Value  func(s *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string
}

// ProcessColumnNames are the short column names the help lists first.
const ProcessColumnNames = "pid,ppid,user,state,threads,rss,pss,uss,swap,cpu,read,write,time,age,comm,command"

// processTextColumns are the columns that are no number.
func processTextColumns() []ProcessColumn {
	return []ProcessColumn{
		{Name: "user", Header: "USER", Needs: procwalk.FieldOwner, Value: func(_ *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string {
			if p.Read&procwalk.FieldOwner == 0 {
				return "?"
			}
			return procwalk.Printable(users.Name(p.EffectiveUID))
		}},
		{Name: "state", Header: "S", Value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return procwalk.Printable(string(rune(p.State)))
		}},
		{Name: "comm", Header: "COMM", Value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return procwalk.Printable(p.Comm)
		}},
		{Name: "command", Header: "COMMAND", Needs: procwalk.FieldCmdline, Value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return CommandLine(p)
		}},
	}
}

// metricColumn is the column of metric d: its label, its value in the
// table's units, "-" where it has none.
func metricColumn(name string, d *metric.Desc) ProcessColumn {
	return ProcessColumn{Name: name, Header: d.Label, Right: true, Needs: d.Needs, Rates: d.Kind == metric.Rate,
		Value: func(s *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			v, ok := d.Process(s, p)
			return Cell(d, v, ok)
		}}
}

// ProcessColumn finds column name: a text column, else a metric.
func FindProcessColumn(name string) (ProcessColumn, bool) {
	for _, c := range processTextColumns() {
		if c.Name == name {
			return c, true
		}
	}
	if d, ok := metric.Lookup(name); ok && d.OfProcess() {
		return metricColumn(name, &d), true
	}
	return ProcessColumn{}, false
}

// CommandLine is what the COMMAND column shows: the arguments joined by
// spaces, or "[comm]" when there are none (kernel threads, zombies, a
// process that cleared its argv), as ps(1) does.
func CommandLine(p *procwalk.Process) string {
	var s string
	if len(p.Cmdline) == 0 || (len(p.Cmdline) == 1 && p.Cmdline[0] == "") {
		s = "[" + procwalk.Printable(p.Comm) + "]"
	} else {
		s = procwalk.Printable(strings.Join(p.Cmdline, " "))
		if p.CmdlineTruncated {
			s += "..."
		}
	}
	if p.Zombie() {
		s += " <defunct>"
	}
	return s
}

// dropRank is the order in which the default columns go when the table
// does not fit the width: threads first, then uss, time, ppid, age, state,
// write, read; pid, user, rss, pss, cpu and the command stay.
func dropRank(name string) int {
	return slices.Index([]string{"threads", "uss", "time", "ppid", "age", "state", "write", "read"}, name) + 1
}

// ProcessTable lays procs, processes of s, out in cols; users names their
// owners. dropDefaults lets the table drop the default columns that do not
// fit, in dropRank's order; columns a person asked for are never dropped.
func ProcessTable(s *procwalk.Snapshot, cols []ProcessColumn, procs []*procwalk.Process, users *procwalk.Users, dropDefaults bool) *Table {
	t := &Table{}
	for _, col := range cols {
		tc := Column{Header: col.Header, Right: col.Right}
		switch col.Name {
		case "user", "comm":
			tc.Min = 8
		case "command":
			tc.Min = 20
		}
		if dropDefaults {
			tc.Drop = dropRank(col.Name)
		}
		t.Cols = append(t.Cols, tc)
	}
	// One array holds every cell, rows are slices of it.
	n := len(cols)
	cells := make([]string, len(procs)*n)
	t.Rows = make([][]string, 0, len(procs))
	for r, p := range procs {
		row := cells[r*n : (r+1)*n : (r+1)*n]
		for i, col := range cols {
			row[i] = col.Value(s, p, users)
		}
		t.Add(row...)
	}
	return t
}

// MetricsHelp lists the process metrics of the catalogue for ps --help:
// name, short names, unit and type, a line each.
func MetricsHelp() string {
	var b strings.Builder
	b.WriteString("METRICS (the same names in JSON, Telegraf and Lua)\n")
	for _, d := range metric.Processes() {
		name := d.Name
		if len(d.Aliases) > 0 {
			name += " (" + strings.Join(d.Aliases, ", ") + ")"
		}
		unit := d.Unit
		if unit == "" {
			unit = "-"
		}
		fmt.Fprintf(&b, "  %-44s %-9s %s\n", name, unit, d.Kind)
	}
	return b.String()
}
