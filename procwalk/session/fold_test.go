//go:build linux

package session

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

func TestParseFoldRule(t *testing.T) {
	r, err := ParseFoldRule(`logins=cgroup:^session-[0-9]+\.scope$`)
	if err != nil || r.Name != "logins" || r.Kind != KindCgroup || r.Match.String() != `^session-[0-9]+\.scope$` {
		t.Errorf("got %+v, %v", r, err)
	}
	// The regex may hold '=' and ':'.
	if r, err := ParseFoldRule(`x=tmux:^a=b:c$`); err != nil || r.Kind != KindTmux || r.Match.String() != "^a=b:c$" {
		t.Errorf("got %+v, %v", r, err)
	}
	for in, want := range map[string]string{
		"logins":                      "want NAME=KIND:REGEX",
		"logins=cgroup":               "want NAME=KIND:REGEX",
		"=cgroup:x":                   "want NAME=KIND:REGEX",
		"logins=cgroup:":              "want NAME=KIND:REGEX",
		"logins=cgroup:(":             "missing closing )",
		"logins=pods:x":               "kinds are tmux",
		"all=agent:^claude/":          "agent sessions cannot be folded",
		"  =cgroup:^session-\\d+\\.s": "want NAME=KIND:REGEX",
	} {
		if _, err := ParseFoldRule(in); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFoldRule(%q) = %v, want ErrBadConfig saying %q", in, err, want)
		}
	}
}

// foldSnapshot: two login scopes of one user (pids 10 and 20, 20 with a
// child 21), nginx (30) and a docker container (40).
func foldSnapshot(t *testing.T, cpu int) *procwalk.Snapshot {
	s := synthetic(time.Unix(1700000000, 0), [6]int{10, 1, 10, cpu, 100, 1}, [6]int{20, 1, 20, cpu, 200, 2},
		[6]int{21, 20, 20, cpu, 400, 4}, [6]int{30, 1, 30, 1, 0, 0}, [6]int{40, 1, 40, 1, 0, 0})
	s.Fields |= procwalk.FieldCgroup
	for i, path := range []string{"/user.slice/user-1000.slice/session-3.scope", "/user.slice/user-1000.slice/session-4.scope",
		"/user.slice/user-1000.slice/session-4.scope", "/system.slice/nginx.service", "/system.slice/docker-0123456789abcdef.scope"} {
		s.Procs[i].Cgroups = []procwalk.CgroupLine{{Path: path}}
		s.Procs[i].Read |= procwalk.FieldCgroup
	}
	return s
}

func TestFoldCgroupSessions(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Options{Kinds: []string{KindCgroup}, CgroupRoot: t.TempDir(), DangerPercent: DefaultDangerPercent,
		Fold: []string{`logins=cgroup:^session-[0-9]+\.scope$`, `docker/$1=cgroup:^docker-([0-9a-f]{6})`}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := g.Group(foldSnapshot(t, 3))
	var got []string
	for _, ss := range sessions {
		got = append(got, fmt.Sprintf("%s members=%v roots=%v folded=%s unit=%s slice=%s cpu=%v read=%d",
			ss.Name, memberPIDs(&ss), rootPIDs(&ss), ss.Attrs[AttrFolded], ss.Attrs[AttrUnit], ss.Attrs[AttrSlice],
			ss.Totals.CumulativeCPUSeconds, ss.Totals.CumulativeReadBytes))
	}
	want := []string{
		// Renamed alone: its attributes stay.
		"docker/012345 members=[40] roots=[40] folded=1 unit=docker-0123456789abcdef.scope slice=system.slice cpu=1 read=0",
		// Merged: the attributes both scopes share (the slice), not their units.
		"logins members=[10 20 21] roots=[10 20] folded=2 unit= slice=user-1000.slice cpu=9 read=700",
		"nginx.service members=[30] roots=[30] folded= unit=nginx.service slice=system.slice cpu=1 read=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sessions\n got %q\nwant %q", got, want)
	}

	// session-3.scope ends; the folded session's cumulative counters keep
	// what its member used.
	next := foldSnapshot(t, 5)
	next.Procs = slices.Delete(next.Procs, 0, 1)
	next = procwalk.NewSnapshot(next.Host, next.Fields, 0, next.Procs, procwalk.Visibility{})
	sessions, _ = g.Group(next)
	logins, err := Find(sessions, "cgroup:logins")
	if err != nil {
		t.Fatal(err)
	}
	// 9 s at the first gather, +2 s for each of 20 and 21 since.
	if got := logins.Totals.CumulativeCPUSeconds; got != 13 || !slices.Equal(memberPIDs(logins), []int{20, 21}) {
		t.Errorf("after session-3.scope ended: cpu %v, members %v; want 13 s, [20 21]", got, memberPIDs(logins))
	}
}

// A fold into the name of a session that exists merges them; trees that
// overlap count a shared process once.
func TestFoldOverlappingTrees(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	s := synthetic(time.Unix(1700000000, 0), [6]int{10, 1, 10, 1, 0, 0}, [6]int{11, 10, 10, 1, 0, 0}, [6]int{12, 11, 10, 1, 0, 0})
	sessions, _, err := Group(fs, s, Config{Kinds: []string{KindTree}, Trees: []TreeSpec{{Name: "outer", PID: 10}, {Name: "inner", PID: 11}},
		Fold: []FoldRule{{Name: "outer", Kind: KindTree, Match: regexp.MustCompile("^inner$")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].Name != "outer" || !slices.Equal(memberPIDs(&sessions[0]), []int{10, 11, 12}) ||
		!slices.Equal(rootPIDs(&sessions[0]), []int{10}) || sessions[0].Totals.Procs != 3 {
		t.Errorf("got %+v, want one tree outer of 10, 11 and 12 counted once", sessions)
	}
}

func TestFoldConfigErrors(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Options{DangerPercent: DefaultDangerPercent, Fold: []string{"x=agent:."}}.Config()
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "fold" || !strings.Contains(err.Error(), "agent sessions cannot be folded") {
		t.Errorf("Options.Config: %v, want an OptionError of fold", err)
	}
	for _, r := range []FoldRule{{Name: "x", Kind: KindAgent, Match: regexp.MustCompile(".")}, {Name: "", Kind: KindCgroup, Match: regexp.MustCompile(".")},
		{Name: "x", Kind: KindCgroup}} {
		if _, err := NewGrouper(fs, Config{Fold: []FoldRule{r}}); !errors.Is(err, ErrBadConfig) {
			t.Errorf("NewGrouper with %+v: %v, want ErrBadConfig", r, err)
		}
	}
}
