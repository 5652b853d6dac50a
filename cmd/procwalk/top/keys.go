//go:build linux

package top

import (
	"context"
	"fmt"
	"syscall"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// keyHelp lists the keys, as "?" shows them.
func keyHelp() [][2]string {
	return [][2]string{
		{"q, Ctrl-C", "quit"},
		{"↑ ↓ PgUp PgDn Home End", "move"},
		{"Tab", "processes / sessions / tree"},
		{"a", "AI agents alone: status, model, context, tmux pane (again: every session)"},
		{"g", "switch tmux to the selected agent's or tmux session's pane"},
		{"Enter", "a session's members (sessions view); fold or unfold (trees)"},
		{"Esc, Backspace", "clear the filter, cancel, back from members"},
		{"s", "sort by the next column"},
		{"S, r", "reverse the order"},
		{"/, F3", "search: jump to the next row whose name or command line holds the text (Enter keeps it, n the next one)"},
		{"\\, F4", "filter: show only the rows whose name or command line holds the text (Enter keeps it, Esc clears it)"},
		{"k", "kill the selected process (asks y/n)"},
		{"K", "kill the selected session, or the selected process's tree (asks y/n)"},
		{"[ ] { }", "a recording (--replay): the previous, next frame; ten back, on"},
		{"?", "this help"},
		{"USS+", "USS growth per minute (uss_growth_bytes_per_minute): the slope of a least-squares line through the last minute's samples (one every 4 s at most), so a fork and reap reads flat; \"-\" before two samples a second apart"},
	}
}

// key handles one key press. Keys typed faster than the terminal is read
// (or sent by tmux send-keys) arrive as one message of several runes:
// each is a key of its own, "/abc" a slash and then a filter.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if utf8.RuneCountInString(msg.Text) > 1 {
		var cmds []tea.Cmd
		for _, r := range msg.Text {
			cmds = append(cmds, m.key(tea.KeyPressMsg{Code: r, Text: string(r), Mod: msg.Mod}))
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
	case m.searching:
		m.editSearch(msg)
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
		m.top() // a new order: its first row, as htop does
		m.refresh()
	case "/", "f3":
		m.searching, m.search = true, ""
	case "n":
		m.jump(m.cursor + 1)
		m.seeking = m.missed && m.readsCommandLines() // none in the rows on hand: look in every command line
		return m.regather()
	case "\\", "f4":
		m.editing, m.filter = true, ""
		m.top()
		m.refresh()
	case "a":
		m.agents()
	case "g":
		m.switchTmux()
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
func (m *Model) editFilter(msg tea.KeyPressMsg) {
	m.editing, _ = editText(msg, &m.filter)
	m.cursor, m.offset = 0, 0
	m.refresh()
}

// editText takes a key typed into a line of text (the filter, the
// search): Enter ends the typing, Esc ends it and clears the text,
// Backspace takes the last character off, a key with text adds it. typing
// says whether the typing goes on, changed whether the text changed.
func editText(msg tea.KeyPressMsg, text *string) (typing, changed bool) {
	switch {
	case msg.Code == tea.KeyEnter:
		return false, false
	case msg.Code == tea.KeyEscape:
		*text = ""
		return false, true
	case msg.Code == tea.KeyBackspace:
		if r := []rune(*text); len(r) > 0 {
			*text = string(r[:len(r)-1])
		}
		return true, true
	case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
		*text += msg.Text
		return true, true
	}
	return true, false
}

// top selects the first row: after the order or the rows changed, the
// selection would otherwise stay mid-list on whatever moved there.
func (m *Model) top() { m.cursor, m.offset, m.reset = 0, 0, true }

// agents shows the agents alone, or (from there) every session.
func (m *Model) agents() {
	if m.view == viewAgents {
		m.view = viewSessions
	} else {
		m.view = viewAgents
	}
	m.reverse, m.filter = false, ""
	m.top()
	m.refresh()
}

// switchTmux switches the tmux client to the selected agent's or tmux
// session's pane.
func (m *Model) switchTmux() {
	target := m.selected().TmuxTarget()
	switch {
	case target == "":
		m.status, m.alarm = "g switches tmux to an agent's or a tmux session's pane: select one (a shows the agents)", true
	case m.cfg.SwitchTmux == nil:
		m.status, m.alarm = "not inside tmux: tmux attach -t "+procwalk.Printable(target)+" goes there", true
	default:
		if err := m.cfg.SwitchTmux(target); err != nil {
			m.status, m.alarm = "tmux switch-client -t "+procwalk.Printable(target)+": "+procwalk.Printable(err.Error()), true
		} else {
			m.status, m.alarm = "switched tmux to "+procwalk.Printable(target), false
		}
	}
}

// switchView cycles processes, sessions, tree.
func (m *Model) switchView() {
	switch m.view {
	case viewProcesses:
		m.view = viewSessions
	case viewSessions, viewAgents:
		m.view = viewTree
	default:
		m.view = viewProcesses
	}
	m.reverse, m.filter = false, ""
	m.top()
	m.refresh()
}

// enter drills into a session, or folds a tree node.
func (m *Model) enter() {
	r := m.selected()
	switch {
	case r == nil:
	case r.Session != nil:
		m.view, m.member, m.from = viewMembers, r.Session.Ref(), m.view
		m.filter = ""
		m.top()
		m.refresh()
	case (m.view == viewTree || m.view == viewMembers) && r.Kids:
		m.folded[r.Proc.ID] = !m.folded[r.Proc.ID]
		m.refresh()
	}
}

// back clears the filter, or leaves a session's members.
func (m *Model) back() {
	switch {
	case m.filter != "":
		m.filter = ""
		m.top()
	case m.view == viewMembers:
		m.view, m.member = m.from, ""
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
		if m.cols[c].Sortable {
			break
		}
	}
	m.sortCol[m.view] = c
	m.top()
	m.refresh()
}

// askKill asks to kill the selected process (tree: its tree, or the
// selected session): y runs it, n or Esc cancels.
func (m *Model) askKill(tree bool) tea.Cmd {
	// The row the screen shows selected: a refresh since may have put
	// another under the cursor.
	r := m.drawnRow()
	if m.drawn == (table.ID{}) {
		r = m.selected() // nothing drawn yet (a test, --once)
	} else if r == nil && m.selected() != nil {
		m.status, m.alarm = "the selected row is gone since the screen was drawn: select again", true
		return nil
	}
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
	esc := procwalk.Printable
	if r.Session != nil {
		s := *r.Session // the frame may change while the question waits
		m.confirm = &confirmation{
			prompt: fmt.Sprintf("kill every process of session %s (%d processes)? %s", esc(s.Ref()), s.Totals.Procs, signalChoices),
			what:   "session " + esc(s.Ref()),
			do: func(sig syscall.Signal) tea.Cmd {
				return killCmd(func(ctx context.Context) (string, bool) {
					rep, err := m.killer.KillSession(ctx, &s, sig)
					return reportText("session "+esc(s.Ref()), rep, err)
				})
			},
		}
		return nil
	}
	p := r.Proc
	id, name := p.ID, esc(p.Name())
	c := &confirmation{}
	if m.killer.Checker()(p) != nil {
		c.warning = "SYSTEM PROCESS, killing it may break the session:"
	}
	if tree {
		c.prompt = fmt.Sprintf("kill pid %d (%s) and all its descendants? %s", id.PID, name, signalChoices)
		c.what = fmt.Sprintf("the tree of pid %d", id.PID)
		c.do = func(sig syscall.Signal) tea.Cmd {
			return killCmd(func(ctx context.Context) (string, bool) {
				rep, err := m.killer.KillTree(ctx, id, sig)
				return reportText(fmt.Sprintf("tree of pid %d (%s)", id.PID, name), rep, err)
			})
		}
	} else {
		c.prompt = fmt.Sprintf("kill pid %d (%s)? %s", id.PID, name, signalChoices)
		c.what = fmt.Sprintf("pid %d", id.PID)
		c.do = func(sig syscall.Signal) tea.Cmd {
			return killCmd(func(ctx context.Context) (string, bool) {
				return outcomeText(m.killer.Kill(ctx, id, sig))
			})
		}
	}
	m.confirm = c
	return nil
}

// signalChoices are the answers a kill's question takes: y for the safe
// kill's TERM, a digit for another first signal (the grace and then KILL
// follow it just the same), n for no.
const signalChoices = "y TERM  1 HUP  2 INT  3 QUIT  9 KILL  n no"

// pickedSignal is the first signal an answer asks for; ok is false for
// any other key.
func pickedSignal(k string) (syscall.Signal, bool) {
	switch k {
	case "y", "Y":
		return syscall.SIGTERM, true
	case "1", "2", "3", "9": // the signal's number: HUP, INT, QUIT, KILL
		sig, err := kill.ParseSignal(k)
		return sig, err == nil
	}
	return 0, false
}

// answer takes y or n to a pending kill.
func (m *Model) answer(k string) tea.Cmd {
	c := m.confirm
	if sig, ok := pickedSignal(k); ok {
		m.confirm = nil
		m.killing = true
		m.status, m.alarm = "terminating "+c.what+" ("+kill.SignalName(sig)+" first) ...", false
		return c.do(sig)
	}
	switch k {
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
