package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	sessions := []string{"build", "work", "default/web", "srv2/web", "monitoring", "agents"}
	for _, tt := range []struct {
		name string
		in   []string
		want []string
	}{
		{"buidl", sessions, []string{"build"}},                                  // a swap
		{"Build", sessions, []string{"build"}},                                  // case
		{"web", sessions, []string{"default/web", "srv2/web"}},                  // a bare name several servers have
		{"wbe", sessions, []string{"default/web", "srv2/web"}},                  // a typo of it
		{"srv2/wbe", sessions, []string{"srv2/web"}},                            // a typo of a qualified name
		{"bui", []string{"a/build", "b/build"}, []string{"a/build", "b/build"}}, // a prefix of it
		{"zzz", []string{"/", "/user.slice/"}, nil},                             // an empty last part is no name
		{"monitor", sessions, []string{"monitoring"}},                           // a prefix
		{"zzz", sessions, nil},
		{"sesions", []string{"ps", "tree", "sessions", "session", "kill"}, []string{"sessions", "session"}},
		{"sort", []string{"sort", "source", "limit"}, []string{"sort"}},
		{"kin", []string{"kind", "kernel", "json"}, []string{"kind"}},
		{"nmae", []string{"name", "rss", "pss"}, []string{"name"}},
	} {
		if got := Closest(tt.name, tt.in, 3); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Closest("a", []string{"ab", "ac", "ad", "ae"}, 2); len(got) != 2 {
		t.Errorf("n not kept: %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"日本", "日本語", 1},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
