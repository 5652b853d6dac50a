//go:build linux

package top

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
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
			return st.alarm.Render("procwalk top: "+procwalk.Printable(m.err.Error())) + "\n"
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
	shown := m.rows[min(m.offset, len(m.rows)):min(m.offset+m.tableHeight(), len(m.rows))]
	cells := make([][]string, len(shown))
	for i := range shown {
		cells[i] = m.cells(&shown[i])
	}
	l := m.layout(cells)
	b.WriteString(st.head.Render(fit(lead+string(l.AppendLine(nil, m.titles())), m.width)) + "\n")
	for i := range shown {
		r := &shown[i]
		selected := m.offset+i == m.cursor
		if selected {
			m.drawn = r.ID()
		}
		mark := lead
		if selected && lead != "" {
			mark = m.glyphs.selected
		}
		line := fit(mark+string(l.AppendLine(nil, cells[i])), m.width)
		switch {
		case selected:
			line = st.selected.Render(padRight(line, m.width))
		case r.Dim():
			line = st.dim.Render(line)
		}
		b.WriteString(line + "\n")
	}
	h := m.tableHeight()
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

// layout lays the table out (render's one layout, columns a blank
// apart) for rows of cells, the rows on screen: the column sorted by stays
// however narrow the terminal, and a column with no value in any of the
// rows ("-" all down) goes first.
func (m *Model) layout(cells [][]string) *render.Layout {
	t := render.Table{Cols: make([]render.Column, len(m.cols)), Rows: cells, Gap: 1}
	shown := m.rows[min(m.offset, len(m.rows)):min(m.offset+m.tableHeight(), len(m.rows))]
	for c, col := range m.cols {
		t.Cols[c] = col.Column
		empty := !col.Alphabetic && c < len(m.cols)-1 && len(shown) > 0
		for i := range shown {
			empty = empty && !shown[i].Has(c) && (shown[i].Proc != nil || shown[i].Cells()[c] == render.NotMeasured)
		}
		if empty {
			t.Cols[c].Drop = -1
		}
	}
	titles := m.titles()
	for c := range t.Cols {
		t.Cols[c].Header = titles[c]
	}
	if c, ok := m.sorted(); ok {
		t.Cols[c].Drop = 100
	}
	width := m.width
	if m.cfg.Marker {
		width--
	}
	return t.Layout(width)
}

// sorted is the column the view is sorted by, if it is sorted.
func (m *Model) sorted() (int, bool) {
	c, ok := m.sortCol[m.view]
	return c, ok && (m.view == viewProcesses || m.view == viewSessions || m.view == viewAgents)
}

// titles are the columns' headers; the sorted column's carries an arrow.
func (m *Model) titles() []string {
	titles := make([]string, len(m.cols))
	sorted, ok := m.sorted()
	for i, c := range m.cols {
		titles[i] = c.Header
		if ok && i == sorted {
			if m.reverse {
				titles[i] += m.glyphs.up
			} else {
				titles[i] += m.glyphs.down
			}
		}
	}
	return titles
}

// cells are r's cells; tree views indent the name column.
func (m *Model) cells(r *table.Row) []string {
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
	return cells
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
	return textwidth.Cut(s, w)
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
		s = st.alarm.Render(fit("search: "+procwalk.Printable(m.search)+m.glyphs.cursor+" not found (Backspace, Esc cancels)", m.width))
	case m.searching:
		s = fit("search: "+procwalk.Printable(m.search)+m.glyphs.cursor+" (Enter keeps it, n next, Esc cancels)", m.width)
	case m.editing:
		s = fit("filter: "+procwalk.Printable(m.filter)+m.glyphs.cursor+" (Enter keeps it, Esc clears it)", m.width)
	case m.status != "" && m.alarm:
		s = st.alarm.Render(fit(m.status, m.width))
	case m.status != "":
		s = fit(m.status, m.width)
	default:
		where := map[view]string{viewProcesses: "processes", viewSessions: "sessions", viewAgents: "agents", viewTree: "tree", viewMembers: "members of " + procwalk.Printable(m.member)}[m.view]
		s = where
		if m.filter != "" {
			s += ", filter \"" + procwalk.Printable(m.filter) + "\""
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
