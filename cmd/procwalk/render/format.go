//go:build linux

package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
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
// COLUMNS), a table drops the columns with a drop rank, lowest rank first,
// and cuts the cells of columns with a min width; the last column takes
// what is left, at least its min.
type Column struct {
	Header string
	Right  bool // numbers align right, text left
	Drop   int  // 0: always shown; else dropped to fit, lowest rank first
	Min    int  // 0: never cut; else cells may be cut down to min cells (of the terminal)
	// Width, when above 0, is the column's width whatever its cells: they
	// are padded or cut to it (a live table, whose cells change at every
	// refresh, keeps its columns in place). The last column takes what is
	// left, at least Width.
	Width int
	// CutEnd cuts the cells at their end, as the last column's, rather
	// than in the middle: for names that read from their start (an AI
	// model's "claude-sonnet-4-5-20250929").
	CutEnd bool
}

// Table lays rows out in columns Gap blanks apart (0: two). The last
// column is not padded.
type Table struct {
	Cols []Column
	Rows [][]string
	Gap  int
}

func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// hidden is the width layout gives a dropped column.
const hidden = -1

// Write writes the table at most maxWidth cells wide (0: no limit), as
// Layout decides.
func (t *Table) Write(w io.Writer, maxWidth int) error {
	l := t.Layout(maxWidth)
	bw := bufio.NewWriter(w)
	var b []byte // one line, reused: no allocation per cell
	line := func(cells []string) {
		b = append(l.AppendLine(b[:0], cells), '\n')
		bw.Write(b)
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

// Layout is where the columns of a table go on a line: which are shown,
// how wide, and how the cells too long for them are cut.
type Layout struct {
	cols    []Column
	widths  []int // each column's; hidden when dropped
	gap     int
	cutLast bool
	// apart holds, for a column whose cells are cut, the cuts that keep
	// long cells reading unlike each other (distinctCuts).
	apart []map[string]string
}

// Layout lays t out for lines at most width cells wide (0: no limit).
// Columns with a drop rank go, lowest rank first, until the others at
// their least widths (Width, else Min, else the widest cell's) fit beside
// the last column at its least; the space left is shared evenly between
// the columns that may be cut and the last one, none getting more than
// its widest cell (or its Width); the last column takes the rest. When
// even that does not fit, the last column gets one cell and the line is
// longer. Long cells of one column whose cuts would read alike are cut
// where they differ.
func (t *Table) Layout(width int) *Layout {
	gap := t.Gap
	if gap <= 0 {
		gap = 2
	}
	natural := make([]int, len(t.Cols)) // the widest cell's, the header's included
	for i, c := range t.Cols {
		natural[i] = textwidth.Width(c.Header)
	}
	for _, row := range t.Rows {
		for i, cell := range row {
			natural[i] = max(natural[i], textwidth.Width(cell))
		}
	}
	l := &Layout{cols: t.Cols, widths: t.widths(natural, width, gap), gap: gap, cutLast: width > 0, apart: make([]map[string]string, len(t.Cols))}
	var cells []string
	for i := range len(t.Cols) - 1 {
		if l.widths[i] == hidden || l.widths[i] >= natural[i] || t.Cols[i].CutEnd {
			continue
		}
		cells = cells[:0]
		for _, row := range t.Rows {
			if i < len(row) {
				cells = append(cells, row[i])
			}
		}
		l.apart[i] = distinctCuts(cells, l.widths[i])
	}
	return l
}

// widths gives each column its width for lines at most width cells wide,
// gap apart, as Layout says; natural are the widest cells.
func (t *Table) widths(natural []int, width, gap int) []int {
	last := len(t.Cols) - 1
	most := func(i int) int {
		if w := t.Cols[i].Width; w > 0 {
			return w
		}
		return natural[i]
	}
	widths := make([]int, len(t.Cols))
	for i := range widths {
		widths[i] = most(i)
	}
	if width <= 0 {
		return widths
	}
	least := func(i int) int {
		if m := t.Cols[i].Min; m > 0 && t.Cols[i].Width == 0 {
			return min(m, natural[i])
		}
		return most(i)
	}
	need := least(last)
	for i := range last {
		need += least(i) + gap
	}
	for need > width {
		drop := -1
		for i := range last {
			if widths[i] != hidden && t.Cols[i].Drop != 0 && (drop < 0 || t.Cols[i].Drop < t.Cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		widths[drop] = hidden
		need -= least(drop) + gap
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
		if widths[i] < most(i) {
			grow = append(grow, i)
		}
	}
	for spare > 0 && len(grow) > 0 {
		share := max(spare/len(grow), 1)
		var still []int
		for _, i := range grow {
			add := min(share, most(i)-widths[i], spare)
			widths[i] += add
			spare -= add
			if widths[i] < most(i) {
				still = append(still, i)
			}
		}
		grow = still
	}
	used := 0
	for i := range last {
		if widths[i] != hidden {
			used += widths[i] + gap
		}
	}
	widths[last] = max(width-used, 1)
	return widths
}

// AppendLine appends to b the cells of one line (a row, or the headers)
// laid out: dropped columns left out, each cell padded to its column, a
// cell too long for it cut ("…" marks the cut, so that it never reads as
// data), no blank at the end. A number loses its decimals before it is
// cut ("234.0 MiB+" is "234 MiB+"): its unit and mark stay. A column's
// cells are cut in the middle, where long names differ least (CutMiddle,
// kept apart: distinctCuts); the last column's, and a CutEnd column's, at
// their end.
func (l *Layout) AppendLine(b []byte, cells []string) []byte {
	start, last := len(b), len(l.cols)-1
	for i, cell := range cells {
		w := l.widths[i]
		if w == hidden {
			continue
		}
		if i == last {
			if l.cutLast {
				cell = CutEnd(cell, w)
			}
			b = append(b, cell...)
			break
		}
		cw := textwidth.Width(cell)
		if cw > w {
			if c, ok := l.apart[i][cell]; ok {
				cell = c
			} else {
				if l.cols[i].Right {
					cell = Whole(cell)
				}
				if l.cols[i].CutEnd {
					cell = CutEnd(cell, w)
				} else {
					cell = CutMiddle(cell, w)
				}
			}
			cw = textwidth.Width(cell)
		}
		pad := w - cw
		if !l.cols[i].Right {
			b = append(b, cell...)
		}
		for range pad {
			b = append(b, ' ')
		}
		if l.cols[i].Right {
			b = append(b, cell...)
		}
		for range l.gap {
			b = append(b, ' ')
		}
	}
	// An empty last cell leaves no trailing blanks.
	return append(b[:start], bytes.TrimRight(b[start:], " ")...)
}

// Width is column i's width, 0 when it was dropped.
func (l *Layout) Width(i int) int { return max(l.widths[i], 0) }

// ColumnAt is the column under cell x of a line (its gap after it
// included), or -1 past the last one.
func (l *Layout) ColumnAt(x int) int {
	at := 0
	for i, w := range l.widths {
		if w == hidden {
			continue
		}
		if x >= at && (x < at+w+l.gap || i == len(l.widths)-1) {
			return i
		}
		at += w + l.gap
	}
	return -1
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

// OutputWidth is how wide lines written to w may be: unlimited (0) with
// wide; else columns ($COLUMNS, ColumnsFromEnv) when set, also for a pipe
// or a file (COLUMNS=80 procwalk ps | less); else the terminal's width
// when w is one; else unlimited (a pipe or a file gets whole lines).
func OutputWidth(w io.Writer, columns int, wide bool) int {
	switch {
	case wide:
		return 0
	case columns > 0:
		return columns
	}
	return TerminalWidth(w)
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
