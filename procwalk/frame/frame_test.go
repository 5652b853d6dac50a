//go:build linux

package frame

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

func fixtureFS(t *testing.T) procwalk.FS {
	t.Helper()
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// recycled runs fn and returns the RecycledError it panicked with, or nil.
func recycled(fn func()) (e *RecycledError) {
	defer func() {
		if r := recover(); r != nil {
			var ok bool
			if e, ok = r.(*RecycledError); !ok {
				panic(r)
			}
		}
	}()
	fn()
	return nil
}

// TestGenerationCheck checks that a frame used after its pipeline recycled
// its storage panics, per retention, and that one still valid does not.
func TestGenerationCheck(t *testing.T) {
	for _, tc := range []struct {
		retention Retention
		valid     []bool // of frames 1..3 once the third is gathered
	}{
		{Recycle, []bool{false, false, true}},
		{HoldLast, []bool{false, true, true}},
		{KeepAll, []bool{true, true, true}},
	} {
		t.Run(tc.retention.String(), func(t *testing.T) {
			p := New(fixtureFS(t), Config{Memory: Memory{Retention: tc.retention}})
			var frames []Frame
			for range 3 {
				f, err := p.Gather()
				if err != nil {
					t.Fatal(err)
				}
				frames = append(frames, f)
			}
			for i, f := range frames {
				e := recycled(func() { f.ReadMore([]*procwalk.Process{}, procwalk.FieldCmdline) })
				if got := e == nil; got != tc.valid[i] {
					t.Errorf("frame %d: valid %v (%v), want %v", f.Generation, got, e, tc.valid[i])
				}
				if e != nil && (e.Generation != f.Generation || e.Newest != 3) {
					t.Errorf("frame %d: %v; want it to name generations %d and 3", f.Generation, e, f.Generation)
				}
			}
			if tc.retention == Recycle && frames[2].Snapshot.Process(1) == nil {
				t.Error("the newest frame lost its processes")
			}
			// Release hands everything back: no frame is valid after it,
			// but with KeepAll, which hands nothing back.
			p.Release()
			if e := recycled(frames[2].Check); (e == nil) != (tc.retention == KeepAll) {
				t.Errorf("the newest frame after Release: %v", e)
			}
		})
	}
}

// TestPrimeCountsAsAScan checks that Prime's scan, which reuses storage as
// a gather's does, moves the generations too.
func TestPrimeCountsAsAScan(t *testing.T) {
	p := New(fixtureFS(t), Config{Memory: Memory{Retention: HoldLast}})
	f, err := p.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Prime(); err != nil {
		t.Fatal(err)
	}
	f.Check() // held: the last before the prime
	if _, err := p.Gather(); err != nil {
		t.Fatal(err)
	}
	if e := recycled(f.Check); e == nil || e.Newest != 3 {
		t.Errorf("a frame two scans back: %v; want a RecycledError at generation 3", e)
	}
}

// TestGrouperIsTheLastStage checks that frames carry the Grouper's
// sessions and notes, and that SetGrouper takes effect at the next gather.
func TestGrouperIsTheLastStage(t *testing.T) {
	fs, err := procwalk.NewFS("../session/testdata/sessions/proc")
	if err != nil {
		t.Fatal(err)
	}
	tmux, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindTmux}, Tmux: session.TmuxConfig{
		Sockets:   []string{"/tmp/tmux-1000/default"},
		ListPanes: func(string) ([]byte, error) { return os.ReadFile("../session/testdata/sessions/tmux/default.txt") },
	}})
	if err != nil {
		t.Fatal(err)
	}
	users, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindUser}})
	if err != nil {
		t.Fatal(err)
	}
	p := New(fs, Config{Grouper: tmux})
	kinds := func() map[string]int {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, s := range f.Sessions {
			n[s.Kind]++
		}
		return n
	}
	if got := kinds(); got[session.KindTmux] != 2 || len(got) != 1 {
		t.Errorf("tmux grouper: sessions by kind %v, want 2 tmux", got)
	}
	p.SetGrouper(users)
	if got := kinds(); got[session.KindUser] == 0 || len(got) != 1 {
		t.Errorf("after SetGrouper(users): sessions by kind %v, want users alone", got)
	}
	p.SetGrouper(nil)
	if got := kinds(); len(got) != 0 {
		t.Errorf("after SetGrouper(nil): sessions by kind %v, want none", got)
	}
}

// TestDurationHoldsGrouping checks that a frame's Duration is the whole
// gather: the scan and the grouping after it (here a tmux query that takes
// at least 20 ms), not the scan alone. tmux is asked while /proc is read
// (Grouper.Prepare prefetches), so the query's time overlaps the scan's:
// the bound is the query's, not the sum.
func TestDurationHoldsGrouping(t *testing.T) {
	fs, err := procwalk.NewFS("../session/testdata/sessions/proc")
	if err != nil {
		t.Fatal(err)
	}
	const query = 20 * time.Millisecond
	tmux, err := session.NewGrouper(fs, session.Config{Kinds: []string{session.KindTmux}, Tmux: session.TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default"},
		ListPanes: func(string) ([]byte, error) {
			time.Sleep(query) // a lower bound on the grouping's time, not a wait for anything
			return os.ReadFile("../session/testdata/sessions/tmux/default.txt")
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(fs, Config{Grouper: tmux}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sessions) == 0 {
		t.Fatal("no tmux session: the query was not made")
	}
	if f.Duration < query || f.Duration < f.Snapshot.Duration {
		t.Errorf("frame Duration %v, want at least the tmux query's %v and the scan's %v", f.Duration, query, f.Snapshot.Duration)
	}
}

// TestSystemWhenAsked checks that the host's figures come with a frame
// when the config asks, and only then.
func TestSystemWhenAsked(t *testing.T) {
	for _, want := range []bool{false, true} {
		f, err := New(fixtureFS(t), Config{System: want}).Gather()
		if err != nil {
			t.Fatal(err)
		}
		if f.System.HaveLoad != want || f.System.HaveMemory != want {
			t.Errorf("System %v: load %v, memory %v", want, f.System.HaveLoad, f.System.HaveMemory)
		}
	}
}

// failingSource fails every scan after the first n.
type failingSource struct {
	*procwalk.Scanner
	n int
}

var errGone = errors.New("the root went away")

func (s *failingSource) SnapshotSelect(f procwalk.Fields, sel procwalk.Selector) (*procwalk.Snapshot, error) {
	if s.n == 0 {
		return nil, errGone
	}
	s.n--
	return s.Scanner.SnapshotSelect(f, sel)
}

// TestRun checks the driver: a frame per trigger, a failed gather handed
// on and survived, ErrStop and other errors, and the memory policy
// between frames.
func TestRun(t *testing.T) {
	fs := fixtureFS(t)
	p := New(fs, Config{Source: &failingSource{Scanner: procwalk.NewScanner(fs), n: 2}, Memory: Memory{Return: true}})
	var got []string
	var last Frame
	err := p.Run(context.Background(), Count(Every(1, true), 4), func(f Frame, err error) error {
		switch {
		case err != nil:
			got = append(got, err.Error())
		default:
			got = append(got, "frame")
			last = f
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"frame", "frame", errGone.Error(), errGone.Error()}
	if len(got) != len(want) {
		t.Fatalf("Run handed %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: %q, want %q", i, got[i], want[i])
		}
	}
	// Memory.Return released the frames between calls.
	if e := recycled(last.Check); e == nil {
		t.Error("a frame is valid after Run returned its memory")
	}

	calls := 0
	p = New(fs, Config{})
	stop := func(ret error) error {
		calls = 0
		return p.Run(context.Background(), Every(1, true), func(Frame, error) error {
			if calls++; calls == 2 {
				return ret
			}
			return nil
		})
	}
	if err := stop(ErrStop); err != nil || calls != 2 {
		t.Errorf("ErrStop: Run returned %v after %d calls, want nil after 2", err, calls)
	}
	if err := stop(errGone); !errors.Is(err, errGone) || calls != 2 {
		t.Errorf("an error: Run returned %v after %d calls, want it after 2", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	if err := p.Run(ctx, Every(1, true), func(Frame, error) error { calls++; return nil }); err != nil || calls != 0 {
		t.Errorf("cancelled: Run returned %v after %d calls, want nil, none", err, calls)
	}
}

// A session's members' smaps_rollup is read of them alone, and their PSS
// added to its totals; a member gone from the snapshot is skipped, one
// whose file holds nothing (pid 202, a kernel thread's) counts no PSS.
func TestReadMembersSmaps(t *testing.T) {
	fs, err := procwalk.NewFS("../testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(fs, Config{NoRates: true}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Kind: "tree", Name: "x"}
	for _, pid := range []int{102, 202, 99999} {
		id := procwalk.ProcID{PID: pid}
		if p := f.Snapshot.Process(pid); p != nil {
			id = p.ID
			if p.Read&procwalk.FieldSmaps != 0 {
				t.Fatalf("pid %d: smaps read by the scan", pid)
			}
		}
		s.Members = append(s.Members, id)
	}
	if err := f.ReadMembersSmaps(s); err != nil {
		t.Fatal(err)
	}
	if s.Totals.SmapsRead != 1 || s.Totals.PSSBytes != 1300<<10 {
		t.Errorf("smaps read %d, PSS %d; want 1, 1300 kB (pid 102's)", s.Totals.SmapsRead, s.Totals.PSSBytes)
	}
	if other := f.Snapshot.Process(204); other.Read&procwalk.FieldSmaps != 0 {
		t.Error("pid 204, no member, was read")
	}
}
