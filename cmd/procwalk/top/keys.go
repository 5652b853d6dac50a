//go:build linux

package top

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// keyHelp lists the keys, as "?" shows them.
func keyHelp() [][2]string {
	return [][2]string{
		{"q, Ctrl-C", "quit"},
		{"↑ ↓ PgUp PgDn Home End", "move"},
		{"Tab", "processes / sessions / tree"},
		{"Enter", "a session's members (sessions view); fold or unfold (trees)"},
		{"Esc, Backspace", "clear the filter, cancel, back from members"},
		{"s", "sort by the next column"},
		{"S, r", "reverse the order"},
		{"/", "filter by name or command line (Enter keeps it, Esc clears it)"},
		{"k", "kill the selected process (asks y/n)"},
		{"K", "kill the selected session, or the selected process's tree (asks y/n)"},
		{"[ ] { }", "a recording (--replay): the previous, next frame; ten back, on"},
		{"?", "this help"},
	}
}

// key handles one key press. Keys typed faster than the terminal is read
// (or sent by tmux send-keys) arrive as one message of several runes:
// each is a key of its own, "/abc" a slash and then a filter.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	k := msg.String()
	if k == "ctrl+c" {
		return tea.Quit
	}
	if m.confirm == nil && !m.killing {
		m.status, m.alarm = "", false // a message lasts until the next key
	}
	switch {
	case m.confirm != nil:
		return m.answer(k)
	case m.editing:
		m.editFilter(msg)
		return m.regather()
	case m.help:
		m.help = false // any key closes the help
		return nil
	}
	switch k {
	case "q":
		return tea.Quit
	case "?":
		m.help = true
	case "up":
		m.cursor--
	case "down":
		m.cursor++
	case "pgup":
		m.cursor -= m.tableHeight()
	case "pgdown":
		m.cursor += m.tableHeight()
	case "home":
		m.cursor = 0
	case "end":
		m.cursor = len(m.rows) - 1
	case "tab":
		m.switchView()
	case "enter":
		m.enter()
	case "esc", "backspace":
		m.back()
	case "s":
		m.nextSort()
	case "S", "r":
		m.reverse = !m.reverse
		m.refresh()
	case "/":
		m.editing, m.filter = true, ""
		m.refresh()
	case "[", "]", "{", "}":
		return m.step(map[string]int{"[": -1, "]": 1, "{": -10, "}": 10}[k])
	case "k":
		return m.askKill(false)
	case "K":
		return m.askKill(true)
	}
	m.clamp()
	return m.regather()
}

// regather gathers at once when what the screen shows changed (another
// view, sort, filter or page): its rows' owners, command lines and memory
// are read for them, and the next tick is up to an interval away.
func (m *Model) regather() tea.Cmd {
	if m.gathered || m.shownKey() == m.shown {
		return nil
	}
	return m.gather()
}

// editFilter takes a key typed into the filter.
func (m *Model) editFilter(msg tea.KeyMsg) {
	switch msg.Type {
	case tea.KeyEnter:
		m.editing = false
	case tea.KeyEsc:
		m.editing, m.filter = false, ""
	case tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case tea.KeyRunes, tea.KeySpace:
		m.filter += string(msg.Runes)
	}
	m.cursor, m.offset = 0, 0
	m.refresh()
}

// switchView cycles processes, sessions, tree.
func (m *Model) switchView() {
	switch m.view {
	case viewProcesses:
		m.view = viewSessions
	case viewSessions:
		m.view = viewTree
	default:
		m.view = viewProcesses
	}
	m.cursor, m.offset, m.reverse, m.filter = 0, 0, false, ""
	m.refresh()
}

// enter drills into a session, or folds a tree node.
func (m *Model) enter() {
	r := m.selected()
	switch {
	case r == nil:
	case r.sess != nil:
		m.view, m.member = viewMembers, r.sess.Ref()
		m.cursor, m.offset, m.filter = 0, 0, ""
		m.refresh()
	case (m.view == viewTree || m.view == viewMembers) && r.kids:
		m.folded[r.proc.ID] = !m.folded[r.proc.ID]
		m.refresh()
	}
}

// back clears the filter, or leaves a session's members.
func (m *Model) back() {
	switch {
	case m.filter != "":
		m.filter = ""
	case m.view == viewMembers:
		m.view, m.member = viewSessions, ""
	}
	m.refresh()
}

// nextSort moves the sort to the next sortable column of the view.
func (m *Model) nextSort() {
	if m.view == viewTree || m.view == viewMembers {
		m.status, m.alarm = "trees keep their order: Tab to the process list to sort", false
		return
	}
	c := m.sortCol[m.view]
	for range m.cols {
		c = (c + 1) % len(m.cols)
		if m.cols[c].sortable {
			break
		}
	}
	m.sortCol[m.view] = c
	m.refresh()
}

// askKill asks to kill the selected process (tree: its tree, or the
// selected session): y runs it, n or Esc cancels.
func (m *Model) askKill(tree bool) tea.Cmd {
	r := m.selected()
	switch {
	case m.killer == nil:
		m.status, m.alarm = "killing is off in this view", true
		if m.cfg.NoKill != "" {
			m.status = m.cfg.NoKill
		}
		return nil
	case m.killing:
		m.status, m.alarm = "a kill is still running", true
		return nil
	case r == nil:
		return nil
	}
	esc := m.cfg.Escape
	if r.sess != nil {
		s := *r.sess // the frame may change while the question waits
		m.confirm = &confirmation{
			prompt: fmt.Sprintf("kill every process of session %s (%d processes)? y/n", esc(s.Ref()), s.Totals.Procs),
			what:   "session " + esc(s.Ref()),
			do: killCmd(func(ctx context.Context) (string, bool) {
				rep, err := m.killer.KillSession(ctx, &s)
				return reportText(esc, "session "+esc(s.Ref()), rep, err)
			}),
		}
		return nil
	}
	p := r.proc
	id, name := p.ID, esc(p.Name())
	c := &confirmation{}
	if m.killer.Checker()(p) != nil {
		c.warning = "SYSTEM PROCESS, killing it may break the session:"
	}
	if tree {
		c.prompt = fmt.Sprintf("kill pid %d (%s) and all its descendants? y/n", id.PID, name)
		c.what = fmt.Sprintf("the tree of pid %d", id.PID)
		c.do = killCmd(func(ctx context.Context) (string, bool) {
			rep, err := m.killer.KillTree(ctx, id)
			return reportText(esc, fmt.Sprintf("tree of pid %d (%s)", id.PID, name), rep, err)
		})
	} else {
		c.prompt = fmt.Sprintf("kill pid %d (%s)? y/n", id.PID, name)
		c.what = fmt.Sprintf("pid %d", id.PID)
		c.do = killCmd(func(ctx context.Context) (string, bool) {
			return outcomeText(esc, m.killer.Kill(ctx, id))
		})
	}
	m.confirm = c
	return nil
}

// answer takes y or n to a pending kill.
func (m *Model) answer(k string) tea.Cmd {
	c := m.confirm
	switch k {
	case "y", "Y":
		m.confirm = nil
		m.killing = true
		m.status, m.alarm = "terminating "+c.what+" ...", false
		return c.do
	case "n", "N", "esc", "q":
		m.confirm = nil
		m.status, m.alarm = "kill cancelled", false
	}
	return nil
}

// step shows another frame of a recording (a Stepper source): gathered at
// once, not at the next tick.
func (m *Model) step(by int) tea.Cmd {
	st, ok := m.src.(Stepper)
	if !ok {
		m.status = "[ and ] step through a recording: procwalk top --replay FILE"
		return nil
	}
	st.Step(by)
	if m.gathered {
		return nil // the gather under way returns the frame stepped to
	}
	m.shown = "" // what the screen shows changed: the frame
	return m.regather()
}
