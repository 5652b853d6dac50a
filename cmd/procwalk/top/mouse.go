//go:build linux

package top

import tea "charm.land/bubbletea/v2"

// mouse.go: a click on a row selects it, a click on a column's title sorts
// by it (again: reverses), the wheel scrolls three rows.

// wheelRows is how far one notch of the wheel moves the selection.
const wheelRows = 3

func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if m.confirm != nil || m.help || !m.loaded {
		return nil
	}
	ms := msg.Mouse()
	switch msg.(type) {
	case tea.MouseWheelMsg:
		switch ms.Button {
		case tea.MouseWheelUp:
			m.cursor -= wheelRows
		case tea.MouseWheelDown:
			m.cursor += wheelRows
		default:
			return nil
		}
	case tea.MouseClickMsg:
		if ms.Button != tea.MouseLeft {
			return nil
		}
		switch y := ms.Y; {
		case y == headerLines:
			m.sortByColumnAt(ms.X)
		case y > headerLines && y <= headerLines+m.tableHeight():
			if i := m.offset + y - headerLines - 1; i < len(m.rows) {
				m.cursor = i
			}
		}
	default:
		return nil
	}
	m.clamp()
	return m.regather()
}

// sortByColumnAt sorts by the column under x of the title row, or
// reverses the order when it is the sorted one.
func (m *Model) sortByColumnAt(x int) {
	if m.view != viewProcesses && m.view != viewSessions && m.view != viewAgents {
		return
	}
	lead := 0
	if m.cfg.Marker {
		lead = 1
	}
	if i := m.layout(nil).ColumnAt(x - lead); i >= 0 && m.cols[i].Sortable {
		if m.sortCol[m.view] == i {
			m.reverse = !m.reverse
		} else {
			m.sortCol[m.view], m.reverse = i, false
		}
		m.top()
		m.refresh()
	}
}
