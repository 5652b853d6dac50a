//go:build linux

package top

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// A new order or a cleared filter selects the first row and says where the
// selection is; without, it stayed mid-list on whatever moved there.
func TestSelectionGoesToTheTop(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	press(m, "down", "down", "down", "down")
	if m.cursor != 4 || !strings.Contains(m.Screen(), fmt.Sprintf(" 5/%d ", len(m.rows))) {
		t.Fatalf("cursor %d; status line:\n%s", m.cursor, m.Screen())
	}
	for _, keys := range [][]string{{"s"}, {"r"}, {"S"}, {"\\", "b", "a", "s", "h", "enter", "down", "esc"}} {
		press(m, "down", "down")
		press(m, keys...)
		if m.cursor != 0 || m.offset != 0 {
			t.Errorf("after %v: cursor %d, offset %d; want the first row", keys, m.cursor, m.offset)
		}
	}
}

// The tree view keeps a filter's matches and their ancestors, with
// connectors; a match deep down shows the path to it.
func TestTreeFilterKeepsAncestors(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	press(m, "tab", "tab") // the tree
	if m.view != viewTree {
		t.Fatalf("view %v", m.view)
	}
	all := len(m.rows)
	press(m, "\\", "c", "c", "1", "enter")
	// cc1 (111) under make (110) under bash (101) under tmux (100) under init (1).
	if got := fmt.Sprint(pids(m)); got != "[1 100 101 110 111]" || all <= 5 {
		t.Errorf("tree filtered by cc1: %v (of %d rows)", got, all)
	}
	screen := m.Screen()
	for _, want := range []string{"└─ ", "cc1"} {
		if !strings.Contains(screen, want) {
			t.Errorf("tree lacks %q:\n%s", want, screen)
		}
	}
}

// Under LANG=C the view draws in ASCII: no arrow, gauge cell, connector or
// ellipsis outside ASCII.
func TestASCIIGlyphs(t *testing.T) {
	m, _, _ := newTestModel(t, 80, 30)
	m.cfg.ASCII, m.glyphs = true, glyphSet(true)
	press(m, "tab", "tab")
	m.refresh()
	for i, l := range strings.Split(m.Screen(), "\n") {
		for _, r := range l {
			if r > 0x7e {
				t.Errorf("line %d holds %q: %q", i, r, l)
				break
			}
		}
	}
	for _, env := range []struct {
		vars  map[string]string
		ascii bool
	}{
		{map[string]string{"LANG": "C"}, true},
		{map[string]string{}, true},
		{map[string]string{"LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LC_CTYPE": "C.utf8"}, false},
	} {
		if got := ASCIILocale(func(k string) string { return env.vars[k] }); got != env.ascii {
			t.Errorf("%v: ASCII %v, want %v", env.vars, got, env.ascii)
		}
	}
}

// Where reverse video does not show (TERM=dumb), the selected row carries
// a marker; the header at 80 columns leaves parts out whole, never cutting
// a number.
func TestMarkerAndHeaderAt80(t *testing.T) {
	m, _, _ := newTestModel(t, 80, 24)
	m.cfg.Marker = true
	press(m, "down")
	lines := strings.Split(m.Screen(), "\n")
	marked := 0
	for _, l := range lines[headerLines+1:] {
		if strings.HasPrefix(l, "\x1b[7m"+m.glyphs.selected) {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("%d rows marked, want 1:\n%s", marked, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if w := width(l); w > 80 {
			t.Errorf("a line of %d cells: %q", w, l)
		}
		if strings.Contains(l, textwidth.Ellipsis) && strings.Contains(l, "procwalk top") {
			t.Errorf("the header was cut: %q", l)
		}
	}
}

// The parts of a header line go whole, the least needed first.
func TestFitParts(t *testing.T) {
	parts := []render.Part{newPart("procwalk top", 10), newPart("myhost", 3), newPart("2471 processes", 9), newPart("load 22.00 16.66 7.26", 7)}
	for _, tt := range []struct {
		w    int
		want string
	}{
		{80, "procwalk top  myhost  2471 processes  load 22.00 16.66 7.26"},
		{51, "procwalk top  2471 processes  load 22.00 16.66 7.26"},
		{30, "procwalk top  2471 processes"},
		{8, "procwal…"},
	} {
		if got := fitParts(parts, tt.w); got != tt.want {
			t.Errorf("width %d: %q, want %q", tt.w, got, tt.want)
		}
	}
}

// The gauge's danger mark sits between two cells, hiding none: 20 cells of
// fill or space and the mark, whatever the fill.
func TestGaugeMarkHidesNoCell(t *testing.T) {
	m, _, _ := newTestModel(t, 80, 24)
	st := newStyles(true)
	for _, pct := range []float64{0, 50, 79, 80, 81, 100} {
		g := m.gauge(st, pct)
		inner := strings.TrimSuffix(strings.TrimPrefix(g, "["), "]")
		cells := strings.Count(inner, m.glyphs.full) + strings.Count(inner, m.glyphs.empty)
		if cells != gaugeCells || strings.Count(inner, m.glyphs.mark) != 1 {
			t.Errorf("%.0f%%: %q has %d cells and %d marks, want %d and 1", pct, g, cells, strings.Count(inner, m.glyphs.mark), gaugeCells)
		}
		if fill := strings.Count(inner, m.glyphs.full); fill != int(pct/100*gaugeCells) {
			t.Errorf("%.0f%%: %d filled, want %d", pct, fill, int(pct/100*gaugeCells))
		}
	}
}

// "/" searches: the selection jumps to the first row holding the text,
// every row stays; n goes to the next; "\" filters.
func TestSearchJumps(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	all := len(m.rows)
	press(m, "/", "b", "a", "s", "h")
	if len(m.rows) != all || m.selected().Proc.Comm != "bash" {
		t.Fatalf("search bash: %d of %d rows, selected %q", len(m.rows), all, m.selected().Proc.Comm)
	}
	first := m.cursor
	press(m, "enter", "n")
	if m.cursor == first || m.selected().Proc.Comm != "bash" {
		t.Errorf("n: cursor %d (was %d) on %q; want the other bash", m.cursor, first, m.selected().Proc.Comm)
	}
	press(m, "n")
	if m.cursor != first {
		t.Errorf("n wraps around: cursor %d, want %d", m.cursor, first)
	}
	press(m, "/", "z", "z", "z")
	if !m.alarm || !strings.Contains(m.status, `no row holds "zzz"`) {
		t.Errorf("not found: status %q", m.status)
	}
	// Backspace takes a character off, the search goes on; Esc ends it
	// and clears it.
	press(m, "backspace", "backspace", "backspace", "m", "a", "k", "e")
	if sel := m.selected(); !m.searching || m.search != "make" || sel == nil || sel.Proc == nil || sel.Proc.Comm != "make" {
		t.Fatalf("zzz, three backspaces, make: searching %v %q, selected %+v", m.searching, m.search, sel)
	}
	press(m, "esc")
	if m.searching || m.search != "" {
		t.Errorf("esc: searching %v %q", m.searching, m.search)
	}
}

// A search finds a row by a command line off screen: the next gather reads
// every process's command line for it, as for the filter (it found only
// rows on screen and names: "http.server" is pid 120's command line alone,
// the 7th row, below a 10-line screen).
func TestSearchReadsCommandLinesOffScreen(t *testing.T) {
	m, _, _ := newTestModel(t, 80, 10)
	if n := m.tableHeight(); n >= 7 {
		t.Fatalf("%d rows on screen: pid 120 must be below them", n)
	}
	press(m, "/")
	for _, k := range "http.server" {
		press(m, string(k))
	}
	if sel := m.selected(); sel == nil || sel.Proc == nil || sel.Proc.ID.PID != 120 || m.alarm {
		t.Fatalf("search http.server: selected %+v, status %q", sel, m.status)
	}
	if !strings.Contains(m.Screen(), "    120 ") {
		t.Errorf("the row found is not on screen:\n%s", m.Screen())
	}
}

// A search kept with Enter stops reading every command line, refresh after
// refresh (each read takes the target's memory map lock); n reads them
// once more when no row on hand holds the text.
func TestKeptSearchReadsCommandLinesOnlyWhenSought(t *testing.T) {
	m, src, _ := newTestModel(t, 80, 10)
	press(m, "/")
	for _, k := range "http.server" {
		press(m, string(k))
	}
	if src.need.Every&procwalk.FieldCmdline == 0 {
		t.Fatalf("typing a search: the gather read no command lines (need %+v)", src.need)
	}
	press(m, "enter", "home")
	drain(m, m.gather()) // a refresh
	if src.need.Every&procwalk.FieldCmdline != 0 {
		t.Fatalf("a kept search still reads every command line (need %+v)", src.need)
	}
	if sel := m.selected(); sel == nil || sel.Proc == nil || sel.Proc.ID.PID == 120 {
		t.Fatalf("home: selected %+v", sel)
	}
	press(m, "n")
	if sel := m.selected(); sel == nil || sel.Proc == nil || sel.Proc.ID.PID != 120 || m.alarm {
		t.Fatalf("n: selected %+v, status %q", sel, m.status)
	}
	drain(m, m.gather())
	if src.need.Every&procwalk.FieldCmdline != 0 {
		t.Fatalf("after n found its row, refreshes still read every command line (need %+v)", src.need)
	}
}

// A search no row holds looks again in a frame with every command line,
// leaving another message on the status line (a kill's) as it is; in the
// sessions view, which reads no command lines for it, n asks for none.
func TestSearchMissKeepsOtherMessages(t *testing.T) {
	m, src, _ := newTestModel(t, 80, 10)
	press(m, "/", "z", "z", "q")
	if !strings.HasPrefix(m.status, "search: no row holds") {
		t.Fatalf("search zzq: status %q", m.status)
	}
	m.Update(killDone{"pid 9 refused: protected", true})
	drain(m, m.gather())
	if m.status != "pid 9 refused: protected" || !m.alarm {
		t.Errorf("a frame read for the search replaced the kill's message: status %q", m.status)
	}
	press(m, "esc", "tab", "/", "z", "z", "q", "enter", "n")
	if m.view != viewSessions || m.seeking {
		t.Errorf("view %v: n asks to read every command line (seeking %v)", m.view, m.seeking)
	}
	drain(m, m.gather())
	if src.need.Every&procwalk.FieldCmdline != 0 {
		t.Errorf("the sessions view read every command line for a search (need %+v)", src.need)
	}
}

// A click selects a row, a click on a title sorts by its column (again:
// the other way), the wheel scrolls.
func TestMouse(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	click := func(x, y int) { drain(m, m.mouse(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})) }
	click(5, headerLines+1+3)
	if m.cursor != 3 {
		t.Errorf("click on the 4th row: cursor %d", m.cursor)
	}
	drain(m, m.mouse(tea.MouseWheelMsg{X: 5, Y: 10, Button: tea.MouseWheelDown}))
	if m.cursor != 3+wheelRows {
		t.Errorf("wheel down: cursor %d, want %d", m.cursor, 3+wheelRows)
	}
	// RSS's title: PID(7) USER(8) NAME(15) CPU%(5) USS(9) PSS(9) then RSS.
	x := 7 + 1 + 8 + 1 + 15 + 1 + 5 + 1 + 9 + 1 + 9 + 1 + 2
	click(x, headerLines)
	if c := m.cols[m.sortCol[viewProcesses]]; c.Header != "RSS" || m.reverse || m.cursor != 0 {
		t.Errorf("click on RSS: sorted by %s, reverse %v, cursor %d", c.Header, m.reverse, m.cursor)
	}
	click(x, headerLines)
	if !m.reverse {
		t.Error("a second click did not reverse")
	}
}

// k acts on the row the screen showed selected, even when a refresh put
// another under the cursor since; a refusal names no flag the view lacks.
func TestKillWhatTheScreenShowed(t *testing.T) {
	m, _, k := newTestModel(t, 120, 40)
	press(m, "\\", "c", "c", "1", "enter")
	m.Screen() // cc1 drawn selected
	shown := m.selected().Proc.ID.PID
	m.filter = "" // a refresh with every row: cc1 is no longer first
	m.refresh()
	m.cursor = 0
	m.Update(tea.KeyPressMsg{Code: 'k', Text: "k"}) // before the next screen is drawn
	press(m, "y")
	if len(k.calls) != 1 || k.calls[0] != fmt.Sprintf("kill %d", shown) {
		t.Errorf("calls %v, want kill %d (the row drawn)", k.calls, shown)
	}
	if got := viewHint("pid 1 (init) is protected: it matches x; kill --force overrides the protected list"); strings.Contains(got, "kill --force overrides") {
		t.Errorf("the refusal still offers --force as the view's: %q", got)
	}
}

// The fourth header line: a meter per CPU (the fixture's four) and the
// selected row's CPU and RSS as sparklines, which start again when the
// selection moves.
func TestMetersAndSparklines(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 30)
	for range 3 {
		m.Update(m.gather()())
	}
	line := strings.Split(m.Screen(), "\n")[3]
	cores := strings.Fields(line[strings.Index(line, "CPU ")+4:])[0]
	if n := len([]rune(cores)); n != 4 {
		t.Errorf("%d CPU meters, want 4: %q", n, line)
	}
	sel := m.selected().Proc
	if !strings.Contains(line, fmt.Sprintf("pid %d %s", sel.ID.PID, sel.Name())) || len(m.meters.rss) != 4 { // the first frame and three more
		t.Errorf("no sparklines of the selected pid %d (%d samples): %q", sel.ID.PID, len(m.meters.rss), line)
	}
	press(m, "down")
	m.Update(m.gather()())
	if len(m.meters.rss) != 1 {
		t.Errorf("the history did not start again: %d samples", len(m.meters.rss))
	}
	// A CPU's meter: 0 to 100 % over the glyphs.
	g := glyphSet(false)
	if got := g.sparkline([]float64{0, 50, 100}, 100); got != "▁▅█" {
		t.Errorf("meters %q", got)
	}
}

// The kill's question picks the first signal: y the safe TERM, a digit
// another (the grace and KILL follow it all the same), n none.
func TestSignalPicker(t *testing.T) {
	m, _, k := newTestModel(t, 120, 40)
	press(m, "\\", "c", "c", "1", "enter")
	for _, tt := range []struct{ key, want string }{{"1", "kill 111 HUP"}, {"2", "kill 111 INT"}, {"9", "kill 111 KILL"}, {"y", "kill 111"}} {
		press(m, "k")
		if !strings.Contains(m.Screen(), signalChoices) {
			t.Fatalf("the question lacks the choices:\n%s", m.Screen())
		}
		press(m, tt.key)
		if got := k.calls[len(k.calls)-1]; got != tt.want {
			t.Errorf("k %s: %q, want %q", tt.key, got, tt.want)
		}
	}
	n := len(k.calls)
	press(m, "k", "x", "n")
	if len(k.calls) != n {
		t.Errorf("x or n killed: %v", k.calls[n:])
	}
}

// At 80 columns a column with no value on screen goes before the others.
func TestEmptyColumnsGoFirst(t *testing.T) {
	m, _, _ := newTestModel(t, 80, 24)
	l := m.layout(nil)
	// The fixture has no rates: CPU% is "-" on every row, yet sorted by
	// (kept); USS+, READ/s and WRITE/s, "-" too, go.
	for _, c := range []int{table.ColGrowth, table.ColRead, table.ColWrite} {
		if l.Width(c) != 0 {
			t.Errorf("%s, empty, kept at %d cells", m.cols[c].Header, l.Width(c))
		}
	}
	if l.Width(table.ColCPU) == 0 {
		t.Error("the sorted column went")
	}
}
