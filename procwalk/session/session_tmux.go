//go:build linux

package session

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// session_tmux.go groups processes into tmux sessions: every descendant of
// each pane's pid, then two backstops for processes that escaped the tree
// (a double fork reparents them to init or a subreaper):
//   - same controlling terminal as a pane (a double fork without setsid);
//   - TMUX and TMUX_PANE in the environment, which tmux sets in every pane
//     and children inherit (setsid, then a double fork: no terminal left).

// KindTmux is a tmux session: every process of its panes.
const KindTmux = "tmux"

type tmuxKind struct{}

func (*tmuxKind) name() string { return KindTmux }

func (*tmuxKind) plan(*Grouper) kindPlan { return kindPlan{tmux: true} }

func (*tmuxKind) tagAttrs() []string { return nil }

func (*tmuxKind) numberAttrs() []string { return []string{AttrPanes, AttrWindows, AttrAttached} }

// info: "2 windows, 3 panes, attached, socket default".
func (*tmuxKind) info(s *Session) []string {
	a := s.Attrs
	windows, _ := strconv.Atoi(a[AttrWindows])
	panes, _ := strconv.Atoi(a[AttrPanes])
	parts := []string{countOf(windows, "window", "windows") + ", " + countOf(panes, "pane", "panes")}
	if a[AttrAttached] != "0" {
		parts = append(parts, "attached")
	}
	return append(parts, "socket "+filepath.Base(a[AttrSocket]))
}

func (*tmuxKind) group(x *grouping) []Session { return x.tmuxPanes().sessions }

// countOf says "1 window", "3 windows".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// tmuxState is what the kinds that read tmux's panes (tmux, agent) share
// in a Grouper.
type tmuxState struct {
	// names is the memory of tmux names (stickyNames).
	names map[tmuxNameKey]string
	// environ holds what the tmux environ backstop read of each process
	// still alive, so each is read once in its life.
	environ      map[procwalk.ProcID]tmuxEnv
	environLimit int             // reads a gather: maxEnvironReads (tests lower it)
	prefetched   chan tmuxAnswer // set by Prefetch, taken by Group
	// answers are the servers' answers kept by socket (tmux_cache.go),
	// when cacheable: the FS is this host's /proc, where the servers'
	// pids are. readServer reads a server's state (tests replace it).
	answers    map[string]tmuxCached
	cacheable  bool
	asked      bool // tmux was asked once: from the second ask on, answers are kept
	readServer func(pid int) (tmuxServerState, error)
	settleWait time.Duration // tmuxSettleTimeout (tests lengthen it)
}

// tmuxResult is one gather's grouping into tmux sessions.
type tmuxResult struct {
	sessions []Session
	panes    paneIndex
}

// tmuxPanes waits for tmux's answer and groups the tmux sessions, once a
// gather, for every kind that asks.
func (x *grouping) tmuxPanes() *tmuxResult {
	if x.tmux != nil {
		return x.tmux
	}
	x.tmux = &tmuxResult{}
	if x.tmuxAnswer != nil {
		a := <-x.tmuxAnswer
		for _, note := range a.notes.list {
			x.notes.addf("%s", note)
		}
		x.g.tmux.answers = a.keep
		x.tmux.sessions, x.tmux.panes = x.g.groupTmux(x.s, a.servers, x.notes)
	}
	return x.tmux
}

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

// tmuxServer is one server's answer.
type tmuxServer struct {
	socket string
	label  string
	pid    int
	recs   []tmuxPaneRecord
}

// maxStaleListed bounds the sockets without a server that a note names.
const maxStaleListed = 3

// tmuxAnswer is what the tmux servers said, before grouping, and the
// answers to keep for the next ask.
type tmuxAnswer struct {
	servers []tmuxServer
	notes   noteList
	keep    map[string]tmuxCached
}

// askTmux runs list-panes on every server at once (one goroutine per socket,
// each ending when its tmux does, within tmuxTimeout) and collects the
// answers in socket order. A server whose answer in known still stands
// (tmux_cache.go) is not asked.
func (g *Grouper) askTmux(known map[string]tmuxCached) tmuxAnswer {
	var a tmuxAnswer
	list := g.cfg.Tmux.ListPanes
	if list == nil {
		list = runTmuxListPanes
	}
	if len(g.cfg.Tmux.Sockets) == 0 && !g.liveFS {
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
		err  error
		srv  tmuxServer // recs nil: no pane
		bad  int
		keep *tmuxCached
	}
	replies := make([]chan reply, len(sockets))
	for i, sock := range sockets {
		replies[i] = make(chan reply, 1)
		go func() {
			if c, ok := g.cachedAnswer(known, sock); ok {
				replies[i] <- reply{srv: c.answer, bad: c.bad, keep: &c}
				return
			}
			out, err := list(sock)
			r := reply{err: err}
			if err == nil {
				var recs []tmuxPaneRecord
				recs, r.bad = parseTmuxPanes(out)
				if len(recs) > 0 {
					r.srv = tmuxServer{socket: sock, pid: recs[0].serverPID, recs: recs}
					if known != nil { // a Grouper asking again: keep the answer
						if c, ok := g.settle(r.srv, r.bad); ok {
							r.keep = &c
						}
					}
				}
			}
			replies[i] <- r
		}()
	}
	if known != nil {
		a.keep = make(map[string]tmuxCached, len(known))
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
			if r.bad > 0 {
				a.notes.addf("tmux: %d pane records from %s did not parse", r.bad, sock)
			}
			if r.srv.recs != nil {
				a.servers = append(a.servers, r.srv)
			}
			if r.keep != nil {
				a.keep[sock] = *r.keep
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
	if !g.asksTmux() {
		return
	}
	ch := make(chan tmuxAnswer, 1)
	known := g.knownAnswers()
	go func() { ch <- g.askTmux(known) }()
	g.tmux.prefetched = ch
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

// findQualifiedTmux finds the tmux session that "SERVER/NAME" names while
// the session itself is called NAME, bare: a name copied when another
// server also had a NAME keeps working after that one ends. SERVER is the
// socket's base name or its last path elements, as labelServers makes them.
func findQualifiedTmux(sessions []Session, name string) *Session {
	i := strings.LastIndexByte(name, '/')
	if i <= 0 {
		return nil
	}
	label, base := name[:i], name[i+1:]
	for j := range sessions {
		s := &sessions[j]
		if s.Kind != KindTmux || s.Name != base {
			continue
		}
		if socket := s.Attrs[AttrSocket]; socket == label || strings.HasSuffix(socket, "/"+label) {
			return s
		}
	}
	return nil
}

// tmuxSessionRef locates a tmux session: server and session id.
type tmuxSessionRef struct {
	server    int
	sessionID string
}

// tmuxGrouping is one gather's grouping of processes into tmux sessions.
type tmuxGrouping struct {
	s           *procwalk.Snapshot
	servers     []tmuxServer
	serverIndex []int // each server's index in s.Procs, -1 when not visible
	b           *builder
	pi          paneIndex
	paneSession []int32             // session of each pane in pi.panes
	paneByID    map[[2]string]int32 // (socket, pane id) -> pane
	paneByTTY   map[int]int32       // tty_nr -> live pane
	// names is the Grouper's memory of tmux names: the last gather's, in;
	// this gather's, out (stickyNames).
	names map[tmuxNameKey]string
}

// tmuxNameKey identifies a tmux session across gathers: its server's socket
// and its id, which tmux never reuses while the server lives.
type tmuxNameKey struct{ socket, sessionID string }

// stickyNames names each tmux session: the name it had in the previous
// gather of this Grouper while that is still its name, bare or
// qualified, and no other session took it; else bare, or "server/name" when
// another server has a session of that name. So "build" stays bare when a
// second server creates a "build" later (that one is "label/build").
func (t *tmuxGrouping) stickyNames(nameCount map[string]int, sessions int) map[tmuxSessionRef]string {
	names := make(map[tmuxSessionRef]string, sessions)
	taken := make(map[string]bool, sessions)
	next := make(map[tmuxNameKey]string, sessions)
	var fresh []tmuxSessionRef
	seen := make(map[tmuxSessionRef]bool, sessions)
	for si, srv := range t.servers {
		for _, r := range srv.recs {
			ref := tmuxSessionRef{si, r.sessionID}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			old, ok := t.names[tmuxNameKey{srv.socket, r.sessionID}]
			if ok && !taken[old] && (old == r.sessionName || old == srv.label+"/"+r.sessionName) {
				names[ref], taken[old] = old, true
				continue
			}
			fresh = append(fresh, ref)
		}
	}
	for _, ref := range fresh {
		srv := &t.servers[ref.server]
		base := ""
		for _, r := range srv.recs {
			if r.sessionID == ref.sessionID {
				base = r.sessionName
				break
			}
		}
		name := base
		if nameCount[base] > 1 || taken[base] {
			name = srv.label + "/" + base
		}
		names[ref], taken[name] = name, true
	}
	for ref, name := range names {
		next[tmuxNameKey{t.servers[ref.server].socket, ref.sessionID}] = name
	}
	t.names = next
	return names
}

// groupTmux makes one session per tmux session of the servers: the
// descendants of its panes' processes, then the escapees the backstops find.
func (g *Grouper) groupTmux(s *procwalk.Snapshot, servers []tmuxServer, n *noteList) ([]Session, paneIndex) {
	if len(servers) == 0 {
		g.tmux.environ = nil
		return nil, paneIndex{}
	}
	panes := 0
	for _, srv := range servers {
		panes += len(srv.recs)
	}
	// Sized for every pane at once: growing maps of a hundred sessions'
	// thousands of panes costs more than their entries.
	t := &tmuxGrouping{s: s, servers: servers, b: newBuilder(s, KindTmux),
		paneByID: make(map[[2]string]int32, panes), paneByTTY: make(map[int]int32, panes), names: g.tmux.names}
	t.pi.panes = make([]TmuxPane, 0, panes)
	t.paneSession = make([]int32, 0, panes)
	t.pi.of = make([]int32, len(s.Procs))
	for i := range t.pi.of {
		t.pi.of[i] = -1
	}
	for _, srv := range servers {
		t.serverIndex = append(t.serverIndex, s.Index(srv.pid))
	}
	t.addPanes()
	for pane, tp := range t.pi.panes {
		// A pane whose pid is not in the snapshot is dead or hidden; the
		// backstops may still find its processes.
		if i := s.Index(tp.PID); i >= 0 && !tp.Dead {
			t.assign(int32(i), int32(pane))
		}
	}
	g.tmux.names = t.names
	t.ttyBackstop()
	if partial := g.environBackstop(t, n); partial {
		for i := range t.b.sess {
			t.b.sess[i].Partial = true
		}
	}
	return t.finish(), t.pi
}

// addPanes starts a session per tmux session and indexes every pane. A
// session name is bare unless two servers both have it when it is first
// seen; then it is "server/name", and either form sticks (stickyNames).
func (t *tmuxGrouping) addPanes() {
	// The maps are sized for the sessions at once (growing them was half
	// of this function's time): list-panes lists a session's panes
	// together, so sessions counts them, or fewer when it does not.
	sessions := 0
	for _, srv := range t.servers {
		for i, r := range srv.recs {
			if i == 0 || r.sessionID != srv.recs[i-1].sessionID {
				sessions++
			}
		}
	}
	t.b.sess = slices.Grow(t.b.sess, sessions)
	nameCount := make(map[string]int, sessions)
	for _, srv := range t.servers {
		seen := make(map[string]bool, sessions)
		for _, r := range srv.recs {
			if !seen[r.sessionName] {
				seen[r.sessionName] = true
				nameCount[r.sessionName]++
			}
		}
	}
	names := t.stickyNames(nameCount, sessions)
	sessionOf := make(map[tmuxSessionRef]int32, sessions)
	for si, srv := range t.servers {
		for _, r := range srv.recs {
			if !r.pane.Dead && !t.paneProcess(srv.pid, r.pane.PID) {
				r.pane.Dead = true // its process is gone: the pid is another's now
			}
			ref := tmuxSessionRef{si, r.sessionID}
			sess, ok := sessionOf[ref]
			if !ok {
				sess = t.b.add(names[ref], map[string]string{
					AttrSocket:     srv.socket,
					AttrTmuxTarget: r.pane.Target,
					AttrAttached:   strconv.Itoa(r.attached),
				})
				sessionOf[ref] = sess
			}
			t.b.sess[sess].Panes = append(t.b.sess[sess].Panes, r.pane)
			pane := int32(len(t.pi.panes))
			t.pi.panes = append(t.pi.panes, r.pane)
			t.paneSession = append(t.paneSession, sess)
			t.paneByID[[2]string{srv.socket, r.pane.PaneID}] = pane
			if p := t.s.Process(r.pane.PID); p != nil && !r.pane.Dead && p.TTY != 0 {
				t.paneByTTY[p.TTY] = pane
			}
		}
	}
}

// paneProcess says whether pid, a pane's process as tmux reports it, is
// still that process: tmux forks every pane's process itself, so its parent
// is the server. A pid whose process ended and was reused by another (one
// of ten thousand sleepers in a pane of another server, as a test saw) has
// another parent. A pid not in the snapshot (hidden, gone) is left to the
// callers, who find no process there.
func (t *tmuxGrouping) paneProcess(serverPID, pid int) bool {
	p := t.s.Process(pid)
	return p == nil || p.PPID == serverPID
}

// assign puts process i and its descendants not yet in a session into the
// pane's session; a tmux server (nested in a pane) stays out with its tree.
func (t *tmuxGrouping) assign(i, pane int32) {
	if t.b.of[i] >= 0 || t.s.Procs[i].Kernel || t.isServer(i) {
		return
	}
	t.b.of[i], t.pi.of[i] = t.paneSession[pane], pane
	for c := t.s.FirstChildIndex(i); c >= 0; c = t.s.NextSiblingIndex(c) {
		t.assign(c, pane)
	}
}

func (t *tmuxGrouping) isServer(i int32) bool {
	return slices.Contains(t.serverIndex, int(i))
}

// ttyBackstop adds the processes outside every pane's tree that have a
// pane's terminal: a double fork without setsid, e.g. "( cmd & )".
func (t *tmuxGrouping) ttyBackstop() {
	for i := range t.s.Procs {
		if p := &t.s.Procs[i]; t.b.of[i] < 0 && p.TTY != 0 {
			if pane, ok := t.paneByTTY[p.TTY]; ok {
				t.assign(int32(i), pane)
			}
		}
	}
}

// tmuxEnv is what the environ backstop read from a process's environment.
type tmuxEnv struct {
	tmux, pane string // TMUX and TMUX_PANE, "" when absent
	denied     bool   // the kernel refused the read
}

// maxEnvironReads bounds the environ reads of one gather: each costs an
// open, a read of up to the whole environment and a close. Processes left
// unread are read by the next gathers (the Grouper remembers what it read),
// and the tmux sessions of this one are marked Partial.
const maxEnvironReads = 512

// environBackstop finds processes that left every pane's tree and terminal
// (setsid, then a double fork) by TMUX and TMUX_PANE, which tmux sets in
// each pane and children inherit. It reports whether escapees may have been
// missed.
//
// An orphan is adopted by the nearest subreaper among its ancestors, or by
// init. A pane's processes descend from the server, so an escapee's new
// parent is the server's ancestor (or a subreaper inside the pane, whose
// tree is already counted). Only processes outside every pane, without a
// terminal, started after the server and with such a parent are read, each
// once in its life: the Grouper keeps what it read per ProcID. A process
// counts for a server only when it started after that server, so the TMUX
// of a dead server whose pid a new server reused cannot misplace it.
func (g *Grouper) environBackstop(t *tmuxGrouping, n *noteList) (partial bool) {
	s := t.s
	adopters, oldest := t.adopters()
	next := make(map[procwalk.ProcID]tmuxEnv, len(g.tmux.environ))
	reads, unread, denied := 0, 0, 0
	for i := range s.Procs {
		p := &s.Procs[i]
		if t.b.of[i] >= 0 || p.Kernel || p.TTY != 0 || p.ID.StartTicks < oldest || t.isServer(int32(i)) {
			continue
		}
		if par := s.ParentIndex(int32(i)); par >= 0 && !adopters(par) {
			continue // forked by its parent, not adopted: or a candidate's child
		}
		env, ok := g.tmux.environ[p.ID]
		if !ok {
			if reads == g.tmux.environLimit {
				unread++
				continue
			}
			reads++
			env = tmuxEnviron(g.environs, p.ID.PID)
		}
		next[p.ID] = env
		if env.denied {
			if t.sameUserAsServer(p) {
				denied++
			}
			continue
		}
		if srv := envServer(env.tmux, t.servers); srv >= 0 && t.startedAfter(p, srv) {
			if pane, ok := t.paneByID[[2]string{t.servers[srv].socket, env.pane}]; ok {
				t.assign(int32(i), pane)
			}
		}
	}
	g.tmux.environ = next
	if unread > 0 {
		n.addf("tmux: %d processes outside panes were not checked for a pane's environment (at most %d a gather, the next gathers go on): tmux sessions may lack escaped processes", unread, g.tmux.environLimit)
	}
	if denied > 0 {
		n.addf("tmux: the environment of %d processes of a tmux server's user could not be read (not dumpable, e.g. ssh-agent): tmux sessions may lack them unless run as root", denied)
	}
	return unread > 0 || denied > 0
}

// adopters says which processes may have adopted an escapee: the servers'
// ancestors. With a server not visible (hidepid, another pid namespace) its
// ancestors and start are unknown, so any parent may be. oldest is the
// start of the oldest server (0 when one is not visible).
func (t *tmuxGrouping) adopters() (func(int32) bool, uint64) {
	ancestors := map[int32]bool{}
	oldest := ^uint64(0)
	for _, i := range t.serverIndex {
		if i < 0 {
			return func(int32) bool { return true }, 0
		}
		oldest = min(oldest, t.s.Procs[i].ID.StartTicks)
		for a := t.s.ParentIndex(int32(i)); a >= 0; a = t.s.ParentIndex(a) {
			ancestors[a] = true
		}
	}
	return func(i int32) bool { return ancestors[i] }, oldest
}

// startedAfter reports whether p started after server srv (true when the
// server is not visible: nothing to compare).
func (t *tmuxGrouping) startedAfter(p *procwalk.Process, srv int) bool {
	i := t.serverIndex[srv]
	return i < 0 || p.ID.StartTicks >= t.s.Procs[i].ID.StartTicks
}

// sameUserAsServer reports whether p runs as the effective uid of a
// server (false when uids were not read): its unreadable environment may
// hide an escapee, where another user's is no business of that server's.
func (t *tmuxGrouping) sameUserAsServer(p *procwalk.Process) bool {
	if p.Read&procwalk.FieldOwner == 0 {
		return false
	}
	for _, i := range t.serverIndex {
		if i >= 0 && t.s.Procs[i].Read&procwalk.FieldOwner != 0 && t.s.Procs[i].EffectiveUID == p.EffectiveUID {
			return true
		}
	}
	return false
}

// finish computes members and totals, counts windows and panes, and orders
// the sessions by name.
func (t *tmuxGrouping) finish() []Session {
	sessions := t.b.finish()
	for i := range sessions {
		ss := &sessions[i]
		windows := map[string]bool{}
		for _, tp := range ss.Panes {
			windows[paneWindow(tp.Target)] = true
		}
		ss.Attrs[AttrPanes] = strconv.Itoa(len(ss.Panes))
		ss.Attrs[AttrWindows] = strconv.Itoa(len(windows))
	}
	slices.SortFunc(sessions, func(a, b Session) int { return CompareNatural(a.Name, b.Name) })
	return sessions
}

// envServer returns the index of the server named by a TMUX variable,
// "socket path,server pid,session index": the server with that socket path,
// else the one with that pid (the same socket reached by another path, e.g.
// through a symlinked TMUX_TMPDIR); -1 for neither.
func envServer(tmux string, servers []tmuxServer) int {
	path, rest, ok := strings.Cut(tmux, ",")
	if !ok {
		return -1
	}
	if i := slices.IndexFunc(servers, func(srv tmuxServer) bool { return srv.socket == path }); i >= 0 {
		return i
	}
	pidStr, _, _ := strings.Cut(rest, ",")
	if pid, ok := atoiString(pidStr); ok {
		return slices.IndexFunc(servers, func(srv tmuxServer) bool { return srv.pid == pid })
	}
	return -1
}

// paneWindow returns "session:window" of a pane target.
func paneWindow(target string) string {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[:i]
	}
	return target
}

// PaneForegrounds sets Command and Cwd of the live panes of ss, a tmux
// session that Group built from s. Group leaves them empty: they cost a
// read of each pane's stat (and a readlink when s lacks cwd), which only a
// display of the panes needs, not every gather.
func (g *Grouper) PaneForegrounds(s *procwalk.Snapshot, ss *Session) {
	var buf []byte
	for i := range ss.Panes {
		buf = paneForeground(g.fs, s, &ss.Panes[i], buf)
	}
}

// paneForeground sets a live pane's Command and Cwd as tmux's
// pane_current_command and pane_current_path would: from the foreground
// process group of the pane's terminal (tpgid in the pane process's stat),
// its leader's argv[0] base name and working directory; the pane process's
// when the leader is not in the snapshot.
func paneForeground(fs procwalk.FS, s *procwalk.Snapshot, tp *TmuxPane, buf []byte) []byte {
	pane := s.Process(tp.PID)
	if tp.Dead || pane == nil {
		return buf
	}
	fg := pane
	buf, err := fs.ReadPIDFile(tp.PID, "stat", buf)
	if err == nil {
		if tpgid, ok := parseStatTPGID(buf); ok {
			if p := s.Process(tpgid); p != nil {
				fg = p
			}
		}
	}
	tp.Command = fg.Name()
	tp.Cwd = cwd(fs, fg)
	return buf
}

// parseStatTPGID reads field 8 of /proc/<pid>/stat, tpgid: the foreground
// process group of the process's controlling terminal (-1 without one).
// Fields after the comm's last ')' are: state ppid pgrp session tty_nr tpgid.
func parseStatTPGID(b []byte) (int, bool) {
	close := bytes.LastIndexByte(b, ')')
	if close < 0 {
		return 0, false
	}
	var f [6][]byte
	if fsio.SplitFields(b[close+1:], f[:]) != 6 {
		return 0, false
	}
	v, ok := fsio.Atoi(f[5])
	if !ok || v <= 0 {
		return 0, false
	}
	return int(v), true
}
