//go:build linux

package scripting

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// fixtureTime is the snapshot time tests use: ten days after the fixture's
// boot (btime 1700000000), so that ages are round numbers.
var fixtureTime = time.Unix(1700000000+864000, 0)

// loadSnapshot reads testdata/proc with every field, smaps included, and
// pins its time so that ages are exact.
func loadSnapshot(t testing.TB) *procwalk.Snapshot {
	t.Helper()
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Snapshot(procwalk.AllFields | procwalk.FieldSmaps)
	if err != nil {
		t.Fatal(err)
	}
	snap.Time = fixtureTime
	return snap
}

// loadUsers reads testdata/passwd.
func loadUsers(t testing.TB) *procwalk.Users {
	t.Helper()
	u, err := procwalk.ReadUsers("testdata/passwd")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// recordingEmitter keeps every emitted metric as a sorted one-line string:
// "measurement a=1,b=x | f=1.5,g=true".
type recordingEmitter struct {
	mu    sync.Mutex
	lines []string
	err   error // returned by Emit when set
}

func (e *recordingEmitter) Emit(m string, tags map[string]string, fields map[string]any, t time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	e.lines = append(e.lines, fmt.Sprintf("%s %s | %s @%d", m, joinSorted(tags), joinSorted(fields), t.Unix()))
	return nil
}

func joinSorted[V any](m map[string]V) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// fakeKiller records each kill and answers as the engine would, without
// signalling anything: a dry run reports dry_run, otherwise every member of
// the scope "exited" after TERM (or the result in results by pid).
type fakeKiller struct {
	snap    *procwalk.Snapshot
	calls   []string
	results map[int]kill.Result
	err     error
	// call is what a call takes besides waiting (slept); waited is how
	// long ago the call says it sent its first signal: the wait for the
	// targets, which the run's deadline does not count.
	call, waited time.Duration
}

func (k *fakeKiller) Kill(ctx context.Context, scope kill.Scope, opts KillOptions) (*kill.Report, error) {
	k.calls = append(k.calls, fmt.Sprintf("%s sig=%d grace=%s dry=%v by=%s", scope, opts.Signal, opts.Grace, opts.DryRun, opts.Requester))
	time.Sleep(k.call)
	if k.err != nil {
		return nil, k.err
	}
	r := &kill.Report{Scope: scope.String(), DryRun: opts.DryRun}
	members := scope.Members(k.snap, nil)
	overBudget := !opts.DryRun && opts.MaxTargets >= 0 && len(members) > opts.MaxTargets // as EngineKiller
	for _, p := range members {
		o := kill.Outcome{Target: kill.Target{ID: p.ID, Comm: p.Comm, RSSBytes: p.RSSBytes}}
		switch {
		case overBudget:
			o.Result, o.Err = kill.ResultBudget, fmt.Errorf("%w: %d processes to signal, %s", kill.ErrBudget, len(members), opts.Budget)
		case opts.DryRun:
			o.Result, o.Planned = kill.ResultDryRun, []syscall.Signal{15, 9}
		case k.results[p.ID.PID] != 0:
			o.Result = k.results[p.ID.PID]
			if o.Result.Refused() {
				o.Err = fmt.Errorf("pid %d (%s) is protected: %w", p.ID.PID, p.Comm, kill.ErrProtected)
			}
		default:
			o.Result, o.Signals, o.GoneAfter = kill.ResultExited, []syscall.Signal{15}, 20*time.Millisecond
			o.SignalledAt = time.Now().Add(-k.waited)
		}
		r.Outcomes = append(r.Outcomes, o)
	}
	return r, nil
}

// run compiles src as name and runs it once with cfg against in, returning
// what print wrote.
func run(t testing.TB, cfg Config, name, src string, in Input) (string, error) {
	t.Helper()
	var out bytes.Buffer
	if cfg.Print == nil {
		cfg.Print = &out
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return fixtureTime }
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "testhost"
	}
	s, err := Compile(name, []byte(src))
	if err != nil {
		return "", err
	}
	r := New(cfg)
	defer r.Close()
	err = r.Run(context.Background(), s, in)
	return out.String(), err
}

// logTo returns a logger writing text records without times to b.
func logTo(b *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// grouper returns the Input.Sessions of the fixture: the engine's Grouper
// with the fixture's tmux server (testdata/tmux.txt), cgroupfs
// (testdata/cgroup) and users.
func grouper(t testing.TB, users *procwalk.Users) func(*procwalk.Snapshot) func() ([]session.Session, error) {
	t.Helper()
	fs, err := procwalk.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	panes, err := os.ReadFile("testdata/tmux.txt")
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		Tmux: session.TmuxConfig{
			Sockets:   []string{"/tmp/tmux-1000/default"},
			ListPanes: func(string) ([]byte, error) { return panes, nil },
		},
		CgroupRoot: "testdata/cgroup",
		Users:      users,
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(snap *procwalk.Snapshot) func() ([]session.Session, error) {
		return func() ([]session.Session, error) {
			sessions, _ := g.Group(snap)
			return sessions, nil
		}
	}
}
