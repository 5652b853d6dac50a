//go:build linux

package session_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// The session integration tests start a tmux server on a private socket,
// with a known tree of sleeps, and check what the Grouper finds on the live
// /proc. They signal nothing but the server they started (kill-server in
// Cleanup, which hangs up its panes).

// tmuxServer is a tmux server this test started.
type tmuxServer struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T) *tmuxServer {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("integration test: set PROCWALK_INTEGRATION=1 to run it")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed by this integration test: install it (apt-get install -y tmux) or unset PROCWALK_INTEGRATION")
	}
	// A short directory: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "pwtmux")
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxServer{t: t, socket: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", s.socket, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return s
}

// run runs a tmux command on this server.
func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// pidsByArg waits until every marker ("sleep 31001") is the command line of
// exactly one live process of this server, argv[0] by its base name, and
// returns marker -> pid. Cleanup kills every process this server started
// (some escape the server and its hangup: setsid), each only while it is
// still the very process found (pid and start time).
func (s *tmuxServer) pidsByArg(t *testing.T, fs procwalk.FS, markers ...string) map[string]int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		snap, err := fs.Snapshot(procwalk.FieldCmdline)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string][]procwalk.ProcID{}
		var ours []procwalk.ProcID
		for i := range snap.Procs {
			p := &snap.Procs[i]
			if len(p.Cmdline) == 0 || p.Zombie() || !s.started(fs, snap, p) {
				continue
			}
			ours = append(ours, p.ID)
			// Exactly: the tmux server's own command line ("tmux ...
			// new-session ... /x/bin/claude 33001") ends with the marker too.
			cmd := strings.Join(append([]string{filepath.Base(p.Cmdline[0])}, p.Cmdline[1:]...), " ")
			if slices.Contains(markers, cmd) {
				found[cmd] = append(found[cmd], p.ID)
			}
		}
		if len(found) == len(markers) {
			pids := map[string]int{}
			for m, ids := range found {
				if len(ids) != 1 {
					t.Fatalf("%q is the command line of %d processes of this server: %v", m, len(ids), ids)
				}
				pids[m] = ids[0].PID
			}
			t.Cleanup(func() {
				for _, id := range ours {
					killOwn(fs, id)
				}
			})
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s found only %v of %q", found, markers)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// started says whether p, a process of snap, runs under this server: tmux
// gives each pane's process TMUX=<socket>,<server pid>,<session>, and
// whatever it starts, escaped from the server's tree or not, inherits it.
// Another run of these tests (-count, or another checkout's on the same
// host) starts the very same command lines, which this test must neither
// take nor kill. The environment is read after the walk: p must still be
// the process walked and have started no earlier than the server (with
// pid_max 32768 a pid is soon another process's).
func (s *tmuxServer) started(fs procwalk.FS, snap *procwalk.Snapshot, p *procwalk.Process) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.ID.PID))
	if id, err := fs.ReadProcID(p.ID.PID); err != nil || id != p.ID {
		return false
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		v, ok := strings.CutPrefix(kv, "TMUX="+s.socket+",")
		if !ok {
			continue
		}
		server, _, _ := strings.Cut(v, ",")
		pid, err := strconv.Atoi(server)
		srv := snap.Process(pid)
		return err == nil && srv != nil && srv.ID.StartTicks <= p.ID.StartTicks
	}
	return false
}

// waitFor polls cond every 50 ms for up to 60 s (a loaded machine is slow
// to fork and exit), failing the test if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 60 s for %s", what)
		}
	}
}

// killOwn sends SIGKILL to a process this test started, through a pidfd
// opened for exactly that process; gone already is fine.
func killOwn(fs procwalk.FS, id procwalk.ProcID) {
	h, err := kill.OpenProc(fs, id)
	if err != nil {
		return // exited with its server, or reaped
	}
	defer h.Close()
	h.Signal(syscall.SIGKILL)
}

// liveGroup groups the live /proc once, with a new Grouper for cfg.
func liveGroup(t *testing.T, cfg session.Config) (*session.Grouper, []session.Session, []string, *procwalk.Snapshot) {
	t.Helper()
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := procwalk.NewMonitor(fs, procwalk.MonitorConfig{Fields: procwalk.FieldIO}, g).Gather()
	if err != nil {
		t.Fatal(err)
	}
	sessions, notes := g.Group(snap)
	return g, sessions, notes, snap
}

func members(s *session.Session) []int {
	var out []int
	for _, id := range s.Members {
		out = append(out, id.PID)
	}
	return out
}

func TestIntegrationTmuxSessions(t *testing.T) {
	srv := startTmux(t)
	dir := t.TempDir()
	// build: a child, a double fork that keeps the terminal, and setsid
	// then a fork: no terminal, parent init, only tmux's environment left.
	build := script(t, dir, "build.sh", `sleep 31001 &
( sleep 31002 & )
setsid sh -c 'sleep 31003 &'
exec sleep 31000
`)
	// Commands given as several arguments run without a shell around them.
	srv.run("new-session", "-d", "-s", "build", "-x", "80", "-y", "24", "/bin/sh", build)
	srv.run("new-session", "-d", "-s", "web", "sleep", "32000")
	srv.run("new-window", "-t", "web", "/bin/sh", script(t, dir, "web.sh", "sleep 32001 &\nexec sleep 32002\n"))

	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.pidsByArg(t, fs, "sleep 31000", "sleep 31001", "sleep 31002", "sleep 31003", "sleep 32000", "sleep 32001", "sleep 32002")
	// Wait for the shells between the pane and 31002, 31003 to exit: only
	// then have both left the pane's tree, and the backstops are tested.
	pane := pid["sleep 31000"]
	waitFor(t, "31002 and 31003 to leave the pane's tree", func() bool {
		snap, err := fs.Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		inPane := func(pid int) bool {
			return slices.ContainsFunc(snap.Ancestors(pid), func(a *procwalk.Process) bool { return a.ID.PID == pane })
		}
		return !inPane(pid["sleep 31002"]) && !inPane(pid["sleep 31003"])
	})

	g, sessions, notes, snap := liveGroup(t, session.Config{Kinds: []string{session.KindTmux}, Tmux: session.TmuxConfig{Sockets: []string{srv.socket}}})
	if len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
	if p := snap.Process(pid["sleep 31002"]); p == nil || p.TTY == 0 {
		t.Fatalf("the double-forked 31002 lost its terminal: %+v", p)
	}
	if p := snap.Process(pid["sleep 31003"]); p == nil || p.TTY != 0 || p.SID == pane {
		t.Fatalf("the setsid'd 31003 kept its terminal or session: %+v", p)
	}
	tests := []struct {
		ref     string
		markers []string
		panes   int
		windows string
	}{
		{"tmux:build", []string{"sleep 31000", "sleep 31001", "sleep 31002", "sleep 31003"}, 1, "1"},
		{"tmux:web", []string{"sleep 32000", "sleep 32001", "sleep 32002"}, 2, "2"},
	}
	for _, tt := range tests {
		s, err := session.Find(sessions, tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		var sum procwalk.Totals
		for _, m := range tt.markers {
			want = append(want, pid[m])
			sum.Add(snap.Process(pid[m]))
		}
		slices.Sort(want)
		if got := members(s); !slices.Equal(got, want) {
			t.Errorf("%s members %v, want %v (%q)", tt.ref, got, want, tt.markers)
		}
		if s.Totals.Totals != sum {
			t.Errorf("%s totals %+v, want the sum over the test's pids %+v", tt.ref, s.Totals.Totals, sum)
		}
		if len(s.Panes) != tt.panes || s.Attrs[session.AttrWindows] != tt.windows || s.Attrs[session.AttrSocket] != srv.socket {
			t.Errorf("%s panes %+v attrs %v", tt.ref, s.Panes, s.Attrs)
		}
	}
	g.PaneForegrounds(snap, &sessions[0])
	build0 := sessions[0].Panes[0]
	if build0.Target != "build:0.0" || build0.PID != pid["sleep 31000"] || build0.Command != "sleep" {
		t.Errorf("build pane = %+v", build0)
	}
}

func TestIntegrationAgentsInTmux(t *testing.T) {
	srv := startTmux(t)
	dir := t.TempDir()
	// A copy of sleep named claude is Claude Code by comm and argv[0].
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(dir, "bin", "claude")
	copyFile(t, sleep, claude)
	// Two projects of one base name: their sessions are told apart by the
	// directory above. The name holds the test's pid: the agent kind finds
	// every agent of the host, and another run of this test (another
	// checkout's on the same host) has its own two.
	proj := fmt.Sprintf("h4proj%d", os.Getpid())
	one, two := filepath.Join(dir, "one", proj), filepath.Join(dir, "two", proj)
	for _, d := range []string{one, two} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv.run("new-session", "-d", "-s", "agents", "-c", one, claude, "33001")
	srv.run("new-window", "-t", "agents", "-c", two, claude, "33002")

	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.pidsByArg(t, fs, "claude 33001", "claude 33002")
	_, sessions, _, _ := liveGroup(t, session.Config{Kinds: []string{session.KindAgent}, Tmux: session.TmuxConfig{Sockets: []string{srv.socket}}})
	tests := []struct {
		name, cwd, target string
		pid               int
	}{
		{"claude/one/" + proj, one, "agents:0.0", pid["claude 33001"]},
		{"claude/two/" + proj, two, "agents:1.0", pid["claude 33002"]},
	}
	for _, tt := range tests {
		s, err := session.Find(sessions, "agent:"+tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := members(s); !slices.Equal(got, []int{tt.pid}) {
			t.Errorf("%s members %v, want [%d]", tt.name, got, tt.pid)
		}
		a := s.Attrs
		if a[session.AttrCwd] != tt.cwd || a[session.AttrTmuxTarget] != tt.target || a[session.AttrAgent] != "claude" || a[session.AttrElapsed] != "< 1 min" {
			t.Errorf("%s attrs %v", tt.name, a)
		}
	}
	// Oldest first: 33001 started first.
	var order []string
	for _, s := range sessions {
		if strings.HasSuffix(s.Name, "/"+proj) {
			order = append(order, s.Name)
		}
	}
	if !slices.Equal(order, []string{"claude/one/" + proj, "claude/two/" + proj}) {
		t.Errorf("order %v", order)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(fmt.Errorf("writing %s: %w", dst, err))
	}
}
