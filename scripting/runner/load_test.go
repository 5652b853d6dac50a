//go:build linux

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/scripting"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.lua")
	bad := filepath.Join(dir, "bad.lua")
	os.WriteFile(good, []byte(`print("hi")`), 0o600)
	os.WriteFile(bad, []byte(`print(`), 0o600)
	if s, err := Load("zombies"); err != nil || s.Name != "zombies.lua" {
		t.Errorf("bundled: %v %v", s, err)
	}
	if s, err := Load(good); err != nil || s == nil {
		t.Errorf("file: %v", err)
	}
	for _, tt := range []struct {
		name, want string
		also       error
	}{
		{"nosuch", `no script "nosuch": not a bundled script (`, nil},
		{filepath.Join(dir, "nosuch.lua"), "", scripting.ErrNotFound},
		{bad, "", scripting.ErrCompile},
	} {
		_, err := Load(tt.name)
		if !errors.Is(err, ErrBadScript) || !strings.HasPrefix(err.Error(), tt.want) || tt.also != nil && !errors.Is(err, tt.also) {
			t.Errorf("%s: %v; want ErrBadScript %q %v", tt.name, err, tt.want, tt.also)
		}
	}
}
