//go:build linux

package top

import (
	"strings"
	"testing"

	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
)

// The widest cells the formatters make keep their unit and mark in every
// numeric column of both tables: a partial sum ("1000.0 KiB+", 11 cells),
// a growth ("+1023.9 MiB"), a size, a CPU% of many threads. Cut instead,
// "234.0 MiB+" showed as "234.0 Mi…" in a 9-cell PSS column.
func TestWideCellsKeepUnitAndMark(t *testing.T) {
	m := &Model{glyphs: glyphSet(false)}
	widest := []string{"1000.0 KiB+", "1023.9 MiB+", "+1023.9 MiB", "-1023.9 GiB", "1023.9 MiB", "1234.5"}
	short := map[string]string{"1000.0 KiB+": "1000 KiB+", "1023.9 MiB+": "1023 MiB+", "+1023.9 MiB": "+1023 MiB",
		"-1023.9 GiB": "-1023 GiB", "1023.9 MiB": "1023 MiB", "1234.5": "1234"}
	for name, cols := range map[string][]table.Column{"processes": table.ProcessColumns(), "sessions": table.SessionColumns()} {
		for i, c := range cols {
			if !c.Right || c.Alphabetic || c.Title == "PID" || c.Title == "PROCS" || c.Title == "AGE" {
				continue
			}
			for _, cell := range widest {
				if c.Title == "CPU%" && strings.Contains(cell, "B") {
					continue
				}
				cells, widths := make([]string, len(cols)), make([]int, len(cols))
				cells[i], widths[i] = cell, c.Width
				if got := strings.TrimSpace(m.joinCells(cols, cells, widths)); got != short[cell] && got != cell {
					t.Errorf("%s %s (%d cells): %q shows as %q", name, c.Title, c.Width, cell, got)
				}
			}
		}
	}
}
