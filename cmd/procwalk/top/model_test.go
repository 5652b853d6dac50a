//go:build linux

package top

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

const fixtureProc = "../../../procwalk/testdata/proc"

// fixtureSource gathers the fixture /proc with sid and user sessions,
// recording what it was asked to read. Its frames are kept (a test
// compares frames); its clock steps a second a gather.
type fixtureSource struct {
	pipeline *frame.Pipeline
	need     Need
	more     int // processes ReadMore was asked for, last time
	fields   procwalk.Fields
}

func newFixtureSource(t *testing.T) *fixtureSource {
	return newFixtureSourceAt(t, fixtureProc)
}

func newFixtureSourceAt(t *testing.T, root string) *fixtureSource {
	t.Helper()
	fs, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindSID, session.KindUser}})
	if err != nil {
		t.Fatal(err)
	}
	p := frame.New(fs, frame.Config{Grouper: g, System: true, Memory: frame.Memory{Retention: frame.KeepAll},
		Clock: &stepClock{t: time.Unix(1700000000+86400, 0), step: time.Second}})
	return &fixtureSource{pipeline: p}
}

// stepClock reads t, then t+step, t+2*step ... one step per call.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

func (s *fixtureSource) Gather(need Need, shown func(Frame)) (Frame, error) {
	s.need = need
	s.pipeline.SetFields(need.Every)
	f, err := s.pipeline.Gather()
	if err != nil {
		return Frame{}, err
	}
	tf := Frame{Frame: f.WithReader(recordingReader{s, f})}
	if shown != nil {
		shown(tf)
	}
	return tf, nil
}

// recordingReader reads more of a frame, recording what it was asked.
type recordingReader struct {
	s *fixtureSource
	f frame.Frame
}

func (r recordingReader) ReadMore(procs []*procwalk.Process, f procwalk.Fields) error {
	r.s.more, r.s.fields = len(procs), f
	return r.f.ReadMore(procs, f)
}

// fakeKiller records kills and answers as the engine would, signalling
// nothing: systemd is protected.
type fakeKiller struct{ calls []string }

func (k *fakeKiller) Checker() func(p *procwalk.Process) error {
	return func(p *procwalk.Process) error {
		if p.Comm == "systemd" {
			return fmt.Errorf("pid %d (systemd) is protected: %w", p.ID.PID, kill.ErrProtected)
		}
		return nil
	}
}

func (k *fakeKiller) Kill(_ context.Context, id procwalk.ProcID, sig syscall.Signal) kill.Outcome {
	k.calls = append(k.calls, fmt.Sprintf("kill %d", id.PID)+sigSuffix(sig))
	o := kill.Outcome{Target: kill.Target{ID: id, Comm: "x"}, Result: kill.ResultExited, Signals: []syscall.Signal{syscall.SIGTERM}}
	if id.PID == 1 {
		o.Comm, o.Result, o.Err = "systemd", kill.ResultProtected, kill.ErrProtected
	}
	return o
}

func (k *fakeKiller) KillTree(_ context.Context, root procwalk.ProcID, sig syscall.Signal) (*kill.Report, error) {
	k.calls = append(k.calls, fmt.Sprintf("tree %d", root.PID)+sigSuffix(sig))
	return &kill.Report{Outcomes: []kill.Outcome{{Target: kill.Target{ID: root}, Result: kill.ResultExited}}}, nil
}

func (k *fakeKiller) KillSession(_ context.Context, s *session.Session, sig syscall.Signal) (*kill.Report, error) {
	k.calls = append(k.calls, "session "+s.Ref()+sigSuffix(sig))
	return nil, errors.New("refused: holds a protected process")
}

// sigSuffix is a kill's first signal in the fake's record, when not TERM.
func sigSuffix(sig syscall.Signal) string {
	if sig == syscall.SIGTERM {
		return ""
	}
	return " " + kill.SignalName(sig)
}

// newTestModel is a model over the fixture, w × h, after its first frame.
func newTestModel(t *testing.T, w, h int) (*Model, *fixtureSource, *fakeKiller) {
	t.Helper()
	src, k := newFixtureSource(t), &fakeKiller{}
	m := New(Config{}, src, k)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(m.Init()())
	return m, src, k
}

// press sends keys ("down", "s", "/", runes as a string of one key each)
// and runs the commands they return, feeding their messages back, except
// ticks and gathers.
func press(m *Model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "up", "down", "enter", "esc", "tab", "backspace", "pgdown", "pgup", "home", "end":
			msg = tea.KeyPressMsg{Code: map[string]rune{"up": tea.KeyUp, "down": tea.KeyDown, "enter": tea.KeyEnter,
				"esc": tea.KeyEscape, "tab": tea.KeyTab, "backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown,
				"pgup": tea.KeyPgUp, "home": tea.KeyHome, "end": tea.KeyEnd}[k]}
		default:
			r, _ := utf8.DecodeRuneInString(k)
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		m.Screen() // Bubble Tea draws after every message: what k acts on
		_, cmd := m.Update(msg)
		drain(m, cmd)
	}
}

// drain runs cmd as the bubbletea runtime would and feeds the model the
// gathers' frames and the kills' results; ticks are not followed.
func drain(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			drain(m, c)
		}
	case frameMsg, killDone:
		_, next := m.Update(msg)
		if _, tick := msg.(frameMsg); !tick {
			drain(m, next)
		}
	}
}

// pids lists the process rows' pids.
func pids(m *Model) []int {
	var out []int
	for _, r := range m.rows {
		out = append(out, r.Proc.ID.PID)
	}
	return out
}

func TestSortCycleAndReverse(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	// No rates in a fixture: CPU% is absent everywhere; ties go by pid.
	if got := pids(m)[:4]; fmt.Sprint(got) != "[1 100 101 102]" {
		t.Errorf("by CPU%% (absent): %v", got)
	}
	press(m, "s", "s", "s") // USS, PSS, RSS
	if c := m.cols[m.sortCol[viewProcesses]]; c.Header != "RSS" {
		t.Fatalf("three s from CPU%%: sorted by %s, want RSS", c.Header)
	}
	if got := pids(m)[:5]; fmt.Sprint(got) != "[111 120 1 110 100]" {
		t.Errorf("by RSS: %v", got)
	}
	press(m, "r")
	if got := pids(m)[:3]; fmt.Sprint(got) != "[121 200 201]" {
		t.Errorf("by RSS reversed: %v (the zombie's 0 B first)", got)
	}
	if !strings.Contains(m.Screen(), "RSS↑") {
		t.Errorf("the heading does not mark the reversed sort:\n%s", m.Screen())
	}
}

func TestFilter(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 40)
	press(m, "\\bash", "enter") // as a terminal may deliver them: several runes at once
	if got := fmt.Sprint(pids(m)); got != "[101 102]" {
		t.Errorf("filter bash: %v", got)
	}
	if !strings.Contains(m.Screen(), `filter "bash"`) {
		t.Errorf("the status line does not show the filter")
	}
	press(m, "esc")
	if len(m.rows) < 15 {
		t.Errorf("Esc left %d rows, want the filter cleared", len(m.rows))
	}
}

func TestKillAsksFirst(t *testing.T) {
	m, _, k := newTestModel(t, 120, 40)
	press(m, "\\", "c", "c", "1", "enter") // pid 111 alone
	press(m, "k")
	if m.confirm == nil || !strings.Contains(m.Screen(), "kill pid 111 (cc1)? y TERM  1 HUP") {
		t.Fatalf("k did not ask:\n%s", m.Screen())
	}
	press(m, "n")
	if len(k.calls) != 0 || m.status != "kill cancelled" {
		t.Errorf("n: calls %v, status %q", k.calls, m.status)
	}
	press(m, "k", "y")
	if fmt.Sprint(k.calls) != "[kill 111]" || !strings.Contains(m.status, "exited") || m.alarm {
		t.Errorf("k y: calls %v, status %q (alarm %v)", k.calls, m.status, m.alarm)
	}
	press(m, "K", "y")
	if k.calls[len(k.calls)-1] != "tree 111" {
		t.Errorf("K y: calls %v, want the tree of 111", k.calls)
	}
}

func TestKillProtectedWarnsAndShowsRefusal(t *testing.T) {
	m, _, k := newTestModel(t, 120, 40)
	press(m, "\\", "s", "y", "s", "t", "e", "m", "d", "enter")
	if got := fmt.Sprint(pids(m)); got != "[1]" || !m.rows[0].Dim() {
		t.Fatalf("systemd row: %v, dim %v", got, len(m.rows) > 0 && m.rows[0].Dim())
	}
	press(m, "k")
	if m.confirm == nil || !strings.Contains(m.Screen(), "SYSTEM PROCESS, killing it may break the session: kill pid 1 (init)? y TERM") {
		t.Fatalf("no warning for a protected process:\n%s", m.Screen())
	}
	press(m, "y")
	if fmt.Sprint(k.calls) != "[kill 1]" || !m.alarm || !strings.Contains(m.status, "refused_protected") {
		t.Errorf("after y: calls %v, status %q, alarm %v; want the refusal shown", k.calls, m.status, m.alarm)
	}
}

func TestSessionsDrillInAndBack(t *testing.T) {
	m, _, k := newTestModel(t, 120, 40)
	press(m, "tab")
	if m.view != viewSessions || len(m.rows) == 0 || m.rows[0].Session == nil {
		t.Fatalf("Tab: view %v, %d rows", m.view, len(m.rows))
	}
	// Sorted by RSS: uid 1000's session holds cc1, the biggest (no
	// passwd here: users are named by uid).
	if ref := m.rows[0].Session.Ref(); ref != "user:1000" {
		t.Errorf("first session %s, want user:1000", ref)
	}
	press(m, "\\", "s", "i", "d", ":", "1", "0", "1", "enter", "enter")
	if m.view != viewMembers || m.member != "sid:101" {
		t.Fatalf("Enter on sid:101: view %v, member %q", m.view, m.member)
	}
	// The members of sid 101 as a tree: a pane's shell, make, cc1.
	if got := fmt.Sprint(pids(m)); got != "[101 110 111]" {
		t.Errorf("members of sid:101: %v", got)
	}
	press(m, "enter") // fold the shell
	if got := fmt.Sprint(pids(m)); got != "[101]" || !strings.Contains(m.Screen(), m.glyphs.folded+" -bash") {
		t.Errorf("folded: %v\n%s", got, m.Screen())
	}
	press(m, "esc")
	if m.view != viewSessions {
		t.Errorf("Esc from members: view %v, want sessions", m.view)
	}
	press(m, "K", "y")
	if len(k.calls) != 1 || !strings.HasPrefix(k.calls[0], "session ") || !m.alarm || !strings.Contains(m.status, "refused") {
		t.Errorf("K y on a session: calls %v, status %q", k.calls, m.status)
	}
}

// Every line fits the terminal, at 80×24 and narrower, and the screen has
// exactly its height in lines.
func TestFitsTheTerminal(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}, {200, 50}} {
		m, _, _ := newTestModel(t, size[0], size[1])
		for _, v := range []string{"", "tab", "tab"} { // processes, sessions, tree
			if v != "" {
				press(m, v)
			}
			screen := m.Screen()
			lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
			if len(lines) != size[1] {
				t.Errorf("%dx%d view %v: %d lines", size[0], size[1], m.view, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidthWc(l); w > size[0] {
					t.Errorf("%dx%d view %v line %d is %d wide: %q", size[0], size[1], m.view, i, w, l)
				}
			}
		}
	}
	// The sorted column stays on screen however narrow.
	m, _, _ := newTestModel(t, 80, 24)
	press(m, "s", "s", "s", "s", "s", "s") // WRITE/s, the first to go
	if !strings.Contains(m.Screen(), "WRITE/s↓") {
		t.Errorf("sorted by WRITE/s at 80 columns, the column is gone:\n%s", m.Screen())
	}
	// At 80 columns the command column keeps room beside the numbers.
	m, _, _ = newTestModel(t, 80, 24)
	if w := m.layout(nil).Width(len(m.cols) - 1); w < 10 {
		t.Errorf("COMMAND is %d wide at 80 columns", w)
	}
}

// What a row shows (owner, command line, io, PSS and USS) is read of the
// rows on screen alone, unless the sort or the filter needs it of every
// process; the sessions view asks for sessions and every process's io.
func TestReadsWhatTheScreenShows(t *testing.T) {
	m, src, _ := newTestModel(t, 120, 11) // 5 table rows
	m.Update(m.gather()())
	if src.need != (Need{}) || src.more != 5 || src.fields != table.RowFields {
		t.Errorf("processes by CPU%%: need %+v, then %s of %d processes; want nothing, then all of 5", src.need, src.fields, src.more)
	}
	press(m, "s") // USS
	m.Update(m.gather()())
	if src.need.Every != procwalk.FieldSmaps || src.fields != table.RowFields&^procwalk.FieldSmaps {
		t.Errorf("sorted by USS: need %+v, then %s", src.need, src.fields)
	}
	press(m, "\\", "make", "enter")
	m.Update(m.gather()())
	if src.need.Every != procwalk.FieldSmaps|procwalk.FieldCmdline {
		t.Errorf("filtered and sorted by USS: need %+v", src.need)
	}
	press(m, "tab")
	m.Update(m.gather()())
	if !src.need.Sessions || src.need.Every != procwalk.FieldIO {
		t.Errorf("sessions view: need %+v", src.need)
	}
	// Rows off screen were not read: a process past the fifth row has no
	// command line.
	press(m, "tab") // the tree
	m.Update(m.gather()())
	last := m.rows[len(m.rows)-1].Proc
	if last.Read&procwalk.FieldCmdline != 0 {
		t.Errorf("pid %d, off screen, had its command line read", last.ID.PID)
	}
}

// USS+ is the catalogue's uss_growth_bytes_per_minute, USS per minute
// between two frames, read for the rows on screen: the source's one Sampler
// measures it; the cell is in the units of every size.
func TestUSSGrowth(t *testing.T) {
	root := copyFixture(t)
	src := newFixtureSourceAt(t, root)
	m := New(Config{}, src, &fakeKiller{})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	m.Update(m.gather()())
	if strings.Contains(m.Screen(), "+0 B") {
		t.Fatalf("growth after one frame:\n%s", m.Screen())
	}
	// cc1's USS: +1 MiB in the second between the frames.
	replaceInFile(t, root+"/111/smaps_rollup", "Private_Dirty:     90000 kB", "Private_Dirty:     91024 kB")
	m.Update(m.gather()())
	p := m.frame.Snapshot.Process(111)
	if r := p.Rates; !r.HaveSmaps || r.USSGrowthBytesPerMinute != 60<<20 {
		t.Errorf("pid 111: rates %+v, want USS growth %d bytes/min", r, 60<<20)
	}
	if view := m.Screen(); !strings.Contains(view, "USS+") || !strings.Contains(view, "+60.0 MiB") {
		t.Errorf("the USS+ column lacks +60.0 MiB:\n%s", view)
	}
}

// copyFixture copies the fixture /proc into a temporary directory, for a
// test that changes it between frames.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(fixtureProc, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureProc, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q:\n%s", path, old, b)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSessionsWaitForEveryKind checks that switching to the sessions view
// shows no sessions from the frame on hand, which was gathered for the
// process view (its sessions are the gauges' cgroups alone), until the
// frame with every kind arrives.
func TestSessionsWaitForEveryKind(t *testing.T) {
	m, src, _ := newTestModel(t, 120, 30)
	if src.need.Sessions {
		t.Fatal("the process view asked for every session kind")
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyTab}) // the gather is not run yet
	if len(m.rows) != 0 || !strings.Contains(m.Screen(), "gathering sessions ...") {
		t.Fatalf("sessions view before its frame: %d rows, screen:\n%s", len(m.rows), m.Screen())
	}
	drain(m, cmd)
	if !src.need.Sessions {
		t.Fatal("the sessions view did not ask for every kind")
	}
	view := m.Screen()
	if len(m.rows) == 0 || strings.Contains(view, "gathering sessions") || !strings.Contains(view, "sid") {
		t.Errorf("sessions view after its frame: %d rows, screen:\n%s", len(m.rows), view)
	}
}

// A key that changes what the screen shows gathers at once, and that
// frame schedules its own tick: the tick of the frame before is stale and
// starts no gather, or every such key would add a refresh per interval.
func TestOneTickAfterARegather(t *testing.T) {
	m, _, _ := newTestModel(t, 120, 10)
	press(m, "s") // another sort: a gather now
	if m.frames != 2 {
		t.Fatalf("%d frames after a sort key, want 2", m.frames)
	}
	if _, cmd := m.Update(tickMsg{frame: 1}); cmd != nil {
		t.Error("the first frame's tick, stale, started a gather")
	}
	_, cmd := m.Update(tickMsg{frame: 2})
	if cmd == nil {
		t.Fatal("the last frame's tick started no gather")
	}
	if _, ok := cmd().(frameMsg); !ok {
		t.Error("the last frame's tick did not gather a frame")
	}
}

// Rows a gather planned and formatted (to sort by a text column) show the
// values read for the rows on screen, and the rates measured of them.
func TestPlannedRowsShowTheFramesRates(t *testing.T) {
	m, _, _ := newTestModel(t, 200, 40)
	m.sortCol[viewProcesses] = table.ColName
	m.Update(m.gather()())
	m.Update(m.gather()()) // USS and io read of the rows in two frames: rates known
	view := m.Screen()
	if !strings.Contains(view, "+0 B") {
		t.Errorf("sorted by name, the growth column shows no rate:\n%s", view)
	}
	if uss := render.Bytes(91000 << 10); !strings.Contains(view, " "+uss+" ") {
		t.Errorf("sorted by name, cc1's USS (%s) is missing:\n%s", uss, view)
	}
}

// The rows on screen show USS and PSS, read after the scan for them alone:
// procwalk top showed "-" on every row, its rows built before the read.
func TestRowsOnScreenShowUSSAndPSS(t *testing.T) {
	m, _, _ := newTestModel(t, 200, 12)
	for range 2 { // the first frame and a refresh
		m.Update(m.gather()())
		shown := 0
		for _, r := range m.rows[m.offset:min(m.offset+m.tableHeight(), len(m.rows))] {
			p := r.Proc
			if p.Zombie() || p.Read&procwalk.FieldSmaps == 0 {
				continue
			}
			shown++
			cells := r.Cells()
			if want := render.Bytes(p.Smaps.USSBytes); cells[table.ColUSS] != want || cells[table.ColUSS] == render.NotMeasured {
				t.Errorf("pid %d: USS cell %q, want %q", p.ID.PID, cells[table.ColUSS], want)
			}
			if want := render.Bytes(p.Smaps.PSSBytes); cells[table.ColPSS] != want {
				t.Errorf("pid %d: PSS cell %q, want %q", p.ID.PID, cells[table.ColPSS], want)
			}
		}
		if shown == 0 {
			t.Fatalf("no row on screen had smaps_rollup read:\n%s", m.Screen())
		}
	}
}

// Every metric column of both tables shows the catalogue's value of its
// row's process or session, and nothing where the catalogue has none: the
// live view's part of the walk of every output (cmd/procwalk's
// TestEveryOutputSpeaksTheCatalogue walks the others).
func TestRowsAreTheCatalogues(t *testing.T) {
	m, _, _ := newTestModel(t, 200, 40)
	m.Update(m.gather()()) // a second frame: rates
	cat := metric.NewCatalogue()
	// wantCell is the cell ps and sessions print for the value.
	check := func(view string, r *table.Row, c int, name string, want float64, ok bool, wantCell string) {
		t.Helper()
		if got, have := r.Value(c); have != ok || ok && float32(got) != float32(want) {
			t.Errorf("%s: %s of %v: %v (%v), the catalogue's %v (%v)", view, name, r.Cells()[1], got, have, want, ok)
		}
		if cell := r.Cells()[c]; cell != wantCell {
			t.Errorf("%s: %s of %v: cell %q, want %q", view, name, r.Cells()[1], cell, wantCell)
		}
	}
	snap := m.frame.Snapshot
	columns := map[int]string{table.ColCPU: "cpu_percent", table.ColUSS: "uss_bytes", table.ColPSS: "pss_bytes", table.ColRSS: "rss_bytes",
		table.ColGrowth: "uss_growth_bytes_per_minute", table.ColRead: "read_bytes_per_second", table.ColWrite: "write_bytes_per_second", table.ColAge: "age_seconds"}
	rates := 0
	for i := range m.rows {
		r := &m.rows[i]
		for c, name := range columns {
			d, _ := cat.Lookup(name)
			v, ok := d.Process(snap, r.Proc)
			check("processes", r, c, name, v, ok, render.Cell(d, v, ok))
			if ok && d.Kind == metric.Rate {
				rates++
			}
		}
	}
	if len(m.rows) == 0 || rates == 0 {
		t.Fatalf("%d process rows, %d rates: nothing walked", len(m.rows), rates)
	}
	press(m, "tab")
	m.Update(m.gather()())
	if len(m.rows) == 0 || m.rows[0].Session == nil {
		t.Fatalf("sessions view: %d rows", len(m.rows))
	}
	snap = m.frame.Snapshot
	for i := range m.rows {
		r := &m.rows[i]
		for j, name := range table.SessionMetricColumns() {
			d, _ := cat.Lookup(name)
			v, ok := d.Session(r.Session, snap.Fields, snap.Time)
			check("sessions", r, 2+j, name, v, ok, render.SessionCell(d, r.Session, snap.Fields, snap.Time))
		}
	}
}

// needLog is a fixture source that keeps what each gather was asked for.
type needLog struct {
	*fixtureSource
	needs []Need
}

func (s *needLog) Gather(need Need, shown func(Frame)) (Frame, error) {
	s.needs = append(s.needs, need)
	return s.fixtureSource.Gather(need, shown)
}

// --once's first gather reads the io of every process: the second orders
// the rows by rates the first lacked, so the rows it shows are not those
// the first read, and without a sample of their io READ/s and WRITE/s
// were '-' on most of them. The second reads only what its rows need.
func TestOnceReadsIOOfEveryProcessFirst(t *testing.T) {
	src := &needLog{fixtureSource: newFixtureSource(t)}
	m := New(Config{}, src, &fakeKiller{})
	screen, err := m.Frame(context.Background(), 0, 200, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.needs) != 2 {
		t.Fatalf("--once gathered %d times, want 2", len(src.needs))
	}
	if src.needs[0].Every&procwalk.FieldIO == 0 {
		t.Errorf("first gather read %v of every process, want io too", src.needs[0].Every)
	}
	if src.needs[1].Every&procwalk.FieldIO != 0 {
		t.Errorf("second gather read %v of every process, want no io (the rows on screen alone)", src.needs[1].Every)
	}
	rows := 0
	for _, r := range m.rows[:min(len(m.rows), m.tableHeight())] {
		if r.Proc.Kernel {
			continue // no io file
		}
		rows++
		if !r.Has(table.ColRead) || !r.Has(table.ColWrite) {
			t.Errorf("pid %d: READ/s %q WRITE/s %q, want rates:\n%s", r.Proc.ID.PID, r.Cells()[table.ColRead], r.Cells()[table.ColWrite], screen)
		}
	}
	if rows == 0 {
		t.Fatalf("no process row on screen:\n%s", screen)
	}
}
