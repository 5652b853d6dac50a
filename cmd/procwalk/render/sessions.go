//go:build linux

package render

import (
	"fmt"
	"io"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// SessionsTable is procwalk sessions' table of shown, grouped from a
// snapshot taken at now with the fields read: kind, name, the catalogue's
// metrics (PSS with pss), INFO.
func SessionsTable(shown []session.Session, read procwalk.Fields, now time.Time, pss bool) *Table {
	// The metric columns, by catalogue name, and the order in which they go
	// to fit the width: SWAP first, then TIME, AGE, PROCS (and RSS when PSS
	// is shown), WRITE/s, READ/s, CPU%; a long NAME is cut in the middle;
	// INFO takes the rest.
	cols := []struct {
		name string
		drop int
	}{{"procs", 4}, {"rss_bytes", 0}, {"pss_bytes", 0}, {"swap_bytes", 1}, {"cpu_percent", 8}, {"cpu_time_seconds", 2},
		{"read_bytes_per_second", 7}, {"write_bytes_per_second", 6}, {"age_seconds", 3}}
	t := &Table{Cols: []Column{{Header: "KIND"}, {Header: "NAME", Min: 16}}}
	var metrics []metric.Desc
	for _, col := range cols {
		d, _ := metric.Lookup(col.name)
		switch {
		case d.Name == "pss_bytes" && !pss:
			continue
		case d.Name == "rss_bytes" && pss:
			col.drop = 5
		}
		metrics = append(metrics, d)
		t.Cols = append(t.Cols, Column{Header: d.Label, Right: true, Drop: col.drop})
	}
	t.Cols = append(t.Cols, Column{Header: "INFO", Min: 12})
	for i := range shown {
		s := &shown[i]
		row := []string{s.Kind, procwalk.Printable(s.Name)}
		for j := range metrics {
			row = append(row, SessionCell(&metrics[j], s, read, now))
		}
		t.Add(append(row, procwalk.Printable(s.Info()))...)
	}
	return t
}

// SessionCell is metric d of s in a table's short form, "-" when absent.
// A "+" marks a lower bound: a sum of PSS or IO that some members' refused
// files left out (procwalk session KIND:NAME says how many).
func SessionCell(d *metric.Desc, s *session.Session, read procwalk.Fields, now time.Time) string {
	v, ok := d.Session(s, read, now)
	return SessionValueCell(d, s, v, ok)
}

// SessionValueCell is SessionCell for a value the caller has already
// taken from d (v, ok).
func SessionValueCell(d *metric.Desc, s *session.Session, v float64, ok bool) string {
	if !ok {
		return NotMeasured
	}
	cell := Metric(d, v)
	t := &s.Totals
	if d.Needs&procwalk.FieldSmaps != 0 && t.SmapsRead < t.Procs || d.Needs&procwalk.FieldIO != 0 && t.IORead < t.Procs {
		cell += "+"
	}
	return cell
}

// SessionsFields are what SessionsTable (with pss, rates) or, with json,
// WriteJSONSessions needs read of every process besides what grouping
// reads: every session's SWAP (free on a host with no swap in use), its
// PSS with pss, its IO as rates in the table (with rates) and as byte
// counts in JSON.
func SessionsFields(pss, rates, json bool) procwalk.Fields {
	fields := procwalk.FieldSwap
	if pss {
		fields |= procwalk.FieldSmaps
	}
	if rates || json {
		fields |= procwalk.FieldIO
	}
	return fields
}

// SessionsFooter writes what follows a sessions table of shown sessions:
// "(no sessions)" when none is, and for each kind whose sessions a limit
// hid (hidden, by kind) one line counting them, with hint(kind) saying how
// to list them.
func SessionsFooter(w io.Writer, shown int, hidden map[string]int, hint func(kind string) string) {
	if shown == 0 {
		fmt.Fprintln(w, "(no sessions)")
	}
	for _, k := range session.Kinds() {
		if n := hidden[k]; n > 0 {
			fmt.Fprintf(w, "... and %s (%s)\n", CountOf(n, "more "+k+" session", "more "+k+" sessions"), hint(k))
		}
	}
}
