package procwalk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// session_tmux.go groups processes into tmux sessions: every descendant of
// each pane's pid, then two backstops for processes that escaped the tree
// (a double fork reparents them to init or a subreaper):
//   - same controlling terminal as a pane (a double fork without setsid);
//   - TMUX and TMUX_PANE in the environment, which tmux sets in every pane
//     and children inherit (setsid, then a double fork: no terminal left).

// paneIndex maps each process of a snapshot to the tmux pane it runs in.
type paneIndex struct {
	of    []int32 // pane of each process, -1 for none
	panes []TmuxPane
}

// target returns the pane target of process i, "" when in no pane.
func (pi paneIndex) target(i int) string {
	if pi.of == nil || pi.of[i] < 0 {
		return ""
	}
	return pi.panes[pi.of[i]].Target
}

// maxEnvironReads bounds the environ backstop per gather: each read is a
// syscall round trip, and a host could have many daemons started after tmux.
const maxEnvironReads = 512

// tmuxServer is one server's answer.
type tmuxServer struct {
	socket string
	label  string
	pid    int
	recs   []tmuxPaneRecord
}

// maxStaleListed bounds the sockets without a server that a note names.
const maxStaleListed = 3

// tmuxAnswer is what the tmux servers said, before grouping.
type tmuxAnswer struct {
	servers []tmuxServer
	notes   notes_
}

// askTmux runs list-panes on every server at once (one goroutine per socket,
// each ending when its tmux does, within tmuxTimeout) and collects the
// answers in socket order.
func (g *Grouper) askTmux() tmuxAnswer {
	var a tmuxAnswer
	list := g.cfg.Tmux.ListPanes
	if list == nil {
		list = runTmuxListPanes
	}
	if len(g.cfg.Tmux.Sockets) == 0 && !g.fs.live() {
		// Discovered servers belong to this host; their pane pids mean
		// nothing in another /proc (a fixture, a host mounted elsewhere).
		a.notes.addf("tmux: %s is not this process's /proc, so no servers are discovered: name them (--tmux-socket)", g.fs.Root())
		return a
	}
	sockets, looked := g.cfg.Tmux.sockets()
	if len(sockets) == 0 {
		a.notes.addf("tmux: no server found (looked in %s)", looked)
		return a
	}
	type reply struct {
		out []byte
		err error
	}
	replies := make([]chan reply, len(sockets))
	for i, sock := range sockets {
		replies[i] = make(chan reply, 1)
		go func() {
			out, err := list(sock)
			replies[i] <- reply{out, err}
		}()
	}
	var stale []string
	for i, sock := range sockets {
		r := <-replies[i]
		switch {
		case errors.Is(r.err, ErrNoTmux):
			a.notes.addf("tmux: %v", r.err)
		case errors.Is(r.err, ErrNoTmuxServer):
			stale = append(stale, sock)
		case r.err != nil:
			a.notes.addf("tmux: %v", r.err)
		default:
			recs, bad := parseTmuxPanes(r.out)
			if bad > 0 {
				a.notes.addf("tmux: %d pane records from %s did not parse", bad, sock)
			}
			if len(recs) > 0 {
				a.servers = append(a.servers, tmuxServer{socket: sock, pid: recs[0].serverPID, recs: recs})
			}
		}
	}
	if len(stale) > 0 {
		// Sockets left behind by servers that died are common; name a few.
		more := ""
		if len(stale) > maxStaleListed {
			more = fmt.Sprintf(" and %d more", len(stale)-maxStaleListed)
			stale = stale[:maxStaleListed]
		}
		a.notes.addf("tmux: no server on %s%s", strings.Join(stale, ", "), more)
	}
	labelServers(a.servers)
	return a
}

// Prefetch starts asking the tmux servers for their panes now, so that the
// answer is ready when Group runs: call it right before taking the snapshot
// to overlap tmux's time with the scan's. Group uses (and waits for) the
// last Prefetch not yet used; without one it asks tmux itself. A Prefetch
// whose Group never comes ends on its own when tmux answers.
func (g *Grouper) Prefetch() {
	if !g.kinds[KindTmux] && !g.kinds[KindAgent] {
		return
	}
	ch := make(chan tmuxAnswer, 1)
	go func() { ch <- g.askTmux() }()
	g.prefetched = ch
}

// labelServers gives each server a short label for session names that
// collide across servers: the socket's base name, or its last two path
// elements when base names collide too.
func labelServers(servers []tmuxServer) {
	for i := range servers {
		servers[i].label = filepath.Base(servers[i].socket)
	}
	for i := range servers {
		for j := range servers {
			if i != j && filepath.Base(servers[i].socket) == filepath.Base(servers[j].socket) {
				servers[i].label = filepath.Join(filepath.Base(filepath.Dir(servers[i].socket)), filepath.Base(servers[i].socket))
			}
		}
	}
}

// tmuxSessionRef locates a tmux session: server and session id.
type tmuxSessionRef struct {
	server    int
	sessionID string
}

func groupTmuxServers(fs FS, s *Snapshot, servers []tmuxServer, n *notes_) ([]Session, paneIndex) {
	if len(servers) == 0 {
		return nil, paneIndex{}
	}
	b := newBuilder(s, KindTmux)
	pi := paneIndex{of: make([]int32, len(s.Procs))}
	for i := range pi.of {
		pi.of[i] = -1
	}
	// A session name is bare unless two servers both have it.
	nameCount := map[string]int{}
	for _, srv := range servers {
		seen := map[string]bool{}
		for _, r := range srv.recs {
			if !seen[r.sessionName] {
				seen[r.sessionName] = true
				nameCount[r.sessionName]++
			}
		}
	}
	sessionOf := map[tmuxSessionRef]int32{}
	paneSession := []int32{}          // session of each pane in pi.panes
	paneByID := map[[2]string]int32{} // (socket, pane id) -> pane
	paneByTTY := map[int]int32{}      // tty_nr -> pane
	serverPIDs := map[int]bool{}
	serverSockets := map[int]string{} // server pid -> socket
	var buf []byte
	for si, srv := range servers {
		serverPIDs[srv.pid] = true
		serverSockets[srv.pid] = srv.socket
		for _, r := range srv.recs {
			buf = paneForeground(fs, s, &r.pane, buf)
			ref := tmuxSessionRef{si, r.sessionID}
			sess, ok := sessionOf[ref]
			if !ok {
				name := r.sessionName
				if nameCount[name] > 1 {
					name = srv.label + "/" + name
				}
				sess = b.add(name, map[string]string{
					AttrSocket:     srv.socket,
					AttrTmuxTarget: r.pane.Target,
					AttrAttached:   strconv.Itoa(r.attached),
				})
				sessionOf[ref] = sess
			}
			b.sess[sess].Panes = append(b.sess[sess].Panes, r.pane)
			pane := int32(len(pi.panes))
			pi.panes = append(pi.panes, r.pane)
			paneSession = append(paneSession, sess)
			paneByID[[2]string{srv.socket, r.pane.PaneID}] = pane
			if p := s.Process(r.pane.PID); p != nil && !r.pane.Dead && p.TTY != 0 {
				paneByTTY[p.TTY] = pane
			}
		}
	}
	// Every descendant of each pane pid. A pane whose pid is not in the
	// snapshot is dead or hidden; the backstops may still find its processes.
	assign := func(i int32, pane int32) {
		s.walk(i, 0, func(p *Process, _ int) bool {
			j := s.index(p.ID.PID)
			if b.of[j] >= 0 || p.Kernel || serverPIDs[p.ID.PID] {
				return false
			}
			b.of[j], pi.of[j] = paneSession[pane], pane
			return true
		})
	}
	for pane, tp := range pi.panes {
		if tp.Dead {
			continue
		}
		if i := s.index(tp.PID); i >= 0 {
			assign(int32(i), int32(pane))
		}
	}
	// Backstop 1: the pane's terminal.
	for i := range s.Procs {
		p := &s.Procs[i]
		if b.of[i] >= 0 || p.TTY == 0 {
			continue
		}
		if pane, ok := paneByTTY[p.TTY]; ok {
			assign(int32(i), pane)
		}
	}
	// Backstop 2: the environment of processes outside every pane whose
	// parent is older than the server (init, a subreaper): escapees.
	oldest := oldestServerStart(s, servers)
	reads, capped := 0, false
	for i := range s.Procs {
		p := &s.Procs[i]
		if b.of[i] >= 0 || p.Kernel || p.TTY != 0 || serverPIDs[p.ID.PID] || p.ID.StartTicks < oldest {
			continue
		}
		par := s.parent[i]
		if par >= 0 && (b.of[par] >= 0 || s.Procs[par].ID.StartTicks >= oldest) {
			continue // inside a pane's tree already, or a descendant of a candidate
		}
		if reads == maxEnvironReads {
			capped = true
			break
		}
		reads++
		var tmux, tmuxPane string
		tmux, tmuxPane, buf = fs.tmuxEnviron(p.ID.PID, buf)
		if socket := envSocket(tmux, serverSockets); socket != "" && tmuxPane != "" {
			if pane, ok := paneByID[[2]string{socket, tmuxPane}]; ok {
				assign(int32(i), pane)
			}
		}
	}
	if capped {
		n.addf("tmux: read the environment of only %d processes outside panes; others that escaped a pane may be missed", maxEnvironReads)
	}
	sessions := b.finish()
	for i := range sessions {
		ss := &sessions[i]
		windows := map[string]bool{}
		for _, tp := range ss.Panes {
			windows[paneWindow(tp.Target)] = true
		}
		ss.Attrs[AttrPanes] = strconv.Itoa(len(ss.Panes))
		ss.Attrs[AttrWindows] = strconv.Itoa(len(windows))
	}
	slices.SortFunc(sessions, func(a, b Session) int { return strings.Compare(a.Name, b.Name) })
	return sessions, pi
}

// envSocket returns the socket of the server named by a TMUX variable,
// "socket path,server pid,session index": the path when it is one of ours,
// else the socket of the server with that pid (the same socket reached by
// another path, e.g. through a symlinked TMUX_TMPDIR); "" for neither.
func envSocket(tmux string, serverSockets map[int]string) string {
	path, rest, ok := strings.Cut(tmux, ",")
	if !ok {
		return ""
	}
	for _, sock := range serverSockets {
		if sock == path {
			return path
		}
	}
	pidStr, _, _ := strings.Cut(rest, ",")
	if pid, ok := atoiString(pidStr); ok {
		return serverSockets[pid]
	}
	return ""
}

// paneWindow returns "session:window" of a pane target.
func paneWindow(target string) string {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[:i]
	}
	return target
}

// oldestServerStart returns the start ticks of the oldest server seen, so
// the environ backstop reads only processes started after it.
func oldestServerStart(s *Snapshot, servers []tmuxServer) uint64 {
	oldest := ^uint64(0)
	for _, srv := range servers {
		if p := s.Process(srv.pid); p != nil && p.ID.StartTicks < oldest {
			oldest = p.ID.StartTicks
		}
	}
	if oldest == ^uint64(0) {
		return 0 // server hidden from us: consider every process
	}
	return oldest
}

// paneForeground sets a live pane's Command and Cwd as tmux's
// pane_current_command and pane_current_path would: from the foreground
// process group of the pane's terminal (tpgid in the pane process's stat),
// its leader's argv[0] base name and working directory; the pane process's
// when the leader is not in the snapshot.
func paneForeground(fs FS, s *Snapshot, tp *TmuxPane, buf []byte) []byte {
	pane := s.Process(tp.PID)
	if tp.Dead || pane == nil {
		return buf
	}
	fg := pane
	buf, err := fs.readPIDFile(tp.PID, "stat", buf)
	if err == nil {
		if tpgid, ok := parseStatTPGID(buf); ok {
			if p := s.Process(tpgid); p != nil {
				fg = p
			}
		}
	}
	tp.Command = fg.Name()
	if fg.Read&FieldCwd != 0 {
		tp.Cwd = fg.Cwd
	} else if cwd, err := os.Readlink(fs.pidPath(fg.ID.PID, "cwd")); err == nil {
		tp.Cwd = cwd
	}
	return buf
}

// parseStatTPGID reads field 8 of /proc/<pid>/stat, tpgid: the foreground
// process group of the process's controlling terminal (-1 without one).
// Fields after the comm's last ')' are: state ppid pgrp session tty_nr tpgid.
func parseStatTPGID(b []byte) (int, bool) {
	close := lastIndexByte(b, ')')
	if close < 0 {
		return 0, false
	}
	var f [6][]byte
	if splitFields(b[close+1:], f[:]) != 6 {
		return 0, false
	}
	v, ok := atoi(f[5])
	if !ok || v <= 0 {
		return 0, false
	}
	return int(v), true
}
