//go:build linux

package top

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"

	"github.com/procwalk/procwalk/procwalk"
)

// view.go draws the screen: three header lines, the table, a status line.

// headerLines is the number of lines above the table.
const headerLines = 3

// styles are the view's colours. lipgloss picks the terminal's colour
// profile (none under NO_COLOR or on a non-colour terminal) and adaptive
// colours read on light and dark backgrounds.
type styles struct {
	title, selected, dim, alarm, danger, gaugeUsed, marker, head lipgloss.Style
}

func newStyles() styles {
	return styles{
		title:     lipgloss.NewStyle().Bold(true),
		head:      lipgloss.NewStyle().Bold(true).Reverse(true),
		selected:  lipgloss.NewStyle().Reverse(true),
		dim:       lipgloss.NewStyle().Faint(true),
		alarm:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#B00000", Dark: "#FF5F5F"}),
		danger:    lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#B00000", Dark: "#FF5F5F"}),
		gaugeUsed: lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#005F87", Dark: "#5FAFFF"}),
		marker:    lipgloss.NewStyle().Bold(true),
	}
}

// View draws the screen.
func (m *Model) View() string {
	st := newStyles()
	if !m.loaded {
		if m.err != nil {
			return st.alarm.Render("procwalk top: "+m.cfg.Escape(m.err.Error())) + "\n"
		}
		return "procwalk top: reading /proc ...\n"
	}
	var b strings.Builder
	for _, line := range m.header(st) {
		b.WriteString(fit(line, m.width) + "\n")
	}
	if m.help {
		b.WriteString(m.helpText(st))
		return b.String()
	}
	widths := layout(m.shownColumns(), m.width)
	b.WriteString(st.head.Render(fit(m.titles(widths), m.width)) + "\n")
	h := m.tableHeight()
	for i := m.offset; i < min(m.offset+h, len(m.rows)); i++ {
		r := &m.rows[i]
		line := fit(m.line(r, widths), m.width)
		switch {
		case i == m.cursor:
			line = st.selected.Render(padRight(line, m.width))
		case r.isDim():
			line = st.dim.Render(line)
		}
		b.WriteString(line + "\n")
	}
	blank := h - max(len(m.rows)-m.offset, 0)
	if m.pending && blank > 0 {
		b.WriteString(st.dim.Render("gathering sessions ...") + "\n")
		blank--
	}
	for range blank {
		b.WriteString("\n")
	}
	b.WriteString(m.statusLine(st))
	return b.String()
}

// header is the host line, the memory line and the gauges of the home
// cgroup.
func (m *Model) header(st styles) []string {
	f := m.frame
	sys := f.System
	host, _ := os.Hostname()
	host = m.cfg.Escape(host)
	if st, ok := m.src.(Stepper); ok {
		host = "replay " + st.Position() // escaped by the Stepper
	}
	line1 := fmt.Sprintf("procwalk top  %s  %d processes, %d sessions  %d CPUs", host, len(f.Snapshot.Procs), len(f.Sessions), f.Snapshot.Host.CPUs)
	if sys.HaveLoad {
		line1 += fmt.Sprintf("  load %.2f %.2f %.2f", sys.Load1, sys.Load5, sys.Load15)
	}
	line2 := "mem ?"
	if sys.HaveMemory {
		used := sys.MemTotalBytes - min(sys.MemAvailableBytes, sys.MemTotalBytes)
		line2 = fmt.Sprintf("mem %s used of %s (%s available)  swap %s of %s",
			procwalk.FormatBytes(used), procwalk.FormatBytes(sys.MemTotalBytes), procwalk.FormatBytes(sys.MemAvailableBytes),
			procwalk.FormatBytes(sys.SwapTotalBytes-min(sys.SwapFreeBytes, sys.SwapTotalBytes)), procwalk.FormatBytes(sys.SwapTotalBytes))
	}
	if len(sys.Pressure) > 0 {
		keys := make([]string, 0, len(sys.Pressure))
		for k := range sys.Pressure {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		line2 += "  PSI"
		for _, k := range keys {
			line2 += fmt.Sprintf(" %s %.1f%%", k, sys.Pressure[k])
		}
	}
	if m.err != nil {
		line2 = st.alarm.Render("refresh failed: " + m.cfg.Escape(m.err.Error()))
	}
	return []string{st.title.Render(line1), line2, m.gauges(st)}
}

// gauges draws the home cgroup's memory against its limit, with the
// danger threshold marked, and its CPU against its quota.
func (m *Model) gauges(st styles) string {
	s := m.frame.Home
	if s == nil || s.Totals.Cgroup == nil {
		return "cgroup: none with a limit (run inside a cgroup or pod with memory.max set)"
	}
	u := s.Totals.Cgroup
	line := "cgroup " + m.cfg.Escape(s.Name)
	if u.MemoryLimitBytes > 0 && u.HaveMemoryUsage {
		const width = 20
		line += " mem " + gauge(st, u.MemoryPercent, m.cfg.DangerPercent, width) +
			fmt.Sprintf(" %.0f%% of %s (members RSS %s)", u.MemoryPercent, procwalk.FormatBytes(u.MemoryLimitBytes), procwalk.FormatBytes(s.Totals.RSSBytes))
	} else {
		line += fmt.Sprintf(" mem no limit (members RSS %s)", procwalk.FormatBytes(s.Totals.RSSBytes))
	}
	if u.CPUQuotaCores > 0 {
		line += fmt.Sprintf("  cpu %.2f of %.2f cores", u.CPUCoresUsed, u.CPUQuotaCores)
	}
	if u.MemoryPercent >= m.cfg.DangerPercent {
		line += " " + st.alarm.Render("DANGER")
	}
	return line
}

// gauge is a bar of width cells filled to percent, "|" at the danger
// threshold, in the danger colour from the threshold on.
func gauge(st styles, percent, danger float64, width int) string {
	fill := int(percent / 100 * float64(width))
	mark := int(danger / 100 * float64(width))
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < width; i++ {
		cell := "·"
		if i < fill {
			cell = "#"
		}
		switch {
		case i == mark:
			b.WriteString(st.marker.Render("|"))
		case i < fill && i >= mark:
			b.WriteString(st.danger.Render(cell))
		case i < fill:
			b.WriteString(st.gaugeUsed.Render(cell))
		default:
			b.WriteString(cell)
		}
	}
	b.WriteString("]")
	return b.String()
}

// layout gives each column its width for a terminal width cells wide:
// columns are dropped, lowest keep first, until the rest fit with the flex
// column at least its own width; the flex column takes what is left.
// A dropped column has width 0.
func layout(cols []column, width int) []int {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = c.width
	}
	need := func() int {
		n := 0
		for _, w := range widths {
			if w > 0 {
				n += w + 1
			}
		}
		return n
	}
	for need() > width {
		drop := -1
		for i, c := range cols {
			if widths[i] > 0 && !c.flex && (drop < 0 || c.keep < cols[drop].keep) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		widths[drop] = 0
	}
	for i, c := range cols {
		if c.flex && widths[i] > 0 {
			widths[i] += max(width-need(), 0)
		}
	}
	return widths
}

// shownColumns are the view's columns, the one sorted by kept on screen
// however narrow the terminal.
func (m *Model) shownColumns() []column {
	cols := m.cols
	if m.view == viewProcesses || m.view == viewSessions {
		cols = append([]column(nil), m.cols...)
		cols[m.sortCol[m.view]].keep = 100
	}
	return cols
}

// titles is the table's heading; the sorted column carries an arrow.
func (m *Model) titles(widths []int) string {
	cells := make([]string, len(m.cols))
	sorted := -1
	if m.view == viewProcesses || m.view == viewSessions {
		sorted = m.sortCol[m.view]
	}
	for i, c := range m.cols {
		t := c.title
		if i == sorted {
			if m.reverse {
				t += "↑"
			} else {
				t += "↓"
			}
		}
		cells[i] = t
	}
	return joinCells(m.cols, cells, widths)
}

// line is one row's text; tree views indent the name column.
func (m *Model) line(r *row, widths []int) string {
	cells := r.text()
	if m.view == viewTree || m.view == viewMembers {
		cells = append([]string(nil), cells...)
		mark := "  "
		if r.kids && r.folded {
			mark = "+ "
		} else if r.kids {
			mark = "- "
		}
		cells[len(cells)-1] = strings.Repeat("  ", r.depth) + mark + cells[len(cells)-1]
	}
	return joinCells(m.cols, cells, widths)
}

// joinCells lays cells out in their widths, cutting what is too long.
func joinCells(cols []column, cells []string, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		w := widths[i]
		if w == 0 {
			continue
		}
		cell := truncate(cells[i], w)
		if c.right {
			cell = padLeft(cell, w)
		} else if !c.flex {
			cell = padRight(cell, w)
		}
		b.WriteString(cell)
		b.WriteString(" ")
	}
	return strings.TrimRight(b.String(), " ")
}

func padLeft(s string, w int) string {
	n := len(s)
	if !printableASCII(s) {
		n = runewidth.StringWidth(s)
	}
	return strings.Repeat(" ", max(w-n, 0)) + s
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(w-width(s), 0))
}

// fit cuts a line to the terminal's width.
func fit(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if strings.Contains(s, "\x1b") {
		// Styled: lipgloss cuts without breaking escape sequences.
		return lipgloss.NewStyle().MaxWidth(w).Render(s)
	}
	return truncate(s, w)
}

// width is the cells s takes on a terminal, escape sequences not counted.
// Most of what top draws is printable ASCII, a cell a byte: measured so
// without segmenting graphemes, the rest by lipgloss.
func width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return lipgloss.Width(s)
}

// truncate cuts s to w cells, "…" marking the cut; a command line of a
// few kilobytes is cut without measuring all of it when it is ASCII.
func truncate(s string, w int) string {
	if printableASCII(s) {
		if len(s) <= w {
			return s
		}
		if w < 1 {
			return ""
		}
		return s[:w-1] + "…"
	}
	return runewidth.Truncate(s, w, "…")
}

// printableASCII reports whether s is printable ASCII alone (no control
// byte, no escape sequence).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// statusLine is the question, the warning, the last result, the filter
// or the key hints.
func (m *Model) statusLine(st styles) string {
	var s string
	switch {
	case m.confirm != nil && m.confirm.warning != "":
		s = st.alarm.Render(fit(m.confirm.warning+" "+m.confirm.prompt, m.width))
	case m.confirm != nil:
		s = st.title.Render(fit(m.confirm.prompt, m.width))
	case m.editing:
		s = fit("filter: "+m.filter+"▏ (Enter keeps it, Esc clears it)", m.width)
	case m.status != "" && m.alarm:
		s = st.alarm.Render(fit(m.status, m.width))
	case m.status != "":
		s = fit(m.status, m.width)
	default:
		where := map[view]string{viewProcesses: "processes", viewSessions: "sessions", viewTree: "tree", viewMembers: "members of " + m.cfg.Escape(m.member)}[m.view]
		s = where
		if m.filter != "" {
			s += ", filter \"" + m.cfg.Escape(m.filter) + "\""
		}
		s = fit(fmt.Sprintf("%s (%d)  q quit  ? keys  Tab view  s sort  / filter  k kill", s, len(m.rows)), m.width)
	}
	return s
}

// helpText lists the keys in place of the table.
func (m *Model) helpText(st styles) string {
	var b strings.Builder
	b.WriteString(st.title.Render("keys") + "\n")
	for _, k := range keyHelp() {
		b.WriteString(fit(fmt.Sprintf("  %-24s %s", k[0], k[1]), m.width) + "\n")
	}
	b.WriteString("\nSystem processes (protected from kills) are dimmed. Any key closes this.\n")
	return b.String()
}
