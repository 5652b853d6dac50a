//go:build linux

package table

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// TestRowSize: a process view keeps two tables of a row a process (the one
// shown and the next); the RSS figures at 10,000 processes in the top
// README rest on 120 bytes a row on 64-bit hosts.
func TestRowSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes stated for 64-bit hosts")
	}
	if got := unsafe.Sizeof(Row{}); got != 120 {
		t.Errorf("a row is %d bytes; the README's memory figures assume 120", got)
	}
}

// The titles of the process table's metric columns are the catalogue's
// labels, as ps's headings are.
func TestColumnTitlesAreLabels(t *testing.T) {
	cols := ProcessColumns()
	for c, name := range map[int]string{ColPID: "pid", ColCPU: "cpu_percent", ColUSS: "uss_bytes", ColPSS: "pss_bytes", ColRSS: "rss_bytes",
		ColGrowth: "uss_growth_bytes_per_minute", ColRead: "read_bytes_per_second", ColWrite: "write_bytes_per_second", ColAge: "age_seconds"} {
		d, _ := metric.Lookup(name)
		if cols[c].Header != d.Label {
			t.Errorf("column %d is %q, want %s's label %q", c, cols[c].Header, name, d.Label)
		}
	}
	scols := SessionColumns()
	for i, name := range SessionMetricColumns() {
		c := 2 + i
		d, _ := metric.Lookup(name)
		if scols[c].Header != d.Label {
			t.Errorf("sessions column %d is %q, want %s's label %q", c, scols[c].Header, name, d.Label)
		}
	}
}

func newTestBuilder(snap *procwalk.Snapshot, sessions []session.Session) *Builder {
	return NewBuilder(snap, sessions, Config{}, metric.NewCatalogue())
}

// The sessions view's values are the catalogue's, with its rule for what
// is absent: PSS not read, CPU % not measured, an ended agent's age (it has
// no members) show "-" and sort after every session with a value.
func TestSessionRowsAbsentIsDash(t *testing.T) {
	now := time.Unix(1700000000, 0)
	read := session.Session{Kind: "tmux", Name: "read"}
	read.Totals.Procs, read.Totals.PSSBytes, read.Totals.SmapsRead, read.Totals.RatesMeasured, read.Totals.CPUPercent = 2, 1<<20, 2, 2, 5
	read.Totals.OldestStart = now.Add(-time.Hour)
	unread := session.Session{Kind: "tmux", Name: "unread"}
	unread.Totals.Procs, unread.Totals.OldestStart = 1, now.Add(-time.Minute)
	ended := session.Session{Kind: "agent", Name: "claude/x", Agent: &session.AgentState{Status: session.AgentEnded}}
	b := newTestBuilder(&procwalk.Snapshot{Time: now}, []session.Session{ended, unread, read})
	every := func(*session.Session) bool { return true }
	rows := b.SessionRows("", every, SessionRSSColumn, false)
	cells := map[string][]string{}
	for _, r := range rows {
		cells[r.Session.Name] = r.Cells()
	}
	// KIND NAME PROCS RSS PSS CPU% READ/s WRITE/s AGE INFO
	if c := cells["read"]; c[4] != "1.0 MiB" || c[5] != "5.0" || c[8] != "1h00m" {
		t.Errorf("read: %q", c)
	}
	if c := cells["unread"]; c[4] != render.NotMeasured || c[5] != render.NotMeasured || c[8] != "1m00s" {
		t.Errorf("unread: %q", c)
	}
	if c := cells["claude/x"]; c[2] != "0" || c[8] != render.NotMeasured {
		t.Errorf("ended agent: %q", c)
	}
	for _, c := range []int{4, 5, 8} {
		rows := b.SessionRows("", every, c, false)
		if last := rows[len(rows)-1].Session.Name; c != 8 && last == "read" || c == 8 && last != "claude/x" {
			t.Errorf("sorted by column %d, %s is last", c, last)
		}
	}
	if rows := b.SessionRows("UNR", every, 0, false); len(rows) != 1 || rows[0].Session.Name != "unread" {
		t.Errorf("filter UNR (any case): %d rows", len(rows))
	}
}

// A session row's INFO is procwalk sessions' (session.Info, escaped): an
// agent's starts with its status (for how long, when blocked), model and
// context use.
func TestSessionInfoAgent(t *testing.T) {
	s := session.Session{Kind: session.KindAgent, Name: "claude/app",
		Attrs: map[string]string{session.AttrAgent: "claude", session.AttrModel: "claude-opus-4-1", session.AttrStatus: "blocked", session.AttrCwd: "/src/\x1b[2Japp"},
		Agent: &session.AgentState{Status: "blocked", StatusFor: 3 * time.Minute, ContextWindowTokens: 200000, ContextPercent: 90.4,
			Transcript: &session.Transcript{ContextUsedTokens: 180800}}}
	rows := newTestBuilder(&procwalk.Snapshot{}, []session.Session{s}).SessionRows("", func(*session.Session) bool { return true }, 0, false)
	info := rows[0].Cells()[len(SessionColumns())-1]
	if want := "blocked 3 min, claude-opus-4-1, ctx 90%, /src/\\x1b[2Japp"; !strings.HasPrefix(info, want) || info != procwalk.Printable(s.Info()) {
		t.Errorf("INFO %q, want %q, as procwalk sessions has it", info, want)
	}
}

// The agents table sorts by what needs a person first (a blocked agent
// before a working one, an ended one last), and says for how long one is
// blocked or ended.
func TestAgentRows(t *testing.T) {
	now := time.Unix(1700000000, 0)
	agent := func(name, status string) session.Session {
		s := session.Session{Kind: session.KindAgent, Name: name, Agent: &session.AgentState{Status: status, StatusFor: 2 * time.Minute},
			Attrs: map[string]string{session.AttrTmuxTarget: name + ":0.0"}}
		s.Totals.Procs, s.Totals.OldestStart = 1, now.Add(-90*time.Second)
		return s
	}
	ended := agent("e", session.AgentEnded)
	ended.Totals.Procs, ended.Totals.OldestStart = 0, time.Time{} // its processes are gone
	b := newTestBuilder(&procwalk.Snapshot{Time: now}, []session.Session{agent("w", session.AgentWorking), ended,
		{Kind: "tmux", Name: "not-an-agent"}, agent("b", session.AgentBlocked), agent("i", session.AgentIdle)})
	rows := b.AgentRows("", AgentStatusColumn, false)
	var got []string
	for _, r := range rows {
		got = append(got, r.Cells()[0]+" "+r.Cells()[1])
	}
	if want := []string{"b blocked 2 min", "w working", "i idle", "e ended 2 min"}; !slices.Equal(got, want) {
		t.Errorf("agents by status: %q, want %q", got, want)
	}
	// AGENT STATUS MODEL CTX% PROCS RSS CPU% AGE TMUX
	if c := rows[0].Cells(); c[2] != render.NotMeasured || c[6] != render.NotMeasured || c[7] != "1m30s" || rows[0].TmuxTarget() != "b:0.0" {
		t.Errorf("blocked agent's cells %q, tmux %q", c, rows[0].TmuxTarget())
	}
	// An ended agent has no age, as the sessions table says (it showed
	// "0s", and before that a large negative number).
	if c := rows[3].Cells(); c[4] != "0" || c[7] != render.NotMeasured {
		t.Errorf("ended agent's PROCS %q, AGE %q; want 0 and %q", c[4], c[7], render.NotMeasured)
	}
	if c := b.SessionRows("agent:e", func(*session.Session) bool { return true }, SessionRSSColumn, false); len(c) != 1 || c[0].Cells()[8] != rows[3].Cells()[7] {
		t.Errorf("the sessions table's AGE of the ended agent differs from the agents table's %q", rows[3].Cells()[7])
	}
}

// A process row's cells are formatted as ps prints them; a command line
// not read yet (after a sort, until the next frame reads the rows on
// screen) shows "-", not a made-up "[comm]" that reads as a kernel thread.
func TestProcessRows(t *testing.T) {
	now := time.Unix(1700000000, 0)
	snap := &procwalk.Snapshot{Time: now, Procs: []procwalk.Process{
		{ID: procwalk.ProcID{PID: 7}, Comm: "sleep", Cmdline: []string{"sleep", "9"}, RSSBytes: 3 << 20, Read: procwalk.FieldCmdline},
		{ID: procwalk.ProcID{PID: 8}, Comm: "evil\nname", RSSBytes: 5 << 20},
		{ID: procwalk.ProcID{PID: 2}, Comm: "kthreadd", Kernel: true},
	}}
	b := newTestBuilder(snap, nil)
	rows := b.ProcessRows(nil, "", ColRSS, false)
	if len(rows) != 2 || rows[0].Proc.ID.PID != 8 {
		t.Fatalf("by RSS: %d rows, first %v; want 8 then 7, no kernel thread", len(rows), rows[0].Proc.ID)
	}
	// PID USER NAME CPU% USS PSS RSS USS+ READ/s WRITE/s AGE COMMAND
	if c := rows[0].Cells(); c[1] != render.NotMeasured || c[2] != `evil\nname` || c[6] != "5.0 MiB" || c[4] != render.NotMeasured || c[11] != render.NotMeasured {
		t.Errorf("pid 8's cells %q", c)
	}
	if c := rows[1].Cells(); c[11] != "sleep 9" {
		t.Errorf("pid 7's command %q", c[11])
	}
	if rows := b.ProcessRows(rows, "SLEEP", ColPID, false); len(rows) != 1 || !rows[0].Matches("9") || rows[0].Matches("evil") {
		t.Errorf("filter SLEEP: %d rows", len(rows))
	}
}

// The table is the live view's model without its terminal UI: it imports
// no terminal library, directly or through another package. Besides the
// standard library and this module, the only packages allowed are those
// the engine itself uses (x/sys; runewidth and uax29 under
// procwalk/textwidth, the width of text in cells): any other, a terminal
// library or not, fails here and is looked at.
func TestNoTerminalLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/procwalk/procwalk/cmd/procwalk/render") {
		t.Fatalf("go list -deps lacks render: %q", deps)
	}
	allowed := []string{"github.com/procwalk/procwalk/", "golang.org/x/sys/", "github.com/mattn/go-runewidth", "github.com/clipperhouse/uax29/"}
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") && !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(d, a) }) {
			t.Errorf("table imports %s", d)
		}
	}
}
