//go:build linux

package kill_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// A pid resolves to its process's identity (pid and start ticks, field 22
// of its stat); a pid not running is an error naming the root.
func TestResolvePID(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/kill/proc")
	if err != nil {
		t.Fatal(err)
	}
	id, err := kill.ResolvePID(fs, 1)
	if err != nil || id != (procwalk.ProcID{PID: 1, StartTicks: 5}) {
		t.Errorf("pid 1: %+v, %v; want start ticks 5", id, err)
	}
	if _, err := kill.ResolvePID(fs, 4242); err == nil || !strings.Contains(err.Error(), "pid 4242 is not running (not in testdata/kill/proc)") {
		t.Errorf("pid 4242: %v", err)
	}
}

// ParseID: a pid resolves now, PID@STARTTICKS is taken as it is, and a
// text that is neither says what it wants (ErrBadID).
func TestParseID(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/kill/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in      string
		want    procwalk.ProcID
		err     string
		wantBad bool
	}{
		{"1", procwalk.ProcID{PID: 1, StartTicks: 5}, "", false},
		{"84@7", procwalk.ProcID{PID: 84, StartTicks: 7}, "", false}, // taken as it is: the kill's plan checks it
		{"4242", procwalk.ProcID{}, "pid 4242 is not running", false},
		{"0", procwalk.ProcID{}, `"0": want a positive pid, or PID@STARTTICKS`, true},
		{"x@5", procwalk.ProcID{}, `"x@5": want a positive pid, or PID@STARTTICKS`, true},
		{"84@soon", procwalk.ProcID{}, `"84@soon": start ticks "soon" are not a number`, true},
	} {
		got, err := kill.ParseID(fs, tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && (!strings.Contains(err.Error(), tt.err) || errors.Is(err, kill.ErrBadID) != tt.wantBad) {
			t.Errorf("ParseID(%q) = %v, %v; want %v, %q (ErrBadID %v)", tt.in, got, err, tt.want, tt.err, tt.wantBad)
		}
	}
}

// FindSession: pgrp:N is the group without a scan; another kind's
// session is found by grouping that kind, with its members; one that is
// not there is an error; bad options are session's errors.
func TestFindSession(t *testing.T) {
	fs, err := procwalk.NewFS("testdata/kill/proc")
	if err != nil {
		t.Fatal(err)
	}
	scope, _, err := kill.FindSession(fs, "pgrp:81", session.Options{}, false)
	if g, ok := scope.(kill.GroupScope); err != nil || !ok || g.PGRP != 81 {
		t.Errorf("pgrp:81: %#v, %v; want GroupScope 81", scope, err)
	}
	scope, _, err = kill.FindSession(fs, "sid:80", session.Options{}, false)
	ss, ok := scope.(*kill.SessionScope)
	if err != nil || !ok || ss.Ref != "sid:80" || len(ss.IDs) != 6 {
		t.Fatalf("sid:80: %#v, %v; want its session scope, 6 members (80 to 85)", scope, err)
	}
	if _, _, err := kill.FindSession(fs, "sid:4242", session.Options{}, false); err == nil {
		t.Error("sid:4242: no error for a session that is not there")
	}
	if _, _, err := kill.FindSession(fs, "bogus:1", session.Options{}, false); !errors.Is(err, session.ErrUnknownKind) {
		t.Errorf("bogus:1: %v; want ErrUnknownKind", err)
	}
	_, _, err = kill.FindSession(fs, "sid:80", session.Options{DangerPercent: -3}, false)
	var oe *session.OptionError
	if !errors.Is(err, session.ErrBadConfig) && !errors.As(err, &oe) {
		t.Errorf("a negative danger percent: %v; want a bad config", err)
	}
}
