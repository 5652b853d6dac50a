//go:build linux

package session

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// sessionFixture is the fixture /proc of the session tests; its tree is
// described in testdata/sessions/README.md.
const sessionFixture = "testdata/sessions/proc"

// fixtureTmux answers list-panes for the fixture's one tmux server.
func fixtureTmux(t *testing.T, calls *int) TmuxConfig {
	t.Helper()
	return TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default"},
		ListPanes: func(socket string) ([]byte, error) {
			*calls++
			if socket != "/tmp/tmux-1000/default" {
				t.Errorf("ListPanes asked about %q", socket)
			}
			return os.ReadFile("testdata/sessions/tmux/default.txt")
		},
	}
}

// groupFixture snapshots root with the fields cfg needs and groups it.
func groupFixture(t *testing.T, root string, cfg Config) ([]Session, []string, *procwalk.Snapshot) {
	t.Helper()
	g, s := fixtureGrouper(t, root, cfg)
	sessions, notes := g.Group(s)
	return sessions, notes, s
}

// fixtureGrouper returns a Grouper for cfg on root and a snapshot of root
// with the fields it needs.
func fixtureGrouper(t *testing.T, root string, cfg Config) (*Grouper, *procwalk.Snapshot) {
	t.Helper()
	fs, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g).Gather()
	if err != nil {
		t.Fatal(err)
	}
	return g, s
}

func find(t *testing.T, sessions []Session, ref string) *Session {
	t.Helper()
	s, err := Find(sessions, ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func memberPIDs(s *Session) []int {
	var out []int
	for _, id := range s.Members {
		out = append(out, id.PID)
	}
	return out
}

func rootPIDs(s *Session) []int {
	var out []int
	for _, id := range s.Roots {
		out = append(out, id.PID)
	}
	return out
}

// sumOver totals the given pids of a snapshot directly, as the reference
// the session totals must equal.
func sumOver(t *testing.T, s *procwalk.Snapshot, pids []int) procwalk.Totals {
	t.Helper()
	var tot procwalk.Totals
	for _, pid := range pids {
		p := s.Process(pid)
		if p == nil {
			t.Fatalf("pid %d not in snapshot", pid)
		}
		tot.Add(p)
	}
	return tot
}

func namesOf(sessions []Session, kind string) []string {
	var out []string
	for _, s := range sessions {
		if s.Kind == kind {
			out = append(out, s.Name)
		}
	}
	return out
}

func TestGroupNumberKinds(t *testing.T) {
	calls := 0
	sessions, _, snap := groupFixture(t, sessionFixture, Config{Kinds: []string{KindSID, KindPGRP, KindTTY}, Tmux: fixtureTmux(t, &calls)})
	tests := []struct {
		ref     string
		members []int
		roots   []int
		attrs   map[string]string
	}{
		{"sid:202", []int{202, 203, 204, 205, 206, 207, 208}, []int{202}, map[string]string{AttrLeader: "bash", AttrTTY: "pts/0"}},
		{"sid:110", []int{110, 111, 120, 121}, []int{110, 120}, map[string]string{AttrLeader: "bash", AttrTTY: "pts/5"}},
		{"pgrp:203", []int{203, 204, 205}, []int{203}, map[string]string{AttrLeader: "node", AttrTTY: "pts/0"}},
		{"pgrp:1", []int{1}, []int{1}, map[string]string{AttrLeader: "systemd"}},
		{"tty:pts/3", []int{101, 102, 103}, []int{101}, map[string]string{}},
		{"tty:pts/5", []int{110, 111, 120, 121}, []int{110, 120}, map[string]string{}},
	}
	for _, tt := range tests {
		s := find(t, sessions, tt.ref)
		if got := memberPIDs(s); !slices.Equal(got, tt.members) {
			t.Errorf("%s members = %v, want %v", tt.ref, got, tt.members)
		}
		if got := rootPIDs(s); !slices.Equal(got, tt.roots) {
			t.Errorf("%s roots = %v, want %v", tt.ref, got, tt.roots)
		}
		for k, v := range tt.attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s attr %s = %q, want %q", tt.ref, k, s.Attrs[k], v)
			}
		}
		if want := sumOver(t, snap, tt.members); s.Totals.Totals != want {
			t.Errorf("%s totals = %+v, want %+v", tt.ref, s.Totals.Totals, want)
		}
	}
	// Kernel threads (sid 0) are in no session.
	for _, s := range sessions {
		for _, id := range s.Members {
			if id.PID == 2 || id.PID == 3 {
				t.Errorf("kernel thread %d in %s", id.PID, s.Ref())
			}
		}
	}
	if calls != 0 {
		t.Errorf("tmux asked %d times though neither tmux nor agents were asked for", calls)
	}
}

func TestGroupUsers(t *testing.T) {
	users, err := procwalk.ReadUsers("testdata/sessions/passwd")
	if err != nil {
		t.Fatal(err)
	}
	sessions, _, _ := groupFixture(t, sessionFixture, Config{Kinds: []string{KindUser}, Users: users})
	want := []string{"999", "1001", "65535", "dev", "nginx", "root"}
	if got := namesOf(sessions, KindUser); !slices.Equal(got, want) {
		t.Errorf("user sessions = %v, want %v", got, want)
	}
	nginx := find(t, sessions, "user:nginx")
	if !slices.Equal(memberPIDs(nginx), []int{302}) || nginx.Attrs[AttrUID] != "101" {
		t.Errorf("user:nginx = %v %v", memberPIDs(nginx), nginx.Attrs)
	}
	// Without a user database sessions are named by uid.
	sessions, _, _ = groupFixture(t, sessionFixture, Config{Kinds: []string{KindUser}})
	if _, err := Find(sessions, "user:1000"); err != nil {
		t.Error(err)
	}
}

func TestGroupNotesMissingFields(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindUser, KindCgroup}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := fs.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	sessions, notes := g.Group(s)
	if len(sessions) != 0 {
		t.Errorf("got %d sessions from a snapshot without owners or cgroup", len(sessions))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "owner") || !strings.Contains(notes[0], "cgroup") {
		t.Errorf("notes = %q, want one naming the missing fields", notes)
	}
}

func TestNewGrouperRejectsBadConfig(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"kind":   {Kinds: []string{"tmux", "pods"}},
		"danger": {DangerPercent: 150},
		"NaN":    {DangerPercent: math.NaN()},
		"below":  {DangerPercent: -1},
		"agent":  {Agents: []AgentRule{{Name: "x"}}},
		"group":  {Groups: []GroupRule{{Template: "x", Field: "argv"}}},
		"tree":   {Trees: []TreeSpec{{Name: "x"}}},
	} {
		if _, err := NewGrouper(fs, cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: err = %v, want ErrBadConfig", name, err)
		}
	}
}

func TestFind(t *testing.T) {
	sessions := []Session{
		{Kind: KindTmux, Name: "build"},
		{Kind: KindTmux, Name: "web"},
		{Kind: KindCgroup, Name: "pod/x:y"},
	}
	if s, err := Find(sessions, "tmux:web"); err != nil || s.Name != "web" {
		t.Errorf("Find(tmux:web) = %v, %v", s, err)
	}
	if s, err := Find(sessions, "cgroup:pod/x:y"); err != nil || s.Name != "pod/x:y" {
		t.Errorf("a name holding ':' = %v, %v", s, err)
	}
	// user:UID finds the user's session under its name; a user named by
	// digits keeps its name.
	users := []Session{
		{Kind: KindUser, Name: "alice", Attrs: map[string]string{AttrUser: "alice", AttrUID: "1000"}},
		{Kind: KindUser, Name: "1000", Attrs: map[string]string{AttrUser: "1000", AttrUID: "1001"}},
		{Kind: KindUser, Name: "2000", Attrs: map[string]string{AttrUser: "2000", AttrUID: "2000"}},
	}
	for ref, want := range map[string]int{"user:alice": 0, "user:1000": 1, "user:1001": 1, "user:2000": 2} {
		if s, err := Find(users, ref); err != nil || s != &users[want] {
			t.Errorf("Find(%s) = %v, %v; want %s", ref, s, err, users[want].Name)
		}
	}
	if s, err := Find(users, "user:1002"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Find(user:1002) = %v, %v; want ErrNoSession", s, err)
	}
	// SERVER/NAME finds a bare NAME on that server: the name a session had
	// while another server also had a NAME keeps working.
	servers := []Session{
		{Kind: KindTmux, Name: "build", Attrs: map[string]string{AttrSocket: "/tmp/tmux-0/default"}},
		{Kind: KindTmux, Name: "other/web", Attrs: map[string]string{AttrSocket: "/tmp/tmux-0/other"}},
	}
	for ref, want := range map[string]int{"tmux:default/build": 0, "tmux:tmux-0/default/build": 0, "tmux:other/web": 1} {
		if s, err := Find(servers, ref); err != nil || s != &servers[want] {
			t.Errorf("Find(%s) = %v, %v; want %s", ref, s, err, servers[want].Name)
		}
	}
	for _, ref := range []string{"tmux:other/build", "tmux:fault/build", "tmux:/build"} {
		if s, err := Find(servers, ref); !errors.Is(err, ErrNoSession) {
			t.Errorf("Find(%s) = %v, %v; want ErrNoSession: build is on default", ref, s, err)
		}
	}
	tests := []struct {
		ref      string
		sentinel error
		mentions []string
	}{
		{"tmux:nope", ErrNoSession, []string{"build", "web"}},
		{"agent:x", ErrNoSession, []string{"no agent sessions", "tmux, cgroup"}},
		{"pods:x", ErrUnknownKind, []string{"tmux, sid, pgrp"}},
		{"build", ErrBadRef, []string{"KIND:NAME"}},
		{"tmux:", ErrBadRef, []string{"KIND:NAME"}},
	}
	for _, tt := range tests {
		_, err := Find(sessions, tt.ref)
		if !errors.Is(err, tt.sentinel) {
			t.Errorf("Find(%q) = %v, want %v", tt.ref, err, tt.sentinel)
			continue
		}
		for _, m := range tt.mentions {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("Find(%q) error %q does not mention %q", tt.ref, err, m)
			}
		}
	}
	// "Did you mean": a typo, or a bare name that several servers have
	// (qualified as SERVER/NAME), offered first; 40 names are no longer
	// listed, only counted.
	many := []Session{
		{Kind: KindTmux, Name: "default/web"}, {Kind: KindTmux, Name: "srv2/web"}, {Kind: KindTmux, Name: "build"},
	}
	for i := range 40 {
		many = append(many, Session{Kind: KindTmux, Name: fmt.Sprintf("job-%02d", i)})
	}
	for ref, want := range map[string]string{
		"tmux:web":    "no such session tmux:web: did you mean tmux:default/web, tmux:srv2/web? 43 tmux sessions in all: procwalk sessions --kind tmux lists them",
		"tmux:buidl":  "no such session tmux:buidl: did you mean tmux:build? 43 tmux sessions in all: procwalk sessions --kind tmux lists them",
		"tmux:zzzzzz": "no such session tmux:zzzzzz: 43 tmux sessions in all: procwalk sessions --kind tmux lists them",
	} {
		if _, err := Find(many, ref); err == nil || err.Error() != want {
			t.Errorf("Find(%s):\n got %v\nwant %s", ref, err, want)
		}
	}
	// With no sessions at all (only that kind was grouped) no kinds are
	// "present": the message ends at the kind.
	if _, err := Find(nil, "tmux:build"); err == nil || err.Error() != "no such session tmux:build: there are no tmux sessions" {
		t.Errorf("Find in nothing: %v", err)
	}
}

func TestTTYName(t *testing.T) {
	tests := []struct {
		nr   int
		want string
	}{
		{136<<8 | 3, "pts/3"},
		{136<<8 | 255, "pts/255"},
		{136<<8 | (300 & 0xff) | (300>>8)<<20, "pts/300"}, // minor above 255: high bits at 20
		{4<<8 | 1, "tty1"},
		{4<<8 | 64, "ttyS0"},
		{5<<8 | 1, "console"},
		{188<<8 | 0, "tty188:0"},
	}
	for _, tt := range tests {
		if got := TTYName(tt.nr); got != tt.want {
			t.Errorf("TTYName(%#x) = %q, want %q", tt.nr, got, tt.want)
		}
	}
}

// synthetic builds an in-memory snapshot: each proc is pid, ppid, sid, CPU
// seconds, read and write bytes.
func synthetic(t time.Time, procs ...[6]int) *procwalk.Snapshot {
	var ps []procwalk.Process
	for _, p := range procs {
		ps = append(ps, procwalk.Process{
			ID: procwalk.ProcID{PID: p[0], StartTicks: uint64(p[0])}, PPID: p[1], SID: p[2], PGRP: p[2], Comm: "x",
			UserCPUSeconds: float64(p[3]), Read: procwalk.FieldIO,
			IO: procwalk.IO{ReadBytes: uint64(p[4]), WriteBytes: uint64(p[5])},
		})
	}
	s := procwalk.NewSnapshot(procwalk.Host{}, procwalk.FieldIO, 0, ps, procwalk.Visibility{})
	s.Time = t
	return s
}

func TestCumulativeCountersNeverGoBack(t *testing.T) {
	g, _ := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindSID}})
	t0 := time.Unix(1700000000, 0)
	type want struct {
		cpu         float64
		read, write uint64
	}
	steps := []struct {
		name  string
		procs [][6]int
		want  want
	}{
		// A parent 10 and its child 11 in sid 10.
		{"start at the current counters", [][6]int{{10, 1, 10, 10, 100, 10}, {11, 10, 10, 5, 50, 5}}, want{15, 150, 15}},
		{"both grow", [][6]int{{10, 1, 10, 12, 110, 10}, {11, 10, 10, 7, 60, 5}}, want{19, 170, 15}},
		// 11 exits (used 2 more s and 10 more bytes after the last gather):
		// its parent reaps it and the kernel adds its 70 read bytes to the
		// parent's. Only the 10 bytes not counted yet are new.
		{"a member exits and is reaped", [][6]int{{10, 1, 10, 13, 110 + 70, 10 + 5}}, want{20, 180, 15}},
		// A newcomer is counted whole; counters that fall are not subtracted.
		{"a newcomer arrives", [][6]int{{10, 1, 10, 13, 180, 15}, {12, 10, 10, 1, 20, 0}}, want{21, 200, 15}},
		{"a counter falls", [][6]int{{10, 1, 10, 13, 100, 15}, {12, 10, 10, 1, 20, 0}}, want{21, 200, 15}},
	}
	for i, step := range steps {
		s := synthetic(t0.Add(time.Duration(i)*time.Second), step.procs...)
		sessions, _ := g.Group(s)
		ss := find(t, sessions, "sid:10")
		got := want{ss.Totals.CumulativeCPUSeconds, ss.Totals.CumulativeReadBytes, ss.Totals.CumulativeWriteBytes}
		if got != step.want {
			t.Errorf("step %d (%s): cumulative = %+v, want %+v", i, step.name, got, step.want)
		}
	}
}

// A credit (the IO of a reaped member, counted already) lasts until the
// parent's increases have used it up, over as many gathers as that takes,
// and goes with the parent.
func TestCumulativeCreditLastsUntilUsed(t *testing.T) {
	g, _ := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindSID}})
	t0 := time.Unix(1700000000, 0)
	steps := []struct {
		name  string
		procs [][6]int
		read  uint64
	}{
		{"start", [][6]int{{10, 1, 10, 1, 100, 0}, {11, 10, 10, 1, 50, 0}, {12, 10, 10, 1, 0, 0}}, 150},
		// 11 exits with 50 bytes counted: the parent's next 50 are its.
		{"reaped, the parent's counter has 30 of it", [][6]int{{10, 1, 10, 1, 130, 0}, {12, 10, 10, 1, 0, 0}}, 150},
		{"the other 20 and 5 of its own", [][6]int{{10, 1, 10, 1, 155, 0}, {12, 10, 10, 1, 0, 0}}, 155},
		{"used up: all of it counts", [][6]int{{10, 1, 10, 1, 165, 0}, {12, 10, 10, 1, 7, 0}}, 172},
	}
	for i, step := range steps {
		s := synthetic(t0.Add(time.Duration(i)*time.Second), step.procs...)
		sessions, _ := g.Group(s)
		if got := find(t, sessions, "sid:10").Totals.CumulativeReadBytes; got != step.read {
			t.Errorf("step %d (%s): cumulative read = %d, want %d", i, step.name, got, step.read)
		}
	}
}

// CPU seconds are whole clock ticks: the session's sum stays on the tick
// (0.3, not 0.1+0.2 = 0.30000000000000004) from gather to gather.
func TestCumulativeCPUSecondsHasNoFloatNoise(t *testing.T) {
	g, _ := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindSID}})
	t0 := time.Unix(1700000000, 0)
	for i, step := range []struct {
		cpu  [2]float64 // members 10 and 11, at USER_HZ 100
		want float64
	}{
		{[2]float64{0.1, 0.2}, 0.3},
		{[2]float64{0.3, 0.6}, 0.9},       // unrounded: 0.8999999999999999
		{[2]float64{953.29, 0.6}, 953.89}, // 0.9 + 952.99
	} {
		s := synthetic(t0.Add(time.Duration(i)*time.Second), [6]int{10, 1, 10, 0, 0, 0}, [6]int{11, 10, 10, 0, 0, 0})
		s.Host.ClockTicks = 100
		s.Procs[0].UserCPUSeconds, s.Procs[1].UserCPUSeconds = step.cpu[0], step.cpu[1]
		sessions, _ := g.Group(s)
		if got := find(t, sessions, "sid:10").Totals.CumulativeCPUSeconds; got != step.want {
			t.Errorf("gather %d: cumulative CPU %v, want %v", i, got, step.want)
		}
	}
}

func TestCumulativeSessionReturnsAfreshAfterGone(t *testing.T) {
	g, _ := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindSID}})
	t0 := time.Unix(1700000000, 0)
	g.Group(synthetic(t0, [6]int{10, 1, 10, 10, 0, 0}))
	g.Group(synthetic(t0.Add(time.Second), [6]int{20, 1, 20, 3, 0, 0}))
	sessions, _ := g.Group(synthetic(t0.Add(2*time.Second), [6]int{30, 1, 10, 4, 0, 0}))
	if got := find(t, sessions, "sid:10").Totals.CumulativeCPUSeconds; got != 4 {
		t.Errorf("a session back after a gather without it has cumulative CPU %v, want 4 (a reset)", got)
	}
}

// A Grouper of one gather (Once) groups the fixture, every kind, into the
// same sessions as one that remembers, cumulative counters included (with
// IO and fractional CPU seconds, whose rounding both do alike), and keeps
// no member's counters for a next gather.
func TestGroupOnceKeepsNothing(t *testing.T) {
	var calls int
	remembering, s := fixtureGrouper(t, sessionFixture, Config{Tmux: fixtureTmux(t, &calls)})
	for i := range s.Procs {
		p := &s.Procs[i]
		p.UserCPUSeconds += 0.01 * float64(i%7) // 0.1+0.2 sums need the rounding
		p.IO = procwalk.IO{ReadBytes: uint64(1000 * i), WriteBytes: uint64(7 * i)}
		p.Read |= procwalk.FieldIO
	}
	once, err := NewGrouper(remembering.fs, Config{Tmux: fixtureTmux(t, &calls), Once: true})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := remembering.Group(s)
	got, _ := once.Group(s)
	if len(got) != len(want) {
		t.Fatalf("Once: %d sessions, want %d", len(got), len(want))
	}
	withIO := 0
	for i := range want {
		g, w := &got[i], &want[i]
		if g.Kind != w.Kind || g.Name != w.Name || g.Totals != w.Totals || !slices.Equal(g.Members, w.Members) {
			t.Errorf("Once: session %d = %s:%s %+v, want %s:%s %+v", i, g.Kind, g.Name, g.Totals, w.Kind, w.Name, w.Totals)
		}
		if w.Totals.CumulativeReadBytes > 0 {
			withIO++
		}
	}
	if withIO == 0 {
		t.Error("no session has cumulative IO: the test compares nothing")
	}
	if len(once.cum.sessions) != 0 || len(remembering.cum.sessions) == 0 {
		t.Errorf("sessions remembered: Once %d, without %d; want 0 and all", len(once.cum.sessions), len(remembering.cum.sessions))
	}
}

func TestCompareNatural(t *testing.T) {
	names := []string{"pwload-100", "pwload-10", "pwload-2", "pwload-1", "a", "pwload-02x", "b1", "b01", "pwload-"}
	slices.SortStableFunc(names, CompareNatural)
	want := []string{"a", "b1", "b01", "pwload-", "pwload-1", "pwload-2", "pwload-02x", "pwload-10", "pwload-100"}
	if !slices.Equal(names, want) {
		t.Errorf("natural order %q, want %q", names, want)
	}
}
