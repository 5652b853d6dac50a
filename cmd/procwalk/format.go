//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/textwidth"
	"golang.org/x/sys/unix"
)

// format.go turns numbers into the short forms tables print ("12.3 MiB",
// "2h05m") and lays tables out. JSON output never uses these: it carries
// plain bytes and seconds.

// notMeasured is printed in place of a value that was not measured (a rate
// on a process's first sight, PSS that could not be read): never a zero.
const notMeasured = "-"

// formatBytes prints b in binary units with one decimal: "0 B", "512 B",
// "1.5 KiB", "12.3 MiB". The engine's FormatBytes, which Lua and the kill
// audit use too, so that every output prints a size alike.
func formatBytes(b uint64) string { return procwalk.FormatBytes(b) }

// formatRate prints a bytes-per-second rate like formatBytes; the column
// header carries the "/s".
func formatRate(bytesPerSecond float64) string {
	switch {
	case bytesPerSecond < 0 || math.IsNaN(bytesPerSecond):
		return notMeasured
	case bytesPerSecond >= 1<<64: // uint64() of it would be undefined
		return formatBytes(math.MaxUint64)
	}
	return formatBytes(uint64(math.Round(bytesPerSecond)))
}

// metricsHelp lists the metric catalogue for --help: name, short names,
// unit and type.
func metricsHelp() string {
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

// formatMetric prints value v of metric d in a table's short form: sizes
// and rates in binary units (the heading carries "/s"), percentages with
// one decimal, CPU time and ages as durations.
func formatMetric(d *metric.Desc, v float64) string {
	switch d.Unit {
	case "bytes":
		return formatBytes(uint64(max(v, 0)))
	case "bytes/s":
		return formatRate(v)
	case "bytes/min":
		return formatSigned(v)
	case "percent":
		return formatPercent(v)
	case "seconds":
		switch d.Kind {
		case metric.Counter:
			return formatSeconds(v)
		case metric.Gauge:
			if d.Name == "start_unix_seconds" {
				return time.Unix(int64(v), 0).Format("2006-01-02T15:04:05")
			}
		}
		return formatDuration(time.Duration(v * float64(time.Second)))
	}
	// Counts and ids are whole numbers: print them as integers, which is
	// what FormatFloat prints for them too (below 2^53, and but for -0),
	// several times faster.
	if i := int64(v); float64(i) == v && -1<<53 < i && i < 1<<53 && (i != 0 || !math.Signbit(v)) {
		return strconv.FormatInt(i, 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// formatPercent prints a CPU percentage with one decimal: "12.5".
func formatPercent(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64)
}

// formatDuration prints an age in at most two units: "42s", "5m12s",
// "2h05m", "3d04h", "412d". A negative duration (clock stepped back) is 0s.
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 0:
		return "0s"
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	case s < 100*86400:
		return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// formatSeconds prints CPU time: "0.00s", "12.34s" under a minute, then
// like formatDuration.
func formatSeconds(s float64) string {
	if s < 60 {
		return strconv.FormatFloat(max(s, 0), 'f', 2, 64) + "s"
	}
	return formatDuration(time.Duration(s * float64(time.Second)))
}

// printable is procwalk.Printable, the one escaping of every name shown to
// a person, under the short name the CLI's many messages use.
func printable(s string) string { return procwalk.Printable(s) }

// column is one column of a table. To fit a width (the terminal's, or
// COLUMNS), a table drops the columns with a drop rank, rank 1 first, and
// cuts the cells of columns with a min width; the last column takes what
// is left, at least its min.
type column struct {
	header string
	right  bool // numbers align right, text left
	drop   int  // 0: always shown; else dropped to fit, lowest rank first
	min    int  // 0: never cut; else cells may be cut down to min cells (of the terminal)
}

// table lays rows out in columns two spaces apart. The last column is not
// padded.
type table struct {
	cols []column
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// hidden is the width layout gives a dropped column.
const hidden = -1

// write writes the table at most maxWidth cells wide (0: no limit), as
// layout decides; a cut cell ends in "…" so that it never reads as data.
func (t *table) write(w io.Writer, maxWidth int) error {
	natural := make([]int, len(t.cols))
	for i, c := range t.cols {
		natural[i] = textwidth.Width(c.header)
	}
	for _, row := range t.rows {
		for i, cell := range row {
			natural[i] = max(natural[i], textwidth.Width(cell))
		}
	}
	widths := t.layout(natural, maxWidth)
	last := len(t.cols) - 1
	// Long names of one column whose cuts would read alike are cut where
	// they differ.
	apart := make([]map[string]string, len(t.cols))
	var cells []string
	for i := range last {
		if widths[i] == hidden || widths[i] >= natural[i] {
			continue
		}
		cells = cells[:0]
		for _, row := range t.rows {
			if i < len(row) {
				cells = append(cells, row[i])
			}
		}
		apart[i] = distinctCuts(cells, widths[i])
	}
	bw := bufio.NewWriter(w)
	var b []byte // one line, reused: no allocation per cell
	line := func(cells []string) {
		b = b[:0]
		for i, cell := range cells {
			if widths[i] == hidden {
				continue
			}
			if i == last {
				if maxWidth > 0 {
					cell = cutEnd(cell, widths[i])
				}
				b = append(b, cell...)
				break
			}
			if c, ok := apart[i][cell]; ok {
				cell = c
			} else {
				cell = cutMiddle(cell, widths[i])
			}
			pad := widths[i] - textwidth.Width(cell)
			if !t.cols[i].right {
				b = append(b, cell...)
			}
			for range pad {
				b = append(b, ' ')
			}
			if t.cols[i].right {
				b = append(b, cell...)
			}
			b = append(b, "  "...)
		}
		// An empty last cell leaves no trailing blanks.
		bw.Write(bytes.TrimRight(b, " "))
		bw.WriteByte('\n')
	}
	headers := make([]string, len(t.cols))
	for i, c := range t.cols {
		headers[i] = c.header
	}
	line(headers)
	for _, row := range t.rows {
		line(row)
	}
	return bw.Flush()
}

// layout gives each column its width for lines at most width cells wide
// (0: every column at its natural width, the widest cell's). Columns with
// a drop rank go, lowest rank first, until the others at their min widths
// fit beside the last column at its min; the space left is shared evenly
// between the columns that may be cut and the last one, none getting more
// than its natural width; the last column takes the rest. When even that
// does not fit, the last column gets one cell and the line is longer.
func (t *table) layout(natural []int, width int) []int {
	widths := slices.Clone(natural)
	if width <= 0 {
		return widths
	}
	last := len(t.cols) - 1
	least := func(i int) int {
		if m := t.cols[i].min; m > 0 {
			return min(m, natural[i])
		}
		return natural[i]
	}
	need := least(last)
	for i := range last {
		need += least(i) + 2
	}
	for need > width {
		drop := -1
		for i := range last {
			if widths[i] != hidden && t.cols[i].drop > 0 && (drop < 0 || t.cols[i].drop < t.cols[drop].drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		widths[drop] = hidden
		need -= least(drop) + 2
	}
	// Every shown column at its least width, then water-fill the spare
	// cells into those that may grow.
	spare := width - need
	var grow []int
	for i := range len(t.cols) {
		if widths[i] == hidden {
			continue
		}
		widths[i] = least(i)
		if widths[i] < natural[i] {
			grow = append(grow, i)
		}
	}
	for spare > 0 && len(grow) > 0 {
		share := max(spare/len(grow), 1)
		var still []int
		for _, i := range grow {
			add := min(share, natural[i]-widths[i], spare)
			widths[i] += add
			spare -= add
			if widths[i] < natural[i] {
				still = append(still, i)
			}
		}
		grow = still
	}
	used := 0
	for i := range last {
		if widths[i] != hidden {
			used += widths[i] + 2
		}
	}
	widths[last] = max(width-used, 1)
	return widths
}

// print writes t to w as wide as outputWidth says.
func (t *table) print(e *env, w io.Writer, wide bool) error {
	return t.write(w, e.outputWidth(w, wide))
}

// cutEnd keeps what fits of s in n cells: the start and "…" when s is
// longer (at least the "…", so a line is never left without its last
// column entirely).
func cutEnd(s string, n int) string { return textwidth.Cut(s, max(n, 1)) }

// cutMiddle fits s in n cells by replacing its middle with "…": a
// cgroup path or a long session name keeps its start and its end, where
// the two halves of what names it are.
func cutMiddle(s string, n int) string { return textwidth.CutMiddle(s, n) }

// outputWidth is how wide lines written to w may be: unlimited with wide;
// else $COLUMNS when set (also for a pipe or a file: COLUMNS=80 procwalk
// ps | less); else the terminal's width when w is one; else unlimited (a
// pipe or a file gets whole lines).
func (e *env) outputWidth(w io.Writer, wide bool) int {
	switch {
	case wide:
		return 0
	case e.columns > 0:
		return e.columns
	}
	return terminalWidth(w)
}

// columnsFromEnv reads $COLUMNS: a positive number, else 0 (not set).
func columnsFromEnv(value string) int {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// terminalWidth is the width of w when it is a terminal, 0 otherwise
// (a pipe or file gets whole lines).
func terminalWidth(w io.Writer) int {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}
