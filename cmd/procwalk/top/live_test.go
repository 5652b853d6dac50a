//go:build linux

package top

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// The live source gathers what each request needs on its driver's
// goroutine: every session kind for a sessions view (its grouper made
// again after a process view dropped it), the gauges' cgroups alone
// otherwise, and the fields asked of every process; shown runs on the
// frame before it is handed over. After Close, Gather fails at once.
func TestLiveSource(t *testing.T) {
	fs, err := procwalk.NewFS(fixtureProc)
	if err != nil {
		t.Fatal(err)
	}
	grouper := func(kinds ...string) *session.Grouper {
		g, err := session.NewGrouper(fs, session.Config{Kinds: kinds})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	made := 0
	cfg := LiveConfig{Processes: grouper(session.KindCgroup), NewSessions: func() (*session.Grouper, error) {
		made++
		return grouper(session.KindSID, session.KindUser), nil
	}}
	cfg.Pipeline = frame.New(fs, frame.Config{Grouper: cfg.Processes, Memory: frame.Memory{Retention: frame.HoldLast},
		Clock: &stepClock{t: time.Unix(1700000000, 0), step: time.Second}})
	s := NewLiveSource(context.Background(), cfg)
	kinds := func(f Frame) map[string]int {
		n := map[string]int{}
		for _, s := range f.Sessions {
			n[s.Kind]++
		}
		return n
	}
	ran := false
	f, err := s.Gather(Need{Every: procwalk.FieldCmdline}, func(Frame) { ran = true })
	if err != nil || !ran || f.Snapshot.Fields&procwalk.FieldCmdline == 0 || kinds(f)[session.KindSID] != 0 {
		t.Fatalf("process view: %v, shown ran %v, fields %v, kinds %v", err, ran, f.Snapshot.Fields, kinds(f))
	}
	f, err = s.Gather(Need{Sessions: true}, nil)
	if err != nil || kinds(f)[session.KindSID] == 0 || kinds(f)[session.KindUser] == 0 || made != 1 {
		t.Fatalf("sessions view: %v, kinds %v, %d groupers made", err, kinds(f), made)
	}
	if _, err := s.Gather(Need{}, nil); err != nil {
		t.Fatal(err)
	}
	if f, err = s.Gather(Need{Sessions: true}, nil); err != nil || kinds(f)[session.KindSID] == 0 || made != 2 {
		t.Fatalf("sessions view again: %v, kinds %v, %d groupers made", err, kinds(f), made)
	}
	s.Close()
	if _, err := s.Gather(Need{}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// Every field of LiveConfig but Pipeline may be left zero: no Processes
// groups nothing (no gauges); no NewSessions keeps Sessions for good, and
// with neither a sessions view's Gather fails with ErrNoSessions, the
// source serving on (it called a nil NewSessions on its driver's
// goroutine). A nil Pipeline panics in NewLiveSource.
func TestLiveSourceZeroFields(t *testing.T) {
	fs, err := procwalk.NewFS(fixtureProc)
	if err != nil {
		t.Fatal(err)
	}
	pipeline := func() *frame.Pipeline {
		return frame.New(fs, frame.Config{Memory: frame.Memory{Retention: frame.HoldLast},
			Clock: &stepClock{t: time.Unix(1700000000, 0), step: time.Second}})
	}
	s := NewLiveSource(context.Background(), LiveConfig{Pipeline: pipeline()})
	if f, err := s.Gather(Need{}, nil); err != nil || len(f.Sessions) != 0 || f.Snapshot == nil {
		t.Fatalf("process view, no groupers: %v, %d sessions", err, len(f.Sessions))
	}
	if _, err := s.Gather(Need{Sessions: true}, nil); !errors.Is(err, ErrNoSessions) {
		t.Errorf("sessions view, no groupers: %v; want ErrNoSessions", err)
	}
	if _, err := s.Gather(Need{}, nil); err != nil {
		t.Errorf("after ErrNoSessions: %v", err)
	}
	s.Close()

	g, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindSID}})
	if err != nil {
		t.Fatal(err)
	}
	s = NewLiveSource(context.Background(), LiveConfig{Pipeline: pipeline(), Sessions: g})
	defer s.Close()
	for i, need := range []Need{{Sessions: true}, {}, {Sessions: true}} {
		f, err := s.Gather(need, nil)
		if err != nil || need.Sessions != (len(f.Sessions) > 0) {
			t.Errorf("gather %d (sessions %v), Sessions without NewSessions: %v, %d sessions", i, need.Sessions, err, len(f.Sessions))
		}
	}

	defer func() {
		if recover() == nil {
			t.Error("NewLiveSource without a Pipeline did not panic")
		}
	}()
	NewLiveSource(context.Background(), LiveConfig{})
}
