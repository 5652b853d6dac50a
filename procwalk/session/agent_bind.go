//go:build linux

package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// agent_bind.go binds each agent to its transcript by evidence that cannot
// swap, strongest first, keeping a binding once made:
//
//  1. the file the agent holds open (Codex keeps its rollout file open);
//  2. the session its command line names: claude --session-id ID,
//     claude --resume/-r ID (when that file was written since the agent
//     started), codex resume ID;
//  3. Claude Code's record of its process, <config>/sessions/<pid>.json,
//     naming its session id (2.1), when the pid's start matches;
//  4. CLAUDE_CODE_SESSION_ID in the environment of the tools it runs
//     (2.1.132 and later), the youngest tool's;
//  5. the only agent of its folder: the file of the folder created last
//     since it started (birth time), else written last; a newer file later
//     is its /clear;
//  6. elimination: a file no other agent of the folder can own, for it
//     was created before they started.
//
// Evidence counts when it is new (a record rewritten, a tool started), so
// that a /clear, which Claude Code's record does not follow, still moves
// the only agent of a folder to its new file. Where none of these holds the
// agent is "ambiguous": the files it could own are named, none is read.

// Binding kinds, AgentState.Binding.
const (
	BindOpenFile      = "open file"
	BindCommandLine   = "command line"
	BindSessionRecord = "session record"
	BindToolEnv       = "tool environment"
	BindOnlyAgent     = "only agent in its folder"
	BindElimination   = "only candidate"
	BindAmbiguous     = "ambiguous"
)

// agentIdentity is what binding needs of an agent, learned once.
type agentIdentity struct {
	uid  uint32
	home string
	cwd  string // the process's working directory
	// project is the working directory its transcripts name: codex -C DIR,
	// else cwd.
	project string
	// claudeConfig and codexHome are CLAUDE_CONFIG_DIR and CODEX_HOME of
	// its environment, or their defaults under home.
	claudeConfig string
	codexHome    string
	// sessionID is the session its command line names (--session-id,
	// --resume ID, codex resume ID); resume says it may be an old file.
	sessionID string
	resume    bool
}

// identify learns the agent's identity from its process.
func (g *Grouper) identify(t *agentTrack, p *procwalk.Process, cwd string) {
	t.id.uid, t.id.home = g.agentOwnerUID(p)
	env, _ := g.environs.Read(p.ID.PID)
	if h := environValue(env, "HOME"); strings.HasPrefix(h, "/") {
		t.id.home = h
	}
	if t.id.home == "" {
		t.id.home = g.cfg.Users.Home(int(t.id.uid))
	}
	t.id.cwd, t.id.project = cwd, cwd
	t.id.claudeConfig, t.id.codexHome = filepath.Join(t.id.home, ".claude"), filepath.Join(t.id.home, ".codex")
	if d := environValue(env, "CLAUDE_CONFIG_DIR"); strings.HasPrefix(d, "/") {
		t.id.claudeConfig = filepath.Clean(d)
	}
	if d := environValue(env, "CODEX_HOME"); strings.HasPrefix(d, "/") {
		t.id.codexHome = filepath.Clean(d)
	}
	cmdline := p.Cmdline
	if p.Read&procwalk.FieldCmdline == 0 {
		if b, err := g.environs.ReadFile(p.ID.PID, "cmdline"); err == nil {
			cmdline = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		}
	}
	args := agentArgs(p.Comm, cmdline)
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--session-id":
			t.id.sessionID, t.id.resume = next(), false
		case strings.HasPrefix(a, "--session-id="):
			t.id.sessionID, t.id.resume = a[len("--session-id="):], false
		case a == "--resume" || a == "-r":
			if v := next(); looksLikeSessionID(v) {
				t.id.sessionID, t.id.resume = v, true
			}
		case strings.HasPrefix(a, "--resume="):
			t.id.sessionID, t.id.resume = a[len("--resume="):], true
		case a == "resume" && i == 0: // codex resume ID
			if v := next(); looksLikeSessionID(v) {
				t.id.sessionID, t.id.resume = v, true
			}
		case a == "-C" || a == "--cd": // codex -C DIR
			if d := next(); d != "" {
				t.id.project = resolveDir(cwd, d)
			}
		case strings.HasPrefix(a, "--cd="):
			t.id.project = resolveDir(cwd, a[len("--cd="):])
		}
	}
}

// agentArgs are the arguments of the agent's command line after its
// program (and, for an interpreter, after its script).
func agentArgs(comm string, cmdline []string) []string {
	if len(cmdline) == 0 {
		return nil
	}
	args := cmdline[1:]
	if agentInterpreter(comm) || agentInterpreter(filepath.Base(cmdline[0])) {
		for i, a := range args {
			if a != "" && a[0] != '-' {
				return args[i+1:] // the script, then its arguments
			}
		}
		return nil
	}
	return args
}

func resolveDir(cwd, d string) string {
	if !filepath.IsAbs(d) {
		d = filepath.Join(cwd, d)
	}
	return filepath.Clean(d)
}

// looksLikeSessionID accepts the ids agents name sessions by: UUIDs (Claude
// Code's, Codex's), no path, no option.
func looksLikeSessionID(s string) bool {
	if len(s) < 8 || len(s) > 64 || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// agentOwnerUID is the agent's uid (the owner of /proc/<pid>) and its
// user's home in the passwd file.
func (g *Grouper) agentOwnerUID(p *procwalk.Process) (uint32, string) {
	var st syscall.Stat_t
	if err := syscall.Stat(g.fs.PIDPath(p.ID.PID, ""), &st); err != nil {
		return 0, ""
	}
	return st.Uid, g.cfg.Users.Home(int(st.Uid))
}

// claudeProjectDir is Claude Code's folder name for a working directory:
// every UTF-16 code unit that is not an ASCII letter or digit becomes '-'
// (JavaScript's replace(/[^a-zA-Z0-9]/g, "-"): "café" is "caf-", an emoji
// "--"), and a name longer than 200 is cut to 200 and followed by '-' and a
// hash (whose function changed between versions: the folder is found by
// its prefix, long reports).
func claudeProjectDir(cwd string) (name string, long bool) {
	var b strings.Builder
	for i := 0; i < len(cwd); {
		r, size := utf8.DecodeRuneInString(cwd[i:])
		i += size
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--") // a surrogate pair: two code units
		default:
			b.WriteByte('-')
		}
	}
	name = b.String()
	if len(name) > maxProjectDir {
		return name[:maxProjectDir] + "-", true
	}
	return name, false
}

// maxProjectDir is the length past which Claude Code cuts a folder name.
const maxProjectDir = 200

// transcriptDirs are the agent's transcript folders for src: placeholders
// expanded; a long {project} is every folder of its parent whose name has
// the cut name as prefix (each file's cwd then tells which are its).
func (tr *agentTracker) transcriptDirs(t *agentTrack, src *TranscriptSource, now time.Time) []string {
	project, long := claudeProjectDir(t.id.project)
	base := strings.NewReplacer("{home}", t.id.home, "{claude_config}", t.id.claudeConfig, "{codex_home}", t.id.codexHome).Replace(src.Dir)
	var out []string
	for _, d := range expandDays(base, t.start, now) {
		if !strings.Contains(d, "{project}") {
			out = append(out, d)
			continue
		}
		if !long {
			out = append(out, strings.ReplaceAll(d, "{project}", project))
			continue
		}
		parent, rest, _ := strings.Cut(d, "{project}")
		for _, name := range tr.subdirsWithPrefix(filepath.Clean(parent), project, t.id.uid) {
			out = append(out, filepath.Join(parent, name)+rest)
		}
	}
	return out
}

// subdirsWithPrefix lists the folders in parent whose names start with
// prefix, listing parent again only when it changed.
func (tr *agentTracker) subdirsWithPrefix(parent, prefix string, uid uint32) []string {
	if tr.prefixDirs == nil {
		tr.prefixDirs = map[string]*prefixListing{}
	}
	key := parent + "\x00" + prefix
	var st syscall.Stat_t
	if syscall.Lstat(parent, &st) != nil {
		return nil
	}
	mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	if l := tr.prefixDirs[key]; l != nil && l.mtime.Equal(mtime) && tr.now().Sub(mtime) >= racyWindow {
		return l.names
	}
	fd, err := fsio.OpenUserDir(parent, int(uid))
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	if tr.dirBuf == nil {
		tr.dirBuf = make([]byte, 64<<10)
	}
	var names []string
	fsio.EachDirent(fd, tr.dirBuf, func(name []byte, typ byte) {
		if strings.HasPrefix(string(name), prefix) && (typ == syscall.DT_DIR || typ == syscall.DT_UNKNOWN) {
			names = append(names, string(name))
		}
	})
	if len(tr.prefixDirs) > maxDirs {
		clear(tr.prefixDirs)
	}
	tr.prefixDirs[key] = &prefixListing{mtime, names}
	return names
}

type prefixListing struct {
	mtime time.Time
	names []string
}

// maxTranscriptDays bounds the days {yyyy}/{mm}/{dd} expand to: an agent
// running for weeks keeps writing today's file, not one of its first day.
const maxTranscriptDays = 7

// expandDays expands {yyyy}, {mm} and {dd} to each day (UTC and local)
// from start to now, at most maxTranscriptDays back.
func expandDays(d string, start, now time.Time) []string {
	if !strings.Contains(d, "{yyyy}") && !strings.Contains(d, "{mm}") && !strings.Contains(d, "{dd}") {
		return []string{d}
	}
	var out []string
	seen := map[string]bool{}
	from := now.AddDate(0, 0, -maxTranscriptDays)
	if start.After(from) {
		from = start
	}
	for _, loc := range []*time.Location{time.UTC, time.Local} {
		for day := from.In(loc); ; day = day.AddDate(0, 0, 1) {
			y, m, dd := day.Date()
			e := strings.NewReplacer("{yyyy}", fmt.Sprintf("%04d", y), "{mm}", fmt.Sprintf("%02d", m), "{dd}", fmt.Sprintf("%02d", dd)).Replace(d)
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
			ny, nm, nd := now.In(loc).Date()
			if y > ny || y == ny && (m > nm || m == nm && dd >= nd) {
				break
			}
		}
	}
	return out
}

// evidence is a file an agent's own state names, and how.
type evidence struct {
	path string
	kind string
}

// sessionFile finds the file of session id in the agent's folders:
// <id>.jsonl (Claude Code), rollout-…-<id>.jsonl (Codex).
func sessionFile(dirs []*transcriptDir, id string) string {
	for _, d := range dirs {
		if d.files[id+".jsonl"] != nil {
			return filepath.Join(d.path, id+".jsonl")
		}
	}
	for _, d := range dirs {
		for name := range d.files {
			if strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, "-"+id+".jsonl") {
				return filepath.Join(d.path, name)
			}
		}
	}
	return ""
}

// newEvidence returns what the agent's state names now and did not name
// before: its open files, its command line (at first), its session record
// and its tools' environment when they change.
func (g *Grouper) newEvidence(s *procwalk.Snapshot, ss *Session, t *agentTrack, tr *agentTracker, src *TranscriptSource, changed bool) (evidence, bool) {
	if t.bound == nil || changed || src.Parser == "codex" && t.bound.kind == BindOpenFile {
		if p := g.openTranscript(s, ss, t); p != "" && (t.bound == nil || t.bound.path != p) {
			return evidence{p, BindOpenFile}, true
		}
	}
	if !t.argsUsed && t.id.sessionID != "" {
		if p := sessionFile(t.dirIdx, t.id.sessionID); p != "" {
			f := t.fileOf(p)
			if !t.id.resume || f != nil && !f.mtime.Before(t.start.Add(-transcriptSlack)) {
				t.argsUsed = true
				return evidence{p, BindCommandLine}, true
			}
		}
	}
	if src.Parser != "claude" {
		return evidence{}, false
	}
	if id, fresh := g.sessionRecord(t); fresh {
		if p := sessionFile(t.dirIdx, id); p != "" {
			t.recordUsed = id
			return evidence{p, BindSessionRecord}, true
		}
	}
	if id := g.toolSession(s, ss, t); id != "" {
		if p := sessionFile(t.dirIdx, id); p != "" {
			t.toolUsed = id
			return evidence{p, BindToolEnv}, true
		}
	}
	return evidence{}, false
}

// fileOf is the index entry of path among the agent's folders, statted.
func (t *agentTrack) fileOf(path string) *dirFile {
	dir, name := filepath.Split(path)
	for _, d := range t.dirIdx {
		if d.path == filepath.Clean(dir) {
			if f := d.files[name]; f != nil {
				d.stat(f, false)
				return f
			}
		}
	}
	return nil
}

// openTranscript is a .jsonl file of the agent's folders that the agent,
// or an agent process it runs (Codex's native binary under its node
// wrapper), holds open: /proc/PID/fd.
func (g *Grouper) openTranscript(s *procwalk.Snapshot, ss *Session, t *agentTrack) string {
	pids := []int{t.leader.PID}
	leader := s.Process(t.leader.PID)
	for _, i := range ss.index {
		p := &s.Procs[i]
		if p.ID != t.leader && leader != nil && (p.Comm == leader.Comm || p.Comm == "codex") && len(pids) < 8 {
			pids = append(pids, p.ID.PID)
		}
	}
	for _, pid := range pids {
		for _, target := range g.openFiles(pid) {
			if !strings.HasSuffix(target, ".jsonl") {
				continue
			}
			for _, d := range t.dirIdx {
				if filepath.Dir(target) == d.path {
					return target
				}
			}
		}
	}
	return ""
}

// openFiles lists where pid's file descriptors point (/proc/PID/fd),
// paths only, at most 4096.
func (g *Grouper) openFiles(pid int) []string {
	dir := g.fs.PIDPath(pid, "fd")
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var out []string
	fsio.EachDirent(fd, make([]byte, 16<<10), func(name []byte, _ byte) {
		if len(out) >= 4096 {
			return
		}
		if target, err := os.Readlink(dir + "/" + string(name)); err == nil && strings.HasPrefix(target, "/") {
			out = append(out, target)
		}
	})
	return out
}

// sessionRecord reads Claude Code's record of the agent's process,
// <config>/sessions/<pid>.json ({"pid","sessionId","cwd","startedAt"}),
// when it changed: fresh reports a session id not used before. The record
// counts only when its pid, start (within a minute) and cwd are the
// agent's: a stale record of a reused pid names another process.
func (g *Grouper) sessionRecord(t *agentTrack) (id string, fresh bool) {
	path := filepath.Join(t.id.claudeConfig, "sessions", strconv.Itoa(t.leader.PID)+".json")
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return "", false
	}
	mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	if mtime.Equal(t.recordMtime) && st.Size == t.recordSize {
		return "", false
	}
	t.recordMtime, t.recordSize = mtime, st.Size
	b, err := fsio.ReadUserFile(path, int(t.id.uid), 64<<10)
	if err != nil {
		t.skipped.add(path, skipReason(err))
		return "", false
	}
	var r struct {
		PID       int    `json:"pid"`
		SessionID string `json:"sessionId"`
		CWD       string `json:"cwd"`
		StartedAt int64  `json:"startedAt"` // milliseconds since 1970
	}
	if json.Unmarshal(b, &r) != nil || r.PID != t.leader.PID || !looksLikeSessionID(r.SessionID) {
		return "", false
	}
	if d := time.UnixMilli(r.StartedAt).Sub(t.start); r.StartedAt == 0 || d < -time.Minute || d > time.Minute {
		return "", false
	}
	if r.CWD != "" && r.CWD != t.id.cwd {
		return "", false
	}
	return r.SessionID, r.SessionID != t.recordUsed
}

// maxToolsSeen bounds the tool processes whose environment was read.
const maxToolsSeen = 256

// toolSession is CLAUDE_CODE_SESSION_ID in the environment of the youngest
// of the agent's children not looked at before, when it names a session
// not used before: Claude Code 2.1.132 sets it for the tools it runs.
func (g *Grouper) toolSession(s *procwalk.Snapshot, ss *Session, t *agentTrack) string {
	leader := int32(s.Index(t.leader.PID))
	var youngest *procwalk.Process
	for _, i := range ss.index {
		p := &s.Procs[i]
		if s.ParentIndex(i) != leader || t.toolsSeen[p.ID] {
			continue
		}
		if t.toolsSeen == nil || len(t.toolsSeen) >= maxToolsSeen {
			t.toolsSeen = map[procwalk.ProcID]bool{}
		}
		t.toolsSeen[p.ID] = true
		if youngest == nil || p.Start.After(youngest.Start) {
			youngest = p
		}
	}
	if youngest == nil {
		return ""
	}
	env, err := g.environs.Read(youngest.ID.PID)
	if err != nil {
		return ""
	}
	if id := environValue(env, "CLAUDE_CODE_SESSION_ID"); looksLikeSessionID(id) && id != t.toolUsed {
		return id
	}
	return ""
}

// binding is an agent's transcript and how it was found.
type binding struct {
	path string
	kind string
	// gather is when it was made.
	gather uint64
}

// candidate is a file an unbound agent could own.
type candidate struct {
	path  string
	born  time.Time // birth time, else an upper bound of it
	mtime time.Time
	d     *transcriptDir
	name  string
}

// candidates lists the files of t's folders it could own: regular, its
// user's, written since it started, owned by no other agent, not a
// subagent's, naming its working directory or none. Files that cannot be
// transcripts are noted. newOnly looks at the names new in this gather's
// listings alone. Else the list is kept between gathers and brought up to
// date by the names each listing adds and the files each re-stat finds
// written (restatSome): a folder of 100,000 files is looked through once.
func (t *agentTrack) candidates(tr *agentTracker, owners map[string]*agentTrack, newOnly bool) []candidate {
	if newOnly {
		var c candCache
		for _, d := range t.dirIdx {
			if d.changed == tr.gather {
				t.scanNames(tr, &c, d, d.added)
			}
		}
		c.addSkips(&t.skipped)
		return c.list
	}
	c := &t.cands
	if c.scanned == nil {
		c.scanned = map[*transcriptDir]bool{}
	}
	retry := c.retry
	c.retry = nil
	for _, r := range retry {
		t.scanNames(tr, c, r.d, []string{r.name})
	}
	for _, d := range t.dirIdx {
		switch {
		case !c.scanned[d]:
			c.scanned[d] = true
			t.scanNames(tr, c, d, d.names())
		case d.changed == tr.gather:
			t.scanNames(tr, c, d, d.added)
			fallthrough
		default:
			if d.touchedAt == tr.gather {
				t.scanNames(tr, c, d, d.touched)
			}
		}
	}
	c.addSkips(&t.skipped)
	out := make([]candidate, 0, len(c.list))
	for _, cd := range c.list {
		if cd.d.files[cd.name] == nil || !slices.Contains(t.dirIdx, cd.d) {
			continue // gone
		}
		if o := owners[cd.path]; o == nil || o == t {
			out = append(out, cd)
		}
	}
	return out
}

// candCache is an agent's candidates kept between gathers.
type candCache struct {
	list    []candidate
	skips   skipList
	scanned map[*transcriptDir]bool
	// retry are files whose first line was not whole yet.
	retry []dirEntryRef
}

type dirEntryRef struct {
	d    *transcriptDir
	name string
}

func (c *candCache) addSkips(to *skipList) {
	for _, f := range c.skips.files {
		to.add(f.Path, f.Why)
	}
	to.more += c.skips.more
}

// maxCandidates bounds the candidates kept per agent, the newest kept.
const maxCandidates = 4096

// scanNames adds the names of d that are candidates to c (replacing their
// earlier entries).
func (t *agentTrack) scanNames(tr *agentTracker, c *candCache, d *transcriptDir, names []string) {
	since := t.start.Add(-transcriptSlack)
	for _, name := range names {
		path := filepath.Join(d.path, name)
		c.list = slices.DeleteFunc(c.list, func(cd candidate) bool { return cd.path == path })
		c.skips.remove(path)
		f := d.files[name]
		if f == nil {
			continue
		}
		if f.typ != syscall.DT_REG && f.typ != syscall.DT_UNKNOWN {
			c.skips.add(path, direntReason(f.typ))
			continue
		}
		if strings.HasPrefix(name, "agent-") {
			continue // an older Claude Code's subagent file
		}
		d.stat(f, false)
		if !f.isReg {
			if f.mode != 0 {
				c.skips.add(path, fsio.ErrNotRegular.Error()+": "+fsio.FileType(f.mode))
			}
			continue
		}
		if f.mtime.Before(since) {
			continue
		}
		if f.uid != t.id.uid {
			c.skips.add(path, fmt.Sprintf("%s (uid %d, not %d)", fsio.ErrOtherOwner, f.uid, t.id.uid))
			continue
		}
		h := d.readHead(f, tr)
		if h.err != "" {
			c.skips.add(path, h.err)
			continue
		}
		if f.head == nil {
			if len(c.retry) < maxCandidates {
				c.retry = append(c.retry, dirEntryRef{d, name})
			}
			continue // its first line is not whole yet
		}
		if h.sidechain || h.cwd != "" && h.cwd != t.id.project {
			continue // a subagent's, or another folder's session
		}
		c.list = append(c.list, candidate{path: path, born: f.bornBy(), mtime: f.mtime, d: d, name: name})
		if len(c.list) > maxCandidates {
			slices.SortFunc(c.list, func(a, b candidate) int { return b.mtime.Compare(a.mtime) })
			c.list = c.list[:maxCandidates]
		}
	}
}

// newest is the candidate born last, then written last.
func newest(cs []candidate) candidate {
	best := cs[0]
	for _, c := range cs[1:] {
		if c.born.After(best.born) || c.born.Equal(best.born) && c.mtime.After(best.mtime) {
			best = c
		}
	}
	return best
}

// bindTranscripts binds the live agents' transcripts for this gather.
func (g *Grouper) bindTranscripts(s *procwalk.Snapshot, tr *agentTracker, live []*agentTrack, sessions []*Session) {
	owners := map[string]*agentTrack{}
	for _, t := range live {
		if t.bound != nil {
			owners[t.bound.path] = t
		}
	}
	bind := func(t *agentTrack, path, kind string) {
		if o := owners[path]; o != nil && o != t {
			o.unbind()
		}
		if t.bound != nil && owners[t.bound.path] == t {
			delete(owners, t.bound.path)
		}
		if t.bound == nil || t.bound.path != path {
			t.setFile(path, g.cfg.AgentStatus.FirstReadBytes)
		}
		t.bound = &binding{path, kind, tr.gather}
		owners[path] = t
	}
	folders := map[string][]*agentTrack{}
	for k, t := range live {
		src := t.source
		if src == nil {
			continue
		}
		folders[t.folderKey] = append(folders[t.folderKey], t)
		changed := false
		for _, d := range t.dirIdx {
			changed = changed || d.changed == tr.gather
		}
		if ev, ok := g.newEvidence(s, sessions[k], t, tr, src, changed); ok {
			bind(t, ev.path, ev.kind)
			continue
		}
		if t.bound != nil && t.fileOf(t.bound.path) == nil {
			delete(owners, t.bound.path)
			t.err = t.bound.path + ": deleted"
			t.unbind() // look again
		}
	}
	for _, group := range folders {
		var open []*agentTrack // unbound, or the only agent of the folder
		for _, t := range group {
			if t.bound == nil || len(group) == 1 {
				open = append(open, t)
			}
		}
		if len(open) == 0 {
			continue
		}
		if len(group) == 1 {
			// The only agent of its folder: its newest file since it
			// started; later, a file created after its own is its /clear's
			// (new names alone are looked at: a steady gather stats none).
			t := group[0]
			if t.bound != nil && t.bound.gather == tr.gather {
				continue
			}
			cs := t.candidates(tr, owners, t.bound != nil)
			if len(cs) == 0 {
				continue
			}
			best := newest(cs)
			if t.bound == nil || best.path != t.bound.path && t.bornAfterBinding(best) {
				bind(t, best.path, BindOnlyAgent)
			}
			continue
		}
		g.eliminate(tr, group, open, owners, bind)
	}
}

// bornAfterBinding reports whether c was born after the agent's file was:
// a /clear's new file, not an older one written again.
func (t *agentTrack) bornAfterBinding(c candidate) bool {
	f := t.fileOf(t.bound.path)
	if f == nil {
		return true
	}
	return c.born.After(f.bornBy())
}

// wroteAfter reports whether the agent's transcript was written after at.
func (t *agentTrack) wroteAfter(at time.Time) bool {
	dir, name := filepath.Split(t.bound.path)
	for _, d := range t.dirIdx {
		if f := d.files[name]; f != nil && d.path == filepath.Clean(dir) {
			d.stat(f, true)
			return f.mtime.After(at.Add(transcriptSlack))
		}
	}
	return false
}

// eliminate binds the unbound agents of one folder that only one file can
// be: a file created before every other agent of the folder started, or
// while the others that had started went on writing their own
// transcripts (so it is no /clear of theirs), is the one agent's left (the
// newest such, when several). The rest are ambiguous, their candidates
// kept to name.
func (g *Grouper) eliminate(tr *agentTracker, group, open []*agentTrack, owners map[string]*agentTrack, bind func(*agentTrack, string, string)) {
	cands := map[*agentTrack][]candidate{}
	for _, t := range open {
		if t.bound == nil {
			cands[t] = t.candidates(tr, owners, false)
		}
	}
	for progress := true; progress; {
		progress = false
		for _, t := range open {
			if t.bound != nil {
				continue
			}
			var only []candidate
			for _, c := range cands[t] {
				if owners[c.path] != nil {
					continue
				}
				alone := true
				for _, o := range group {
					if o == t || o.start.Add(-transcriptSlack).After(c.born) {
						continue // o started after c was created
					}
					if o.bound != nil && o.wroteAfter(c.born) {
						continue // o went on writing its own transcript: c is not its /clear's
					}
					alone = false
					break
				}
				if alone {
					only = append(only, c)
				}
			}
			if len(only) > 0 {
				bind(t, newest(only).path, BindElimination)
				progress = true
			}
		}
	}
	for _, t := range open {
		if t.bound != nil {
			continue
		}
		t.ambiguous = t.ambiguous[:0]
		for _, c := range cands[t] {
			if owners[c.path] == nil && len(t.ambiguous) < 8 {
				t.ambiguous = append(t.ambiguous, c.path)
			}
		}
		slices.Sort(t.ambiguous)
	}
}
