package session

import (
	"slices"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// TestKindsInfoFromFixture checks the INFO text each kind gives its
// sessions of the fixture, as the sessions table shows it.
func TestKindsInfoFromFixture(t *testing.T) {
	users, err := procwalk.ReadUsers("testdata/sessions/passwd")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	sessions, _, _ := groupFixture(t, sessionFixture, Config{Kinds: []string{KindSID, KindPGRP, KindTTY, KindUser},
		Tmux: fixtureTmux(t, &calls), Users: users})
	for _, tt := range []struct{ ref, want string }{
		{"sid:202", "leader bash, pts/0"},
		{"pgrp:1", "leader systemd"},
		{"tty:pts/3", ""},
		{"user:nginx", "uid 101"},
	} {
		if got := find(t, sessions, tt.ref).Info(); got != tt.want {
			t.Errorf("%s Info() = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

// TestKindInfoOfBuiltSessions checks INFO of sessions built by hand (a
// library user's, a test's): the kind is found by name.
func TestKindInfoOfBuiltSessions(t *testing.T) {
	for _, tt := range []struct {
		s    Session
		want string
	}{
		{Session{Kind: KindSID, Name: "7", Attrs: map[string]string{}}, "leader gone"},
		{Session{Kind: KindTree, Attrs: map[string]string{AttrCommand: "make"}}, "make"},
		{Session{Kind: KindTmux, Attrs: map[string]string{AttrWindows: "1", AttrPanes: "2", AttrAttached: "1", AttrSocket: "/tmp/tmux-0/default"}},
			"1 window, 2 panes, attached, socket default"},
		{Session{Kind: KindCgroup, Name: "pod/x", Attrs: map[string]string{AttrPodUID: "x", AttrPod: "web", AttrNamespace: "prod", AttrQoS: "burstable"},
			Totals: Totals{Cgroup: &CgroupUsage{MemoryLimitBytes: 512 << 20, HaveMemoryUsage: true, MemoryPercent: 90, CPUQuotaCores: 0.5, CPUCoresUsed: 0.4, Danger: true}}},
			"pod prod/web, burstable, mem 90.0% of 512.0 MiB, cpu 0.40 of 0.50 cores, DANGER"},
		{Session{Kind: KindCgroup, Name: "nginx.service", Attrs: map[string]string{AttrUnit: "nginx.service"}}, ""},
		{Session{Kind: "bogus", Partial: true}, "partial: see the note"},
	} {
		if got := tt.s.Info(); got != tt.want {
			t.Errorf("%s:%s Info() = %q, want %q", tt.s.Kind, tt.s.Name, got, tt.want)
		}
	}
}

// TestKindTable checks what the Grouper and its consumers rely on: one kind
// per name, Kinds in the table's order, and the attributes Telegraf tags
// (the same six the first landing wrote, each from the kind that sets it).
func TestKindTable(t *testing.T) {
	want := []string{KindTmux, KindSID, KindPGRP, KindTTY, KindTree, KindCgroup, KindUser, KindAgent, KindGroup}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	tags := map[string][]string{}
	for _, k := range kindTable() {
		if ta := k.tagAttrs(); len(ta) > 0 {
			tags[k.name()] = ta
		}
	}
	wantTags := map[string][]string{KindCgroup: {AttrPod, AttrNamespace, AttrUnit}, KindUser: {AttrUser}, KindAgent: {AttrAgent, AttrStatus}}
	if len(tags) != len(wantTags) {
		t.Errorf("kinds with tags = %v, want %v", tags, wantTags)
	}
	for k, w := range wantTags {
		if !slices.Equal(tags[k], w) {
			t.Errorf("%s tags = %v, want %v", k, tags[k], w)
		}
	}
	// JSON's numbers: the same seven attributes as before the kinds said.
	var numbers []string
	for _, k := range kindTable() {
		numbers = append(numbers, k.numberAttrs()...)
	}
	slices.Sort(numbers)
	wantNumbers := []string{AttrAttached, AttrElapsedSecs, AttrNested, AttrPanes, AttrRule, AttrUID, AttrWindows}
	slices.Sort(wantNumbers)
	if !slices.Equal(numbers, wantNumbers) {
		t.Errorf("number attrs = %v, want %v", numbers, wantNumbers)
	}
	// A Grouper owns its kinds: two Groupers share no state.
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	g1, _ := NewGrouper(fs, Config{})
	g2, _ := NewGrouper(fs, Config{})
	if g1.kind(KindAgent) == g2.kind(KindAgent) {
		t.Error("two Groupers share their agent kind")
	}
	// Only the configured kinds, in table order.
	g, err := NewGrouper(fs, Config{Kinds: []string{KindUser, KindTmux}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range g.kinds {
		names = append(names, k.name())
	}
	if !slices.Equal(names, []string{KindTmux, KindUser}) {
		t.Errorf("configured kinds = %v, want [tmux user]", names)
	}
}
