//go:build linux

package session

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseTreeSpec(t *testing.T) {
	tests := []struct {
		in   string
		want TreeSpec
	}{
		{"1234", TreeSpec{Name: "1234", PID: 1234}},
		{"web=1234", TreeSpec{Name: "web", PID: 1234}},
		{"/run/nginx.pid", TreeSpec{Name: "nginx", PIDFile: "/run/nginx.pid"}},
		{"db=/run/postgresql/main.pid", TreeSpec{Name: "db", PIDFile: "/run/postgresql/main.pid"}},
		{"postgres", TreeSpec{Name: "postgres", Pattern: regexp.MustCompile("postgres")}},
		{"^job --id=4", TreeSpec{Name: "^job --id=4", Pattern: regexp.MustCompile("^job --id=4")}},
	}
	for _, tt := range tests {
		got, err := ParseTreeSpec(tt.in)
		if err != nil {
			t.Errorf("ParseTreeSpec(%q): %v", tt.in, err)
			continue
		}
		if got.Name != tt.want.Name || got.PID != tt.want.PID || got.PIDFile != tt.want.PIDFile ||
			(got.Pattern == nil) != (tt.want.Pattern == nil) || got.Pattern != nil && got.Pattern.String() != tt.want.Pattern.String() {
			t.Errorf("ParseTreeSpec(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "x=", "0", "(", "x=("} {
		if _, err := ParseTreeSpec(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseTreeSpec(%q) = %v, want ErrBadConfig", bad, err)
		}
	}
}

func TestGroupTrees(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "sshd.pid")
	if err := os.WriteFile(pidfile, []byte("201\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var trees []TreeSpec
	for _, spec := range []string{"203", pidfile, "nginx", "gone=999", "nomatch=^zzz", "/nonexistent/x.pid"} {
		ts, err := ParseTreeSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, ts)
	}
	sessions, notes, snap := groupFixture(t, sessionFixture, Config{Kinds: []string{KindTree}, Trees: trees})
	tests := []struct {
		ref     string
		members []int
	}{
		{"tree:203", []int{203, 204, 205}},
		// Trees may overlap: sshd's tree holds tree:203.
		{"tree:sshd", []int{201, 202, 203, 204, 205, 206, 207, 208}},
		// The oldest process whose command line matches.
		{"tree:nginx", []int{301, 302}},
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
	if len(sessions) != 3 {
		t.Errorf("got %d tree sessions, want 3", len(sessions))
	}
	for _, want := range []string{"tree gone: no process 999", "tree nomatch: no process matches", "tree x: pidfile"} {
		found := false
		for _, n := range notes {
			found = found || strings.HasPrefix(n, want)
		}
		if !found {
			t.Errorf("no note %q in %q", want, notes)
		}
	}
}
