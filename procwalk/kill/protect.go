//go:build linux

package kill

import (
	"errors"
	"fmt"
	"path"

	"github.com/procwalk/procwalk/procwalk"
)

// protect.go decides which processes must never be signalled.
//
// Hard rules, which nothing overrides: procwalk itself, its ancestors (the
// shell, tmux pane or supervisor that started it), pid 1 and kernel
// threads. Then a configurable list of names whose loss takes a machine or
// many sessions down (sshd, the tmux server, container shims ...); a force
// option overrides the list, never the hard rules.

// ErrProtected means a target was refused because it is protected. The
// wrapping *ProtectedError says why.
var ErrProtected = errors.New("protected process")

// ProtectedError explains a refusal.
type ProtectedError struct {
	PID  int
	Comm string
	// Hard is true for the rules nothing overrides (self, ancestors, pid 1,
	// kernel threads); false for a match in the protected list.
	Hard   bool
	Reason string
}

func (e *ProtectedError) Error() string {
	s := fmt.Sprintf("pid %d (%s) is protected: %s", e.PID, e.Comm, e.Reason)
	if !e.Hard {
		s += "; kill --force overrides the protected list"
	}
	return s
}

func (e *ProtectedError) Unwrap() error { return ErrProtected }

// DefaultProtected returns the protected name patterns used when a
// Config has none: init systems, remote access, the tmux server,
// container runtimes and infrastructure sidecars, web terminals and IDEs
// people reach their sessions through. Patterns are path.Match globs.
func DefaultProtected() []string {
	return []string{
		"init", "systemd",
		"sshd", "sshd-session", "sshd-auth", "sshd:*",
		"tmux: server",
		"containerd", "containerd-shim*", "conmon", "dockerd", "runc",
		"kubelet", "pause", "envoy", "pilot-agent",
		"ttyd", "jupyter-lab", "jupyter-server", "code-server",
		// The same two run as modules: python3 -m jupyterlab.
		"jupyterlab", "jupyter_server",
	}
}

// protectedNames are the names a protected pattern is matched against: the
// comm, argv[0]'s base name and, for an interpreter, what it runs (see
// interpreted).
func protectedNames(p *procwalk.Process) []string {
	names := []string{p.Comm}
	if len(p.Cmdline) > 0 {
		a0 := path.Base(p.Cmdline[0])
		names = append(names, a0)
		for _, name := range []string{a0, p.Comm} {
			if script, ok := interpreted(name, p.Cmdline[1:]); ok {
				names = append(names, script)
				break
			}
		}
	}
	return names
}

// matchProtected returns the first pattern matching p, or "".
func matchProtected(p *procwalk.Process, patterns []string) string {
	for _, name := range protectedNames(p) {
		for _, pat := range patterns {
			if ok, _ := path.Match(pat, name); ok {
				return pat
			}
		}
	}
	return ""
}

// ValidateProtected checks that every pattern is a valid glob.
func ValidateProtected(patterns []string) error {
	for _, pat := range patterns {
		if _, err := path.Match(pat, ""); err != nil || pat == "" {
			return fmt.Errorf("bad protected pattern %q: want a name or a glob such as containerd-shim*", pat)
		}
	}
	return nil
}

// ProtectedPlus is DefaultProtected with extra patterns added (a user's
// --protect), each checked as ValidateProtected does; nil when extra is
// empty, which a Config reads as the default list.
func ProtectedPlus(extra []string) ([]string, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	if err := ValidateProtected(extra); err != nil {
		return nil, err
	}
	return append(DefaultProtected(), extra...), nil
}

// guardRails holds what the hard rules need: our own pid and the pids of
// our ancestors, read once per plan.
type guardRails struct {
	self int
	// sentinel is the pid of procwalk's sentinel (0: none), procwalk's
	// own as much as self.
	sentinel  int
	ancestors map[int]bool
	// cutsTrees: a refused process shields its descendants (tree scopes).
	cutsTrees bool
}

// hardRule returns why p may never be signalled, or nil.
func (g *guardRails) hardRule(p *procwalk.Process) *ProtectedError {
	refuse := func(reason string) *ProtectedError {
		return &ProtectedError{PID: p.ID.PID, Comm: p.Comm, Hard: true, Reason: reason}
	}
	switch pid := p.ID.PID; {
	case pid == 1:
		return refuse("pid 1 (init) is never signalled")
	case pid == g.self:
		return refuse("it is procwalk itself")
	case pid == g.sentinel && pid != 0:
		return refuse("it is procwalk's sentinel")
	case g.ancestors[pid]:
		return refuse("it is an ancestor of procwalk (its parent chain)")
	case p.Kernel:
		// PF_KTHREAD alone says so: inside a pid namespace (a container,
		// bwrap, a shell as pid 1) pid 2 and its children are ordinary
		// processes, and a rule on pid 2 would shield all of them.
		return refuse("it is a kernel thread")
	}
	return nil
}
