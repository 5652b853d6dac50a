//go:build linux

package session

import (
	"errors"
	"testing"
)

func TestAddTreeRef(t *testing.T) {
	c := Config{Trees: []TreeSpec{{Name: "db", PID: 42}}}
	for _, ref := range []string{"tree:db", "tmux:build", "tree:1234", "tree:1234@1234.500", "tree:/run/x.pid"} {
		if err := c.AddTreeRef(ref); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	var names []string
	for _, s := range c.Trees {
		names = append(names, s.Name)
	}
	if got, want := len(c.Trees), 3; got != want || names[1] != "1234" || names[2] != "/run/x.pid" || c.Trees[1].PID != 1234 {
		t.Errorf("trees %+v; want db, 1234 (once) and /run/x.pid", c.Trees)
	}
	if err := c.AddTreeRef("tree:"); err == nil {
		t.Error("tree: with no spec is no error")
	}
	if err := c.AddTreeRef("bogus:x"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("bogus kind: %v", err)
	}
}
