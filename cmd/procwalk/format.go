package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/procwalk/procwalk/procwalk"
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
	for _, d := range procwalk.Metrics() {
		name := d.Name
		if len(d.Aliases) > 0 {
			name += " (" + strings.Join(d.Aliases, ", ") + ")"
		}
		unit := d.Unit
		if unit == "" {
			unit = "-"
		}
		fmt.Fprintf(&b, "  %-44s %-9s %s\n", name, unit, d.Type)
	}
	return b.String()
}

// formatMetric prints value v of metric d in a table's short form: sizes
// and rates in binary units (the heading carries "/s"), percentages with
// one decimal, CPU time and ages as durations.
func formatMetric(d procwalk.MetricDesc, v float64) string {
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
		switch d.Type {
		case procwalk.Counter:
			return formatSeconds(v)
		case procwalk.Gauge:
			if d.Name == "start_unix_seconds" {
				return time.Unix(int64(v), 0).Format("2006-01-02T15:04:05")
			}
		}
		return formatDuration(time.Duration(v * float64(time.Second)))
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

// printable escapes what would break a table line: control characters
// (comm may hold a newline), invalid UTF-8 and other unprintable runes.
// "evil\nname" prints as `evil\nname`.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// column is one column of a table.
type column struct {
	header string
	right  bool // numbers align right, text left
}

// table lays rows out in columns two spaces apart. The last column is not
// padded, and is cut to fit maxWidth when that is positive.
type table struct {
	cols []column
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, maxWidth int) error {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = utf8.RuneCountInString(c.header)
	}
	for _, row := range t.rows {
		for i, cell := range row[:len(row)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	bw := bufio.NewWriter(w)
	line := func(cells []string) {
		used := 0
		for i, cell := range cells {
			if i == len(cells)-1 {
				if maxWidth > 0 {
					cell = cutRunes(cell, maxWidth-used)
				}
				bw.WriteString(cell)
				break
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if t.cols[i].right {
				bw.WriteString(pad + cell + "  ")
			} else {
				bw.WriteString(cell + pad + "  ")
			}
			used += widths[i] + 2
		}
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

// print writes t to w, its last column cut to the width of the terminal w
// is, unless wide. A pipe or a file always gets whole lines.
func (t *table) print(w io.Writer, wide bool) error {
	width := 0
	if !wide {
		width = terminalWidth(w)
	}
	return t.write(w, width)
}

// cutRunes keeps the first n runes of s (at least one, so a line is never
// left without its last column entirely).
func cutRunes(s string, n int) string {
	n = max(n, 1)
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
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
