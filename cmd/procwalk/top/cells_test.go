//go:build linux

package top

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
)

// The widest cells the formatters make keep their unit and mark in every
// numeric column of both tables: a partial sum ("1000.0 KiB+", 11 cells),
// a growth ("+1023.9 MiB"), a size, a CPU% of many threads. Cut instead,
// "234.0 MiB+" showed as "234.0 Mi…" in a 9-cell PSS column.
func TestWideCellsKeepUnitAndMark(t *testing.T) {
	widest := []string{"1000.0 KiB+", "1023.9 MiB+", "+1023.9 MiB", "-1023.9 GiB", "1023.9 MiB", "1234.5"}
	short := map[string]string{"1000.0 KiB+": "1000 KiB+", "1023.9 MiB+": "1023 MiB+", "+1023.9 MiB": "+1023 MiB",
		"-1023.9 GiB": "-1023 GiB", "1023.9 MiB": "1023 MiB", "1234.5": "1234"}
	for name, cols := range map[string][]table.Column{"processes": table.ProcessColumns(), "sessions": table.SessionColumns()} {
		tb := render.Table{Gap: 1}
		for _, c := range cols {
			tb.Cols = append(tb.Cols, c.Column)
		}
		l := tb.Layout(1000) // every column at its width
		for i, c := range cols {
			if !c.Right || c.Alphabetic || c.Header == "PID" || c.Header == "PROCS" || c.Header == "AGE" {
				continue
			}
			for _, cell := range widest {
				if c.Header == "CPU%" && strings.Contains(cell, "B") {
					continue
				}
				cells := make([]string, len(cols))
				cells[i] = cell
				if got := strings.TrimSpace(string(l.AppendLine(nil, cells))); got != short[cell] && got != cell {
					t.Errorf("%s %s (%d cells): %q shows as %q", name, c.Header, c.Width, cell, got)
				}
			}
		}
	}
}
