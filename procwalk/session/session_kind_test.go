//go:build linux

package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// per name, and the attributes the first landing's kinds give Telegraf as
// tags and JSON as numbers, kept as they were. Which kinds exist, in which
// order, is the README's table of kinds (TestREADMEKindTable); a new kind's
// attributes are its own test's business.
func TestKindTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range kindTable() {
		if seen[k.name()] {
			t.Errorf("two kinds named %q", k.name())
		}
		seen[k.name()] = true
	}
	wantTags := map[string][]string{
		KindTmux: nil, KindSID: nil, KindPGRP: nil, KindTTY: nil, KindTree: nil, KindGroup: nil,
		KindCgroup: {AttrPod, AttrNamespace, AttrUnit}, KindUser: {AttrUser}, KindAgent: {AttrAgent},
	}
	wantNumbers := map[string][]string{
		KindTmux: {AttrPanes, AttrWindows, AttrAttached}, KindAgent: {AttrNested},
		KindGroup: {AttrRule}, KindUser: {AttrUID},
		KindSID: nil, KindPGRP: nil, KindTTY: nil, KindTree: nil, KindCgroup: nil,
	}
	// Every kind: an attribute is a tag or a field of its lines, never
	// both (JSON's numbers are fields).
	for _, k := range kindTable() {
		for _, a := range k.tagAttrs() {
			if slices.Contains(k.numberAttrs(), a) {
				t.Errorf("%s: %s is both a tag and a number", k.name(), a)
			}
		}
	}
	for name, want := range wantTags {
		k := (&Session{Kind: name}).sessionKind()
		if k == nil {
			t.Errorf("no kind %q", name)
			continue
		}
		if got := k.tagAttrs(); !slices.Equal(got, want) {
			t.Errorf("%s tags = %v, want %v", name, got, want)
		}
		got := slices.Sorted(slices.Values(k.numberAttrs()))
		if want := slices.Sorted(slices.Values(wantNumbers[name])); !slices.Equal(got, want) {
			t.Errorf("%s number attrs = %v, want %v", name, got, want)
		}
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

// TestUserNamesFollowPasswd: a long-running Grouper names user sessions
// after the passwd file as it is at each gather (a user renamed by usermod,
// which renames a new file over the old one), not as it was at start.
func TestUserNamesFollowPasswd(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	b, err := os.ReadFile("testdata/sessions/passwd")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passwd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	users, err := procwalk.ReadUsers(passwd)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindUser}, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	m := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g)
	names := func() []string {
		t.Helper()
		s, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		sessions, _ := g.Group(s)
		return namesOf(sessions, KindUser)
	}
	if got := names(); !slices.Contains(got, "nginx") {
		t.Fatalf("first gather: user sessions %q, want nginx among them", got)
	}
	renamed := filepath.Join(filepath.Dir(passwd), "passwd+")
	if err := os.WriteFile(renamed, bytes.Replace(b, []byte("nginx:"), []byte("www-data:"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(renamed, passwd); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Contains(got, "www-data") || slices.Contains(got, "nginx") {
		t.Errorf("after the rename: user sessions %q, want www-data and no nginx", got)
	}
}

func TestParseKinds(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", OverviewKinds()},
		{"all", Kinds()},
		{"tmux", []string{KindTmux}},
		{" agent , cgroup,,", []string{KindAgent, KindCgroup}},
	} {
		got, err := ParseKinds(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseKinds(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	_, err := ParseKinds("tmux,pods")
	if !errors.Is(err, ErrUnknownKind) || err.Error() != `"pods": unknown session kind: kinds are `+strings.Join(Kinds(), ", ")+", or all" {
		t.Errorf("ParseKinds(tmux,pods) error %v; want ErrUnknownKind naming pods and the kinds", err)
	}
	// The overview leaves out the kinds that repeat a pane or a login.
	for _, k := range []string{KindSID, KindPGRP, KindTTY} {
		if slices.Contains(OverviewKinds(), k) {
			t.Errorf("OverviewKinds has %s", k)
		}
	}
}
