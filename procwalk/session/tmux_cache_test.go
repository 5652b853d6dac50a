//go:build linux

package session

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// fakeServer is the state of the fixture's tmux server (pid 100) as the
// cache sees it: the test moves it as tmux would.
type fakeServer struct {
	state tmuxServerState
	gone  bool
}

func (f *fakeServer) read(pid int) (tmuxServerState, error) {
	if pid != 100 || f.gone {
		return tmuxServerState{}, procwalk.ErrGone
	}
	return f.state, nil
}

// cachingGrouper is a Grouper of tmux sessions on the session fixture
// whose tmux answers are kept as on a live host, with the server's state
// read from srv; answer is what list-panes prints, calls counts its runs.
func cachingGrouper(t *testing.T, srv *fakeServer, answer *string, calls *int) (*Grouper, *procwalk.Snapshot) {
	t.Helper()
	cfg := Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default"},
		ListPanes: func(string) ([]byte, error) {
			*calls++
			return []byte(*answer), nil
		},
	}}
	g, s := fixtureGrouper(t, sessionFixture, cfg)
	g.Group(s) // takes the answer fixtureGrouper's gather prefetched, uncached
	g.tmux.cacheable = true
	g.tmux.readServer = srv.read
	*calls = 0
	return g, s
}

// TestTmuxAnswerKeptWhileServerIdle changes each fact the kept answer
// rests on and sees it asked again: the server ran (a rename), the server
// was replaced (same pid, another start), the server is gone, and a
// server that never sleeps after answering is asked every time.
func TestTmuxAnswerKeptWhileServerIdle(t *testing.T) {
	b, err := os.ReadFile("testdata/sessions/tmux/default.txt")
	if err != nil {
		t.Fatal(err)
	}
	answer := string(b)
	srv := &fakeServer{state: tmuxServerState{id: procwalk.ProcID{PID: 100, StartTicks: 1000}, runs: 7, sleeping: true}}
	calls := 0
	g, s := cachingGrouper(t, srv, &answer, &calls)
	group := func(step string, wantCalls int, wantNames ...string) {
		t.Helper()
		g.Prefetch()
		sessions, _ := g.Group(s)
		if got := namesOf(sessions, KindTmux); !slices.Equal(got, wantNames) {
			t.Errorf("%s: sessions %v, want %v", step, got, wantNames)
		}
		if calls != wantCalls {
			t.Errorf("%s: list-panes ran %d times in all, want %d", step, calls, wantCalls)
		}
	}
	group("first gather", 1, "build", "web")
	group("nothing changed", 1, "build", "web")
	group("still nothing", 1, "build", "web")

	// tmux rename-session: the server runs to do it.
	answer = strings.ReplaceAll(answer, "\tweb\t", "\tshop\t")
	srv.state.runs++
	group("the server ran", 2, "build", "shop")
	group("idle again", 2, "build", "shop")

	// Another server with the same pid (the old one died, its pid reused).
	srv.state.id.StartTicks++
	group("another server", 3, "build", "shop")
	group("that one idle", 3, "build", "shop")

	// A server busy after answering (a pane printing all the time) is not
	// kept: asked at every gather.
	srv.state.sleeping = false
	srv.state.runs++
	group("busy", 4, "build", "shop")
	group("still busy", 5, "build", "shop")

	// The server process cannot be read (gone): asked, not kept.
	srv.gone = true
	group("server unreadable", 6, "build", "shop")
	group("still unreadable", 7, "build", "shop")
}

// TestTmuxAnswerNotKeptOnFixtures: outside this host's /proc the servers'
// pids mean nothing, and every gather asks.
func TestTmuxAnswerNotKeptOnFixtures(t *testing.T) {
	calls := 0
	g, s := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindTmux}, Tmux: fixtureTmux(t, &calls)})
	g.Group(s) // takes the answer fixtureGrouper's gather prefetched
	for range 3 {
		g.Prefetch()
		g.Group(s)
	}
	if calls != 4 { // fixtureGrouper's gather's, then three
		t.Errorf("list-panes ran %d times, want 4", calls)
	}
}

func TestReadTmuxServer(t *testing.T) {
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	s, err := readTmuxServer(fs, 100)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture has no schedstat: status's context switches count.
	st, err := fs.ReadStatus(100)
	if err != nil {
		t.Fatal(err)
	}
	if s.id.PID != 100 || s.id.StartTicks == 0 || s.runs != st.VoluntaryCtxSwitches+st.InvoluntaryCtxSwitches {
		t.Errorf("readTmuxServer = %+v; status %+v", s, st)
	}
	if _, err := readTmuxServer(fs, 99999); !errors.Is(err, procwalk.ErrGone) && !procwalk.IsGone(err) {
		t.Errorf("a pid without a directory: %v, want gone", err)
	}
}
