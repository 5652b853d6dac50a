//go:build linux

package top

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/procwalk/procwalk/procwalk"
)

// search.go is "/" (and F3): a search that jumps to the next row whose
// name or command line (a session's reference) holds the text, hiding
// nothing, as htop's does; n jumps to the one after. "\" (F4) filters.

// editSearch takes a key typed into the search and jumps as the text grows.
func (m *Model) editSearch(msg tea.KeyPressMsg) {
	var changed bool
	if m.searching, changed = editText(msg, &m.search); m.searching && changed {
		m.jump(m.cursor)
	}
}

// jump selects the first row from index from on (wrapping around) that
// holds the search text; when none does, it says so on the status line
// and sets missed.
func (m *Model) jump(from int) {
	m.missed = false
	if m.search == "" || len(m.rows) == 0 {
		return
	}
	lower := strings.ToLower(m.search)
	for i := range len(m.rows) {
		j := (from + i) % len(m.rows)
		if m.rows[j].Matches(lower) {
			m.cursor = j
			m.clamp()
			return
		}
	}
	m.missed = true
	m.status, m.alarm = m.missText(), true
}

// missText is the status line of a search no row holds.
func (m *Model) missText() string {
	return "search: no row holds \"" + procwalk.Printable(m.search) + "\""
}

// readsCommandLines reports whether the view matches a search in every
// process's command line (plan): the process views.
func (m *Model) readsCommandLines() bool {
	return m.view == viewProcesses || m.view == viewTree
}
