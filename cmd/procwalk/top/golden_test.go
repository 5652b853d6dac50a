//go:build linux

package top

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The screens at 80×24 on the fixture, as they are meant to look: each
// view, Unicode and ASCII. UPDATE_GOLDEN=1 go test ./cmd/procwalk/top -run
// Golden rewrites them: read the diff before committing it.
func TestGolden80(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ascii bool
		keys  []string
	}{
		{"processes", false, nil},
		{"sessions", false, []string{"tab"}},
		{"tree", false, []string{"tab", "tab"}},
		{"tree-ascii", true, []string{"tab", "tab"}},
		{"filter-tree", false, []string{"tab", "tab", "\\", "c", "c", "1", "enter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, k := newFixtureSource(t), &fakeKiller{}
			m := New(Config{Host: "testhost", ASCII: tt.ascii}, src, k)
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			m.Update(m.Init()())
			press(m, tt.keys...)
			m.Update(m.gather()())
			m.plain = true
			got := m.Screen() + "\n"
			golden := filepath.Join("testdata", "screen-80-"+tt.name+".golden")
			if os.Getenv("UPDATE_GOLDEN") == "1" {
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant (%s)\n%s", got, golden, want)
			}
			for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if w := width(l); w > 80 {
					t.Errorf("line %d: %d cells: %q", i, w, l)
				}
			}
		})
	}
}
