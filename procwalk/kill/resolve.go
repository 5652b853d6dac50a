//go:build linux

package kill

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// resolve.go finds what a person names for a kill: the process a pid
// names now, the identity a kill's scope pins (ProcessScope, TreeScope),
// so that a pid reused later is never signalled; and a session by its
// KIND:NAME.

// ResolvePID is the identity of the process with pid now, read from fs.
// A pid that hidepid hides, and one not running, are errors that say so
// and what to do.
func ResolvePID(fs procwalk.FS, pid int) (procwalk.ProcID, error) {
	f, err := frame.New(fs, frame.Config{NoRates: true}).Gather()
	if err != nil {
		return procwalk.ProcID{}, err
	}
	p := f.Snapshot.Process(pid)
	if p == nil && fs.Hidden(pid) {
		return procwalk.ProcID{}, fmt.Errorf("pid %d is hidden: it runs, but %s does not show it to this user (hidepid); run as root to act on it", pid, fs.Root())
	}
	if p == nil {
		return procwalk.ProcID{}, fmt.Errorf("pid %d is not running (not in %s); procwalk ps lists the pids", pid, fs.Root())
	}
	return p.ID, nil
}

// ErrBadID is wrapped by ParseID's errors for a text that is no pid.
var ErrBadID = errors.New("not a pid")

// badID is an error of ParseID's that says what was wrong with the text
// alone, and is ErrBadID.
type badID string

func (b badID) Error() string        { return string(b) }
func (b badID) Is(target error) bool { return target == ErrBadID }

// ParseID reads "PID", the process with that pid now (ResolvePID), or
// "PID@STARTTICKS", exactly that process (ProcID.String's form), which
// a later process with the same pid is not.
func ParseID(fs procwalk.FS, s string) (procwalk.ProcID, error) {
	pidText, ticksText, pinned := strings.Cut(s, "@")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return procwalk.ProcID{}, badID(fmt.Sprintf("%q: want a positive pid, or PID@STARTTICKS", s))
	}
	if !pinned {
		return ResolvePID(fs, pid)
	}
	ticks, err := strconv.ParseUint(ticksText, 10, 64)
	if err != nil {
		return procwalk.ProcID{}, badID(fmt.Sprintf("%q: start ticks %q are not a number", s, ticksText))
	}
	return procwalk.ProcID{PID: pid, StartTicks: ticks}, nil
}

// FindSession is the scope of session ref (KIND:NAME) on fs. A process
// group's (pgrp:N) is the group itself, which outlives its leader; any
// other is found by grouping ref's kind alone, by opts (its Kinds set
// here; a zero DangerPercent the default), in one scan without rates. killTmux is NewSessionScope's. When
// no session matches, notes say why (no tmux server, no process
// matches). A bad opts is a *session.OptionError, or wraps
// session.ErrBadConfig.
func FindSession(fs procwalk.FS, ref string, opts session.Options, killTmux bool) (scope Scope, notes []string, err error) {
	kind, name, err := session.ParseRef(ref)
	if err != nil {
		return nil, nil, err
	}
	if kind == session.KindPGRP {
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			return GroupScope{PGRP: n}, nil, nil
		}
	}
	opts.Kinds = []string{kind}
	if opts.DangerPercent == 0 {
		opts.DangerPercent = session.DefaultDangerPercent // no kill's business, but Config checks it
	}
	cfg, err := opts.Config()
	if err != nil {
		return nil, nil, err
	}
	cfg.Once = true // one frame: nothing kept for a next gather
	grouper, err := session.NewGrouper(fs, cfg)
	if err != nil {
		return nil, nil, err
	}
	f, err := frame.New(fs, frame.Config{Grouper: grouper, NoRates: true}).Gather()
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Find(f.Sessions, ref)
	if err != nil {
		return nil, f.Notes, err
	}
	return NewSessionScope(s, killTmux), nil, nil
}
