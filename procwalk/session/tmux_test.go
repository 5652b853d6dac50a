//go:build linux

package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

func TestGroupTmuxFixture(t *testing.T) {
	calls := 0
	g, snap := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindTmux}, Tmux: fixtureTmux(t, &calls)})
	sessions, notes := g.Group(snap)
	if calls != 1 {
		t.Errorf("list-panes ran %d times, want once per server", calls)
	}
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	if got := namesOf(sessions, KindTmux); !slices.Equal(got, []string{"build", "web"}) {
		t.Fatalf("tmux sessions = %v, want [build web]", got)
	}
	tests := []struct {
		ref     string
		members []int
		roots   []int
		panes   []string
		attrs   map[string]string
	}{
		// Pane trees, plus 130 and 131 found by TMUX_PANE=%0 after setsid
		// and a double fork.
		{"tmux:build", []int{101, 102, 103, 104, 105, 106, 130, 131}, []int{101, 104, 130},
			[]string{"build:0.0", "build:1.0"},
			map[string]string{AttrSocket: "/tmp/tmux-1000/default", AttrTmuxTarget: "build:0.0", AttrPanes: "2", AttrWindows: "2", AttrAttached: "1"}},
		// 120 and 121 escaped by a double fork but kept the pane's terminal.
		{"tmux:web", []int{110, 111, 120, 121}, []int{110, 120},
			[]string{"web:0.0", "web:0.1"},
			map[string]string{AttrPanes: "2", AttrWindows: "1", AttrAttached: "0"}},
	}
	for _, tt := range tests {
		s := find(t, sessions, tt.ref)
		if got := memberPIDs(s); !slices.Equal(got, tt.members) {
			t.Errorf("%s members = %v, want %v", tt.ref, got, tt.members)
		}
		if got := rootPIDs(s); !slices.Equal(got, tt.roots) {
			t.Errorf("%s roots = %v, want %v", tt.ref, got, tt.roots)
		}
		var targets []string
		for _, p := range s.Panes {
			targets = append(targets, p.Target)
		}
		if !slices.Equal(targets, tt.panes) {
			t.Errorf("%s panes = %v, want %v", tt.ref, targets, tt.panes)
		}
		for k, v := range tt.attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s attr %s = %q, want %q", tt.ref, k, s.Attrs[k], v)
			}
		}
		want := sumOver(t, snap, tt.members)
		if s.Totals.Totals != want {
			t.Errorf("%s totals = %+v, want %+v", tt.ref, s.Totals.Totals, want)
		}
		if s.Totals.CumulativeCPUSeconds != want.CPUSeconds || s.Totals.CumulativeReadBytes != want.ReadBytes {
			t.Errorf("%s first-gather cumulative = %v s %d B, want the current %v s %d B", tt.ref,
				s.Totals.CumulativeCPUSeconds, s.Totals.CumulativeReadBytes, want.CPUSeconds, want.ReadBytes)
		}
	}
	web := find(t, sessions, "tmux:web")
	g.PaneForegrounds(snap, web)
	dead := web.Panes[1]
	if !dead.Dead || dead.PID != 199 || dead.WindowName != "srv\twith a tab" || dead.PaneID != "%3" || dead.Command != "" {
		t.Errorf("dead pane = %+v", dead)
	}
	// Command and path are the foreground process group's (tpgid of the
	// pane's stat): make in build:0.0, claude in build:1.0; Group leaves
	// them to PaneForegrounds.
	build := find(t, sessions, "tmux:build")
	if build.Panes[0].Command != "" || build.Panes[0].Cwd != "" {
		t.Errorf("Group set a pane's foreground: %+v", build.Panes[0])
	}
	g.PaneForegrounds(snap, build)
	want := []TmuxPane{
		{Target: "build:0.0", PaneID: "%0", WindowName: "editor", PID: 101, TTY: "/dev/pts/3", Cwd: "/home/dev/proj", Command: "make"},
		{Target: "build:1.0", PaneID: "%1", WindowName: "agent", PID: 104, TTY: "/dev/pts/4", Cwd: "/home/dev/work/app", Command: "claude"},
	}
	if !slices.Equal(build.Panes, want) {
		t.Errorf("build panes\n got %+v\nwant %+v", build.Panes, want)
	}
	// The server itself and the unrelated daemon are in no tmux session.
	for _, s := range sessions {
		for _, id := range s.Members {
			if id.PID == 100 || id.PID == 150 {
				t.Errorf("pid %d is in %s", id.PID, s.Ref())
			}
		}
	}
}

func TestGroupTmuxWithoutTmux(t *testing.T) {
	tests := []struct {
		name string
		err  error
		note string
	}{
		{"no binary", fmt.Errorf("%w: exec: \"tmux\": executable file not found in $PATH", ErrNoTmux), "not installed"},
		{"no server", fmt.Errorf("%w on /tmp/tmux-1000/default", ErrNoTmuxServer), "tmux: no server on /tmp/tmux-1000/default"},
		{"garbage", nil, "did not parse"},
	}
	for _, tt := range tests {
		cfg := Config{Kinds: []string{KindTmux, KindSID}, Tmux: TmuxConfig{
			Sockets: []string{"/tmp/tmux-1000/default"},
			ListPanes: func(string) ([]byte, error) {
				if tt.err != nil {
					return nil, tt.err
				}
				return []byte("not\ta\tpane\x1f\n"), nil
			},
		}}
		sessions, notes, _ := groupFixture(t, sessionFixture, cfg)
		if got := namesOf(sessions, KindTmux); len(got) != 0 {
			t.Errorf("%s: tmux sessions %v", tt.name, got)
		}
		if len(namesOf(sessions, KindSID)) == 0 {
			t.Errorf("%s: other kinds were not grouped", tt.name)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], tt.note) {
			t.Errorf("%s: notes = %q, want one saying %q", tt.name, notes, tt.note)
		}
	}
}

func TestGroupTmuxServersShareSessionName(t *testing.T) {
	other := "200\t$0\tbuild\t0\t0\t0\t%0\t201\t/dev/pts/9\t0\tw\x1f\n" // 201 is 200's child
	cfg := Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default", "/tmp/tmux-1000/other"},
		ListPanes: func(socket string) ([]byte, error) {
			if strings.HasSuffix(socket, "other") {
				return []byte(other), nil
			}
			return os.ReadFile("testdata/sessions/tmux/default.txt")
		},
	}}
	sessions, _, _ := groupFixture(t, sessionFixture, cfg)
	if got, want := namesOf(sessions, KindTmux), []string{"default/build", "other/build", "web"}; !slices.Equal(got, want) {
		t.Errorf("sessions = %v, want %v", got, want)
	}
	if s := find(t, sessions, "tmux:other/build"); !slices.Equal(memberPIDs(s), []int{201, 202, 203, 204, 205, 206, 207, 208}) {
		t.Errorf("other/build members = %v", memberPIDs(s))
	}
}

// TestGroupTmuxEnvironNeedsStartAfterServer: 150 has in its environment
// TMUX of a server pid 310 (pane %0), but started before the server that
// has pid 310 now: it belongs to a dead server whose pid was reused, and
// must not join the new server's session (whose pane process, 345, is not
// in the snapshot, so only the backstops could fill it).
func TestGroupTmuxEnvironNeedsStartAfterServer(t *testing.T) {
	reused := "310\t$0\tnew\t0\t0\t0\t%0\t345\t/dev/pts/9\t0\tw\x1f\n"
	sessions, _, _ := groupFixture(t, sessionFixture, withNewServer(reused))
	for i := range sessions {
		if slices.Contains(memberPIDs(&sessions[i]), 150) {
			t.Errorf("tmux:%s holds 150, which is older than server 310", sessions[i].Name)
		}
	}
	if got := memberPIDs(find(t, sessions, "tmux:build")); !slices.Contains(got, 130) {
		t.Errorf("tmux:build members = %v, want 130", got)
	}
}

// withNewServer is the tmux config of the fixture's server and a second
// one, "new", whose list-panes answer is answer.
func withNewServer(answer string) Config {
	return Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{"/tmp/tmux-1000/default", "/tmp/tmux-1000/new"},
		ListPanes: func(socket string) ([]byte, error) {
			if strings.HasSuffix(socket, "new") {
				return []byte(answer), nil
			}
			return os.ReadFile("testdata/sessions/tmux/default.txt")
		},
	}}
}

// TestGroupTmuxPanePIDReused: a server reports as its pane's process a pid
// whose process is not its child (the pane's process ended and the pid went
// to another, here python3 111 of the web pane): the pane is dead, and 111
// stays in the session of the pane it runs in.
func TestGroupTmuxPanePIDReused(t *testing.T) {
	reused := "310\t$0\tnew\t0\t0\t0\t%0\t111\t/dev/pts/9\t0\tw\x1f\n"
	sessions, _, _ := groupFixture(t, sessionFixture, withNewServer(reused))
	if got := memberPIDs(find(t, sessions, "tmux:web")); !slices.Contains(got, 111) {
		t.Errorf("tmux:web members = %v, want 111 among them", got)
	}
	for i := range sessions {
		if sessions[i].Name == "new" {
			t.Errorf("tmux:new has members %v: its pane's pid 111 is not its server's child", memberPIDs(&sessions[i]))
		}
	}
}

// A server not in the snapshot (hidepid, another pid namespace) has
// unknown ancestors and start: every process outside panes without a
// terminal is read, and 150, whose TMUX names that server's socket, joins.
func TestGroupTmuxEnvironHiddenServer(t *testing.T) {
	hidden := "990\t$0\tx\t0\t0\t0\t%0\t995\t/dev/pts/9\t0\tw\x1f\n"
	g, s := fixtureGrouper(t, sessionFixture, Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets:   []string{"/tmp/tmux-1000/old"},
		ListPanes: func(string) ([]byte, error) { return []byte(hidden), nil },
	}})
	sessions, notes := g.Group(s)
	if len(sessions) != 1 || !slices.Equal(memberPIDs(&sessions[0]), []int{150}) || len(notes) != 0 {
		t.Errorf("sessions %+v, notes %q; want tmux:x holding 150", sessions, notes)
	}
	// 1 100 130 131 150 200 201 300 301 302 310 320 321 330 340 341
	if len(g.tmux.environ) != 16 {
		t.Errorf("%d environments read, want the 16 processes without a terminal", len(g.tmux.environ))
	}
}

// TestGroupTmuxEnvironCap: with fewer environ reads a gather than
// candidates, the tmux sessions are Partial with a note, and the next
// gathers read the rest (what was read is remembered) until nothing is
// left unchecked. The fixture has 9 candidates: the processes outside
// panes, without a terminal, started after the server, whose parent is an
// ancestor of the server (init): 130 150 300 301 310 320 321 330 340.
func TestGroupTmuxEnvironCap(t *testing.T) {
	calls := 0
	fs, err := procwalk.NewFS(sessionFixture)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrouper(fs, Config{Kinds: []string{KindTmux}, Tmux: fixtureTmux(t, &calls)})
	if err != nil {
		t.Fatal(err)
	}
	g.tmux.environLimit = 2
	s, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{}, g).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for gather := 1; gather <= 5; gather++ {
		sessions, notes := g.Group(s)
		unread := 9 - 2*gather
		wantPartial := unread > 0
		for _, ss := range sessions {
			if ss.Partial != wantPartial {
				t.Errorf("gather %d: %s Partial = %v, want %v", gather, ss.Ref(), ss.Partial, wantPartial)
			}
		}
		var want []string
		if wantPartial {
			want = []string{fmt.Sprintf("tmux: %d processes outside panes were not checked for a pane's environment (at most 2 a gather, the next gathers go on): tmux sessions may lack escaped processes", unread)}
		}
		if !slices.Equal(notes, want) {
			t.Errorf("gather %d: notes = %q, want %q", gather, notes, want)
		}
		// 130, read first, stays found from the cache.
		if got := memberPIDs(find(t, sessions, "tmux:build")); !slices.Contains(got, 130) || !slices.Contains(got, 131) {
			t.Errorf("gather %d: build members = %v, want 130 and 131 in", gather, got)
		}
		if got := len(g.tmux.environ); got != min(9, 2*gather) {
			t.Errorf("gather %d: %d environments remembered, want %d", gather, got, min(9, 2*gather))
		}
	}
}

func TestLabelServers(t *testing.T) {
	servers := []tmuxServer{{socket: "/tmp/tmux-0/default"}, {socket: "/tmp/tmux-1000/default"}, {socket: "/tmp/tmux-1000/work"}}
	labelServers(servers)
	var got []string
	for _, s := range servers {
		got = append(got, s.label)
	}
	if want := []string{"tmux-0/default", "tmux-1000/default", "work"}; !slices.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
}

func TestParseTmuxPanes(t *testing.T) {
	good := "7\t$2\tmain\t1\t3\t1\t%9\t4242\t/dev/pts/7\t0\tvim\tand tabs\x1f\n"
	recs, bad := parseTmuxPanes([]byte(good + "7\t$2\tmain\t1\tthree\t1\t%9\t4242\t/dev/pts/7\t0\tw\x1f\n" + "short\x1f\n" + good))
	if bad != 2 || len(recs) != 2 {
		t.Fatalf("got %d records and %d bad, want 2 and 2", len(recs), bad)
	}
	want := tmuxPaneRecord{serverPID: 7, sessionID: "$2", sessionName: "main", attached: 1, window: 3,
		pane: TmuxPane{Target: "main:3.1", PaneID: "%9", WindowName: "vim\tand tabs", PID: 4242, TTY: "/dev/pts/7"}}
	if recs[0] != want {
		t.Errorf("record = %+v\nwant     %+v", recs[0], want)
	}
	// A last record without its end marker (output cut short) still parses.
	recs, bad = parseTmuxPanes([]byte(strings.TrimSuffix(good, "\x1f\n")))
	if len(recs) != 1 || bad != 0 {
		t.Errorf("unterminated record: %d records, %d bad", len(recs), bad)
	}
}

func TestParseStatTPGID(t *testing.T) {
	tests := []struct {
		stat string
		want int
		ok   bool
	}{
		{"101 (bash) S 100 101 101 34819 102 4194560 100", 102, true},
		{"101 (a) b) S 100 101 101 34819 7 0", 7, true},
		{"150 (daemon) S 1 150 150 0 -1 0", 0, false},
		{"150 (x) S 1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseStatTPGID([]byte(tt.stat))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseStatTPGID(%q) = %d, %v; want %d, %v", tt.stat, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseTmuxEnviron(t *testing.T) {
	tmux, pane := parseTmuxEnviron([]byte("A=1\x00TMUX=/tmp/tmux-0/x,5,0\x00NOTTMUX_PANE=%1\x00TMUX_PANE=%4\x00"))
	if tmux != "/tmp/tmux-0/x,5,0" || pane != "%4" {
		t.Errorf("got %q %q", tmux, pane)
	}
	if tmux, pane := parseTmuxEnviron([]byte("TMUXX=1\x00")); tmux != "" || pane != "" {
		t.Errorf("got %q %q from no tmux", tmux, pane)
	}
}

func TestTmuxSocketDiscovery(t *testing.T) {
	t.Setenv("TMUX", "")
	dir := t.TempDir()
	own := filepath.Join(dir, "tmux-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are short (108 bytes): listen from inside the dir.
	wd, _ := os.Getwd()
	if err := os.Chdir(own); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", "work")
	os.Chdir(wd)
	if err != nil {
		t.Skipf("cannot create a unix socket here: %v", err)
	}
	defer l.Close()
	if err := os.WriteFile(filepath.Join(own, "notasocket"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := TmuxConfig{TmpDir: dir}.sockets()
	if want := []string{filepath.Join(own, "work")}; !slices.Equal(got, want) {
		t.Errorf("discovered %v, want %v", got, want)
	}
	// Names resolve in this user's directory, paths stay as they are.
	got, _ = TmuxConfig{TmpDir: dir, Sockets: []string{"build", "/run/tmux/x", "build"}}.sockets()
	if want := []string{filepath.Join(own, "build"), "/run/tmux/x"}; !slices.Equal(got, want) {
		t.Errorf("configured %v, want %v", got, want)
	}
	// TMUX_TMPDIR is honoured when TmpDir is not set.
	t.Setenv("TMUX_TMPDIR", dir)
	got, _ = TmuxConfig{}.sockets()
	if !slices.Contains(got, filepath.Join(own, "work")) {
		t.Errorf("with TMUX_TMPDIR: %v", got)
	}
	// No sockets at all: nothing, and a note-worthy place looked at.
	got, looked := TmuxConfig{TmpDir: t.TempDir()}.sockets()
	if len(got) != 0 || looked == "" {
		t.Errorf("empty dir: %v, looked in %q", got, looked)
	}
}

func TestRunTmuxListPanesErrors(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tmux to run
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	live, err1 := net.Listen("unix", "live")
	stale, err2 := net.Listen("unix", "stale")
	os.Chdir(wd)
	if err1 != nil || err2 != nil {
		t.Skipf("cannot create unix sockets here: %v %v", err1, err2)
	}
	defer live.Close()
	// A server that died leaves its socket file behind, refusing connections.
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	tests := []struct {
		socket string
		want   error
	}{
		{filepath.Join(dir, "live"), ErrNoTmux},
		{filepath.Join(dir, "stale"), ErrNoTmuxServer}, // found without running tmux
		{filepath.Join(dir, "missing"), ErrNoTmuxServer},
	}
	for _, tt := range tests {
		if _, err := runTmuxListPanes(tt.socket); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.socket, err, tt.want)
		}
	}
}

func TestGroupTmuxStaleSocketsNote(t *testing.T) {
	cfg := Config{Kinds: []string{KindTmux}, Tmux: TmuxConfig{
		Sockets: []string{"/s/a", "/s/b", "/s/c", "/s/d", "/s/e"},
		ListPanes: func(socket string) ([]byte, error) {
			return nil, fmt.Errorf("%w on %s", ErrNoTmuxServer, socket)
		},
	}}
	_, notes, _ := groupFixture(t, sessionFixture, cfg)
	if want := []string{"tmux: no server on /s/a, /s/b, /s/c and 2 more"}; !slices.Equal(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
}

func TestEnvServer(t *testing.T) {
	servers := []tmuxServer{{socket: "/tmp/tmux-1000/default", pid: 100}, {socket: "/tmp/tmux-1000/work", pid: 200}}
	tests := []struct {
		tmux string
		want int
	}{
		{"/tmp/tmux-1000/default,100,0", 0},
		{"/tmp/tmux-1000/work,999,0", 1},         // the path decides
		{"/private/tmp/tmux-1000/work,200,3", 1}, // another path to a server we asked
		{"/tmp/tmux-1000/gone,300,0", -1},
		{"garbage", -1},
		{"", -1},
	}
	for _, tt := range tests {
		if got := envServer(tt.tmux, servers); got != tt.want {
			t.Errorf("envServer(%q) = %d, want %d", tt.tmux, got, tt.want)
		}
	}
}

// probeUnixSocket tells a listening server from a socket file left by a
// dead one, and from none.
func TestProbeUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := probeUnixSocket(path); err != nil {
		t.Errorf("listening: %v", err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if err := probeUnixSocket(path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("socket of a closed listener: %v, want ECONNREFUSED", err)
	}
	os.Remove(path)
	if err := probeUnixSocket(path); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("no socket: %v, want ENOENT", err)
	}
}

// What the tmux client printed, and how it ended, makes list-panes' answer:
// a server refusing this user is a refusal, never an empty server, and only
// a stale socket is "no server".
func TestTmuxReply(t *testing.T) {
	exit1 := &exec.ExitError{}
	const sock = "/tmp/tmux-0/default"
	for _, tt := range []struct {
		name     string
		out      string
		msg      string
		err      error
		timedOut bool
		noServer bool
		want     string // in the error; "" for none
	}{
		{"panes", "1\t$0\tmain\t0\t0\t0\t%0\t2\t/dev/pts/1\t0\tbash\x1f\n", "", nil, false, false, ""},
		{"no panes, no word", "", "", nil, false, false, ""},
		{"refused, exit 0", "", "access not allowed", nil, false, false, "list-panes: access not allowed (its owner may allow this user with tmux server-access -a USER"},
		{"stale socket", "", "error connecting to " + sock + " (Connection refused)", exit1, false, true, "no tmux server on " + sock},
		{"no server", "", "no server running on " + sock, exit1, false, true, "no tmux server on " + sock},
		{"socket of another user", "", "error connecting to " + sock + " (Permission denied)", exit1, false, false, "(Permission denied)"},
		{"wedged", "", "", exit1, true, false, "no answer within 3s"},
	} {
		out, err := tmuxReply(sock, []byte(tt.out), tt.msg, tt.err, tt.timedOut)
		switch {
		case tt.want == "" && (err != nil || string(out) != tt.out):
			t.Errorf("%s: %q, %v; want the output", tt.name, out, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || out != nil):
			t.Errorf("%s: %q, %v; want an error with %q", tt.name, out, err, tt.want)
		case errors.Is(err, ErrNoTmuxServer) != tt.noServer:
			t.Errorf("%s: %v: ErrNoTmuxServer %v, want %v", tt.name, err, !tt.noServer, tt.noServer)
		}
	}
}

// tmuxDirs lists the tmux-* directories of a TMUX_TMPDIR, sorted: not a
// file, not another name, and not a symbolic link (tmux itself refuses a
// socket directory that is a link: lstat, S_ISDIR).
func TestTmuxDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"tmux-1000", "tmux-0", "other", "tmuxfoo"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tmux-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, "tmux-link")); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "tmux-0"), filepath.Join(dir, "tmux-1000")}
	if got := tmuxDirs(dir); !slices.Equal(got, want) {
		t.Errorf("tmuxDirs = %v, want %v", got, want)
	}
	if got := tmuxDirs(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("missing dir: %v, want nothing", got)
	}
}
