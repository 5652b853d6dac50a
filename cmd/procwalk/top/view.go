//go:build linux

package top

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// view.go draws the screen: three header lines, the table, a status line.

// headerLines is the number of lines above the table.
const headerLines = 4

// styles are the view's attributes and colours. The colours are the
// terminal's own red and blue, which its palette makes readable on its
// background: the view asks the terminal nothing. Bubble Tea's renderer
// drops what the terminal's colour profile lacks (every colour under
// NO_COLOR, everything on TERM=dumb).
type styles struct {
	title, selected, dim, alarm, danger, gaugeUsed, marker, head style
}

// style is an SGR style (bold, reverse, a colour ...).
type style struct{ sgr ansi.Style }

// Render wraps s in the style, ending with a reset.
func (st style) Render(s string) string { return st.sgr.Styled(s) }

// newStyles are the view's styles; plain ones (text alone) when plain.
func newStyles(plain bool) styles {
	s := func(a ...ansi.Attr) style {
		if plain {
			return style{}
		}
		return style{ansi.NewStyle(a...)}
	}
	return styles{
		title:     s(ansi.AttrBold),
		head:      s(ansi.AttrBold, ansi.AttrReverse),
		selected:  s(ansi.AttrReverse),
		dim:       s(ansi.AttrFaint),
		alarm:     s(ansi.AttrBold, ansi.AttrRedForegroundColor),
		danger:    s(ansi.AttrRedForegroundColor),
		gaugeUsed: s(ansi.AttrBlueForegroundColor),
		marker:    s(ansi.AttrBold),
	}
}

// View is the screen for Bubble Tea: the full-screen (alternate) buffer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Screen())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion // clicks and the wheel (mouse.go)
	return v
}

// Screen draws the screen as text.
func (m *Model) Screen() string {
	s := m.screen()
	if m.cfg.ASCII {
		s = strings.ReplaceAll(s, textwidth.Ellipsis, m.glyphs.cut) // a cut, where no "…" shows
	}
	return s
}

func (m *Model) screen() string {
	st := newStyles(m.plain)
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
	// With a marker, every row keeps its first cell for it.
	lead := ""
	if m.cfg.Marker {
		lead = " "
	}
	widths := layout(m.shownColumns(), m.width-len(lead))
	b.WriteString(st.head.Render(fit(lead+m.titles(widths), m.width)) + "\n")
	h := m.tableHeight()
	for i := m.offset; i < min(m.offset+h, len(m.rows)); i++ {
		r := &m.rows[i]
		if i == m.cursor {
			m.drawn = r.ID()
		}
		mark := lead
		if i == m.cursor && lead != "" {
			mark = m.glyphs.selected
		}
		line := fit(mark+m.line(r, widths), m.width)
		switch {
		case i == m.cursor:
			line = st.selected.Render(padRight(line, m.width))
		case r.Dim():
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

// layout gives each column its width for a terminal width cells wide:
// columns are dropped, lowest keep first, until the rest fit with the flex
// column at least its own width; the flex column takes what is left.
// A dropped column has width 0.
func layout(cols []table.Column, width int) []int {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = c.Width
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
			if widths[i] > 0 && !c.Flex && (drop < 0 || c.Keep < cols[drop].Keep) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		widths[drop] = 0
	}
	for i, c := range cols {
		if c.Flex && widths[i] > 0 {
			widths[i] += max(width-need(), 0)
		}
	}
	return widths
}

// shownColumns are the view's columns, the one sorted by kept on screen
// however narrow the terminal.
// A column with no value in any row on screen ("-" all down) goes first.
func (m *Model) shownColumns() []table.Column {
	cols := append([]table.Column(nil), m.cols...)
	rows := m.rows[min(m.offset, len(m.rows)):min(m.offset+m.tableHeight(), len(m.rows))]
	for c := range cols {
		if cols[c].Alphabetic || cols[c].Flex || len(rows) == 0 {
			continue
		}
		empty := true
		for i := range rows {
			empty = empty && !rows[i].Has(c) && (rows[i].Proc != nil || rows[i].Cells()[c] == render.NotMeasured)
		}
		if empty {
			cols[c].Keep = -1
		}
	}
	if m.view == viewProcesses || m.view == viewSessions || m.view == viewAgents {
		cols[m.sortCol[m.view]].Keep = 100
	}
	return cols
}

// titles is the table's heading; the sorted column carries an arrow.
func (m *Model) titles(widths []int) string {
	cells := make([]string, len(m.cols))
	sorted := -1
	if m.view == viewProcesses || m.view == viewSessions || m.view == viewAgents {
		sorted = m.sortCol[m.view]
	}
	for i, c := range m.cols {
		t := c.Title
		if i == sorted {
			if m.reverse {
				t += m.glyphs.up
			} else {
				t += m.glyphs.down
			}
		}
		cells[i] = t
	}
	return m.joinCells(m.cols, cells, widths)
}

// line is one row's text; tree views indent the name column.
func (m *Model) line(r *table.Row, widths []int) string {
	cells := r.Cells()
	if m.view == viewTree || m.view == viewMembers {
		cells = append([]string(nil), cells...)
		mark := "  "
		if r.Kids && r.Folded {
			mark = m.glyphs.folded + " "
		} else if r.Kids {
			mark = m.glyphs.unfolded + " "
		}
		cells[len(cells)-1] = m.glyphs.treePrefix(r) + mark + cells[len(cells)-1]
	}
	return m.joinCells(m.cols, cells, widths)
}

// joinCells lays cells out in their widths, cutting what is too long. A
// number too wide for its column ("234.0 MiB+" in 9 cells: a partial sum)
// loses its decimals first, so that its unit and mark stay on screen.
func (m *Model) joinCells(cols []table.Column, cells []string, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		w := widths[i]
		if w == 0 {
			continue
		}
		cell := cells[i]
		if c.Right && !c.Alphabetic && width(cell) > w {
			cell = render.Whole(cell)
		}
		cell = m.glyphs.cutTo(cell, w)
		if c.Right {
			cell = padLeft(cell, w)
		} else if !c.Flex {
			cell = padRight(cell, w)
		}
		b.WriteString(cell)
		b.WriteString(" ")
	}
	return strings.TrimRight(b.String(), " ")
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(w-width(s), 0)) + s
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
		// Styled: cut without breaking escape sequences, the styles reset.
		return ansi.TruncateWc(s, w, "") + ansi.ResetStyle
	}
	return truncate(s, w)
}

// width is the cells s takes on a terminal, escape sequences not counted:
// textwidth's rule, wcwidth(3)'s, as Bubble Tea's renderer and tmux place
// characters.
func width(s string) int {
	if strings.IndexByte(s, 0x1b) >= 0 {
		return ansi.StringWidthWc(s)
	}
	return textwidth.Width(s)
}

// truncate cuts s to w cells, "…" marking the cut.
func truncate(s string, w int) string { return textwidth.Cut(s, w) }

// statusLine is the question, the warning, the last result, the filter
// or the key hints.
func (m *Model) statusLine(st styles) string {
	var s string
	switch {
	case m.confirm != nil && m.confirm.warning != "":
		s = st.alarm.Render(fit(m.confirm.warning+" "+m.confirm.prompt, m.width))
	case m.confirm != nil:
		s = st.title.Render(fit(m.confirm.prompt, m.width))
	case m.searching && m.alarm:
		s = st.alarm.Render(fit("search: "+m.cfg.Escape(m.search)+m.glyphs.cursor+" not found (Backspace, Esc cancels)", m.width))
	case m.searching:
		s = fit("search: "+m.cfg.Escape(m.search)+m.glyphs.cursor+" (Enter keeps it, n next, Esc cancels)", m.width)
	case m.editing:
		s = fit("filter: "+m.cfg.Escape(m.filter)+m.glyphs.cursor+" (Enter keeps it, Esc clears it)", m.width)
	case m.status != "" && m.alarm:
		s = st.alarm.Render(fit(m.status, m.width))
	case m.status != "":
		s = fit(m.status, m.width)
	default:
		where := map[view]string{viewProcesses: "processes", viewSessions: "sessions", viewAgents: "agents", viewTree: "tree", viewMembers: "members of " + m.cfg.Escape(m.member)}[m.view]
		s = where
		if m.filter != "" {
			s += ", filter \"" + m.cfg.Escape(m.filter) + "\""
		}
		// Where the selection is: row N of the list.
		at := fmt.Sprintf("%d/%d", min(m.cursor+1, len(m.rows)), len(m.rows))
		s = fit(fmt.Sprintf("%s %s  q quit  ? keys  Tab view  s sort  / search  \\ filter  a agents  k kill", s, at), m.width)
	}
	return s
}

// helpText lists the keys in place of the table.
func (m *Model) helpText(st styles) string {
	var b strings.Builder
	b.WriteString(st.title.Render("keys") + "\n")
	for _, k := range keyHelp() {
		lines := textwidth.Wrap(k[1], max(m.width-27, 20))
		for i, l := range lines {
			key := ""
			if i == 0 {
				key = k[0]
			}
			b.WriteString(fit(fmt.Sprintf("  %-24s %s", key, l), m.width) + "\n")
		}
	}
	b.WriteString("\nSystem processes (protected from kills) are dimmed. Any key closes this.\n")
	return b.String()
}
