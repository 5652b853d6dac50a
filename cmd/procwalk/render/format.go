//go:build linux

package render

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

// NotMeasured is printed in place of a value that was not measured (a rate
// on a process's first sight, PSS that could not be read): never a zero.
const NotMeasured = "-"

// Bytes prints b in binary units with one decimal: "0 B", "512 B",
// "1.5 KiB", "12.3 MiB". The engine's FormatBytes, which Lua and the kill
// audit use too, so that every output prints a size alike.
func Bytes(b uint64) string { return procwalk.FormatBytes(b) }

// Rate prints a bytes-per-second rate like Bytes; the column
// header carries the "/s".
func Rate(bytesPerSecond float64) string {
	switch {
	case bytesPerSecond < 0 || math.IsNaN(bytesPerSecond):
		return NotMeasured
	case bytesPerSecond >= 1<<64: // uint64() of it would be undefined
		return Bytes(math.MaxUint64)
	}
	return Bytes(uint64(math.Round(bytesPerSecond)))
}

// Metric prints value v of metric d in a table's short form: sizes
// and rates in binary units (the heading carries "/s"), percentages with
// one decimal, CPU time and ages as durations.
func Metric(d *metric.Desc, v float64) string {
	switch d.Unit {
	case "bytes":
		return Bytes(uint64(max(v, 0)))
	case "bytes/s":
		return Rate(v)
	case "bytes/min":
		return Signed(v)
	case "percent":
		return Percent(v)
	case "seconds":
		switch d.Kind {
		case metric.Counter:
			return Seconds(v)
		case metric.Gauge:
			if d.Name == "start_unix_seconds" {
				return time.Unix(int64(v), 0).Format("2006-01-02T15:04:05")
			}
		}
		return Duration(time.Duration(v * float64(time.Second)))
	}
	// Counts and ids are whole numbers: print them as integers, which is
	// what FormatFloat prints for them too (below 2^53, and but for -0),
	// several times faster.
	if i := int64(v); float64(i) == v && -1<<53 < i && i < 1<<53 && (i != 0 || !math.Signbit(v)) {
		return strconv.FormatInt(i, 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Cell is value v of metric d in a table's short form (Metric), or
// NotMeasured when it has none (!ok): the one formatter of every table's
// metric cells, ps's, sessions' and the live view's.
func Cell(d *metric.Desc, v float64, ok bool) string {
	if !ok {
		return NotMeasured
	}
	return Metric(d, v)
}

// Percent prints a CPU percentage with one decimal: "12.5".
func Percent(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64)
}

// Duration prints an age in at most two units: "42s", "5m12s",
// "2h05m", "3d04h", "412d". A negative duration (clock stepped back) is 0s.
func Duration(d time.Duration) string {
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

// Seconds prints CPU time: "0.00s", "12.34s" under a minute, then
// like Duration.
func Seconds(s float64) string {
	if s < 60 {
		return strconv.FormatFloat(max(s, 0), 'f', 2, 64) + "s"
	}
	return Duration(time.Duration(s * float64(time.Second)))
}

// Column is one column of a Table. To fit a width (the terminal's, or
// COLUMNS), a table drops the columns with a drop rank, rank 1 first, and
// cuts the cells of columns with a min width; the last column takes what
// is left, at least its min.
type Column struct {
	Header string
	Right  bool // numbers align right, text left
	Drop   int  // 0: always shown; else dropped to fit, lowest rank first
	Min    int  // 0: never cut; else cells may be cut down to min cells (of the terminal)
}

// Table lays rows out in columns two spaces apart. The last column is not
// padded.
type Table struct {
	Cols []Column
	Rows [][]string
}

func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// hidden is the width layout gives a dropped column.
const hidden = -1

// Write writes the table at most maxWidth cells wide (0: no limit), as
// layout decides; a cut cell ends in "…" so that it never reads as data.
func (t *Table) Write(w io.Writer, maxWidth int) error {
	natural := make([]int, len(t.Cols))
	for i, c := range t.Cols {
		natural[i] = textwidth.Width(c.Header)
	}
	for _, row := range t.Rows {
		for i, cell := range row {
			natural[i] = max(natural[i], textwidth.Width(cell))
		}
	}
	widths := t.layout(natural, maxWidth)
	last := len(t.Cols) - 1
	// Long names of one column whose cuts would read alike are cut where
	// they differ.
	apart := make([]map[string]string, len(t.Cols))
	var cells []string
	for i := range last {
		if widths[i] == hidden || widths[i] >= natural[i] {
			continue
		}
		cells = cells[:0]
		for _, row := range t.Rows {
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
					cell = CutEnd(cell, widths[i])
				}
				b = append(b, cell...)
				break
			}
			if c, ok := apart[i][cell]; ok {
				cell = c
			} else {
				cell = CutMiddle(cell, widths[i])
			}
			pad := widths[i] - textwidth.Width(cell)
			if !t.Cols[i].Right {
				b = append(b, cell...)
			}
			for range pad {
				b = append(b, ' ')
			}
			if t.Cols[i].Right {
				b = append(b, cell...)
			}
			b = append(b, "  "...)
		}
		// An empty last cell leaves no trailing blanks.
		bw.Write(bytes.TrimRight(b, " "))
		bw.WriteByte('\n')
	}
	headers := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		headers[i] = c.Header
	}
	line(headers)
	for _, row := range t.Rows {
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
func (t *Table) layout(natural []int, width int) []int {
	widths := slices.Clone(natural)
	if width <= 0 {
		return widths
	}
	last := len(t.Cols) - 1
	least := func(i int) int {
		if m := t.Cols[i].Min; m > 0 {
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
			if widths[i] != hidden && t.Cols[i].Drop > 0 && (drop < 0 || t.Cols[i].Drop < t.Cols[drop].Drop) {
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
	for i := range len(t.Cols) {
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

// CutEnd keeps what fits of s in n cells: the start and "…" when s is
// longer (at least the "…", so a line is never left without its last
// column entirely).
func CutEnd(s string, n int) string { return textwidth.Cut(s, max(n, 1)) }

// CutMiddle fits s in n cells by replacing its middle with "…": a
// cgroup path or a long session name keeps its start and its end, where
// the two halves of what names it are.
func CutMiddle(s string, n int) string { return textwidth.CutMiddle(s, n) }

// ColumnsFromEnv reads $COLUMNS: a positive number, else 0 (not set).
func ColumnsFromEnv(value string) int {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// TerminalWidth is the width of w when it is a terminal, 0 otherwise
// (a pipe or file gets whole lines).
func TerminalWidth(w io.Writer) int {
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

// Signed prints a byte rate with its sign: "+1.5 MiB", "-12.0 KiB".
func Signed(bytes float64) string {
	if bytes < 0 {
		return "-" + Bytes(uint64(-bytes))
	}
	return "+" + Bytes(uint64(bytes))
}

// Whole drops the decimals of the number in a cell ("234.0 MiB+" is
// "234 MiB+", "+1023.9 KiB" is "+1023 KiB"): the short form of a size,
// rate or percentage for a column too narrow for the long one, cut
// towards zero so that it never claims more than was measured. A cell
// without a decimal point is returned as it is.
func Whole(cell string) string {
	dot := strings.IndexByte(cell, '.')
	if dot <= 0 || cell[dot-1] < '0' || cell[dot-1] > '9' {
		return cell
	}
	end := dot + 1
	for end < len(cell) && cell[end] >= '0' && cell[end] <= '9' {
		end++
	}
	return cell[:dot] + cell[end:]
}
