//go:build linux

package session

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseGroupRules(t *testing.T) {
	rules, err := ParseGroupRules(strings.NewReader(`
# web servers
web-$1    comm     ^(nginx|redis-server)$
${mode}   cmdline  ^job --(?P<mode>\w+)
shells    name     ^(bash|sh)$
`), "groups.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 || rules[1].Template != "${mode}" || rules[1].Field != "cmdline" || rules[1].Match.String() != `^job --(?P<mode>\w+)` {
		t.Errorf("rules = %+v", rules)
	}
	tests := []struct {
		in, mentions string
	}{
		{"a comm", "groups.conf line 1: want NAME-TEMPLATE FIELD REGEX"},
		{"\n\nx argv .", "groups.conf line 3: unknown field \"argv\""},
		{"x comm (", "groups.conf line 1: error parsing regexp"},
		{"x comm " + strings.Repeat("a", 70<<10), "groups.conf line 1"},
	}
	for _, tt := range tests {
		_, err := ParseGroupRules(strings.NewReader(tt.in), "groups.conf")
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.mentions) {
			t.Errorf("ParseGroupRules(%.20q) = %v, want ErrBadConfig mentioning %q", tt.in, err, tt.mentions)
		}
	}
	if _, err := LoadGroupRules("testdata/sessions/nonexistent.conf"); !errors.Is(err, ErrBadConfig) {
		t.Errorf("missing file: %v", err)
	}
}

func TestGroupRules(t *testing.T) {
	rules, err := ParseGroupRules(strings.NewReader(`
web-$1   comm     ^(nginx|redis-server)$
jobs     cmdline  ^job --id
shells   name     ^bash$
tmux     comm     ^tmux
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	sessions, _, snap := groupFixture(t, sessionFixture, Config{Kinds: []string{KindGroup}, Groups: rules})
	if got, want := namesOf(sessions, KindGroup), []string{"jobs", "shells", "tmux", "web-nginx", "web-redis-server"}; !slices.Equal(got, want) {
		t.Fatalf("groups = %v, want %v", got, want)
	}
	tests := []struct {
		ref     string
		members []int
	}{
		// 341 ("job --worker") does not match but folds into its parent's group.
		{"group:jobs", []int{340, 341}},
		// Both nginx processes; the worker is folded in, not matched.
		{"group:web-nginx", []int{301, 302}},
		// The tmux server takes its panes' shells: a matched ancestor wins
		// over the later rule that would match them.
		{"group:tmux", []int{100, 101, 102, 103, 104, 105, 106, 110, 111}},
		// The ssh login shell and everything below it.
		{"group:shells", []int{202, 203, 204, 205, 206, 207, 208}},
	}
	for _, tt := range tests {
		s := find(t, sessions, tt.ref)
		if got := memberPIDs(s); !slices.Equal(got, tt.members) {
			t.Errorf("%s members = %v, want %v", tt.ref, got, tt.members)
		}
		if want := sumOver(t, snap, tt.members); s.Totals.Totals != want {
			t.Errorf("%s totals = %+v, want %+v", tt.ref, s.Totals.Totals, want)
		}
	}
	if a := find(t, sessions, "group:web-nginx").Attrs; a[AttrRule] != "1" || a[AttrCommand] != "nginx" {
		t.Errorf("attrs = %v", a)
	}
}
