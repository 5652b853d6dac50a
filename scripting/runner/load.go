//go:build linux

package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/procwalk/procwalk/scripting"
	"github.com/procwalk/procwalk/scripts"
)

// load.go finds the script a command line names: a file, or a script
// bundled with procwalk (package scripts).

// ErrBadScript marks an error of the script named, the caller's to fix:
// no such script, or one that does not compile.
var ErrBadScript = errors.New("bad script")

// badScript is err, its message unchanged, marked ErrBadScript.
type badScript struct{ error }

func (e badScript) Unwrap() []error { return []error{e.error, ErrBadScript} }

// Load compiles the script name names: a file when the name has a slash
// or ends in .lua, else a bundled script, else a file in the current
// directory. A missing script or a syntax error wraps ErrBadScript; a
// bundled script that does not compile is a bug in procwalk, and does not.
func Load(name string) (*scripting.Script, error) {
	explicitFile := strings.Contains(name, "/") || strings.HasSuffix(name, ".lua")
	if !explicitFile {
		if b, ok := scripts.Lookup(name); ok {
			s, err := scripting.Compile(b.Name+".lua", b.Source)
			if err != nil {
				return nil, fmt.Errorf("bundled script %s: %v", name, err)
			}
			return s, nil
		}
	}
	s, err := scripting.LoadFile(name)
	switch {
	case errors.Is(err, scripting.ErrNotFound) && !explicitFile:
		return nil, badScript{fmt.Errorf("no script %q: not a bundled script (%s) and no such file", name, strings.Join(scripts.Names(), ", "))}
	case errors.Is(err, scripting.ErrNotFound), errors.Is(err, scripting.ErrCompile):
		return nil, badScript{err}
	}
	return s, err
}
