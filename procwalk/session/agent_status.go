//go:build linux

package session

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"golang.org/x/sys/unix"
)

// agent_status.go follows agent sessions over time: it finds each agent's
// transcript, reads what was appended since the last gather, and says
// whether the agent is working, idle, blocked (waiting for its person) or
// ended. It keeps agents in a stable order and an ended agent's row for a
// while. The rules are those of the README's "Agent status" section.

// Agent statuses.
const (
	AgentWorking = "working"
	AgentIdle    = "idle"
	AgentBlocked = "blocked"
	AgentEnded   = "ended"
)

// AgentStatuses are the statuses an agent can have, in the order above.
func AgentStatuses() []string { return []string{AgentWorking, AgentIdle, AgentBlocked, AgentEnded} }

// AgentStatusConfig holds the thresholds of the status rules and the
// bound of a transcript's first read. A zero field means its default
// (DefaultAgentStatus).
type AgentStatusConfig struct {
	// ActiveWithin: a transcript that grew this recently means working.
	ActiveWithin time.Duration
	// BusyCPUPercent: the agent's processes using this much CPU (percent
	// of one core, between two gathers) means working.
	BusyCPUPercent float64
	// TurnTimeout: after the person's prompt or a tool's result the model
	// is answering (working) for at most this long without a line.
	TurnTimeout time.Duration
	// EndedKeep is how long an ended agent's row stays; negative means
	// not at all.
	EndedKeep time.Duration
	// FirstReadBytes bounds the first read of a transcript: of a larger
	// file only the first line and the last FirstReadBytes are read, and
	// Transcript.SkippedBytes says how much was not. Negative means the
	// whole file.
	FirstReadBytes int64
	// ContextWindows maps a model family (a prefix of the model name) to
	// its context window in tokens; the longest matching prefix wins. A
	// window the transcript states (Codex does) wins over these.
	ContextWindows map[string]int64
}

// DefaultAgentStatus is the configuration a zero AgentStatusConfig means:
// working when the transcript grew within 10 s or the processes use 5 % of
// a core, answering for at most 10 min, ended rows kept 5 min, first reads
// bounded to 8 MiB, DefaultContextWindows.
func DefaultAgentStatus() AgentStatusConfig {
	return AgentStatusConfig{
		ActiveWithin:   10 * time.Second,
		BusyCPUPercent: 5,
		TurnTimeout:    10 * time.Minute,
		EndedKeep:      5 * time.Minute,
		// 8 MiB holds the whole of most sessions and the last hundreds of
		// turns of any; 20 such first reads take about a second.
		FirstReadBytes: 8 << 20,
		ContextWindows: DefaultContextWindows(),
	}
}

// DefaultContextWindows are the context windows of the model families the
// default agents run, in tokens.
func DefaultContextWindows() map[string]int64 {
	return map[string]int64{
		"claude": 200000,
		"gpt-5":  272000,
		"gpt-4":  128000,
		"o3":     200000,
		"o4":     200000,
		"gemini": 1048576,
	}
}

// ParseContextWindow reads "FAMILY=TOKENS", the form of the
// --agent-context-window flag, e.g. "claude-sonnet-4-5=1000000".
func ParseContextWindow(s string) (family string, tokens int64, err error) {
	family, n, ok := strings.Cut(s, "=")
	if ok && family != "" {
		if _, err := fmt.Sscan(n, &tokens); err == nil && tokens > 0 && fmt.Sprint(tokens) == n {
			return family, tokens, nil
		}
	}
	return "", 0, fmt.Errorf("%w: context window %q: want FAMILY=TOKENS, e.g. claude=200000", ErrBadConfig, s)
}

// ParseFirstRead reads the bound of a transcript's first read as options
// give it: a size such as 8MiB (at least 64 KiB, a line of the format and
// more: AgentStatusConfig's rule), "all" for the whole file (-1), or "" for
// the default (0).
func ParseFirstRead(s string) (int64, error) {
	switch s {
	case "":
		return 0, nil
	case "all":
		return -1, nil
	}
	n, err := procwalk.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%w; or all for whole files", err)
	}
	return int64(n), nil
}

// ContextWindows reads FAMILY=TOKENS specs over DefaultContextWindows(),
// nil for none.
func ContextWindows(specs []string) (map[string]int64, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	w := DefaultContextWindows()
	for _, spec := range specs {
		fam, tokens, err := ParseContextWindow(spec)
		if err != nil {
			return nil, err
		}
		w[fam] = tokens
	}
	return w, nil
}

// WithTranscripts gives the rules named in NAME=PARSER:DIR specs their
// transcript source (rules nil: DefaultAgents()). A spec naming no rule is
// an error.
func WithTranscripts(rules []AgentRule, specs []string) ([]AgentRule, error) {
	if len(specs) == 0 {
		return rules, nil
	}
	if rules == nil {
		rules = DefaultAgents()
	}
	for _, spec := range specs {
		name, src, err := ParseTranscriptSource(spec)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(rules, func(r AgentRule) bool { return r.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w: agent transcript %q: no agent %q (add a rule NAME=REGEX for it)", ErrBadConfig, spec, name)
		}
		rules[i].Transcript = src
	}
	return rules, nil
}

func (c AgentStatusConfig) withDefaults() AgentStatusConfig {
	d := DefaultAgentStatus()
	c.ActiveWithin = cmp.Or(c.ActiveWithin, d.ActiveWithin)
	c.BusyCPUPercent = cmp.Or(c.BusyCPUPercent, d.BusyCPUPercent)
	c.TurnTimeout = cmp.Or(c.TurnTimeout, d.TurnTimeout)
	c.EndedKeep = cmp.Or(c.EndedKeep, d.EndedKeep)
	c.FirstReadBytes = cmp.Or(c.FirstReadBytes, d.FirstReadBytes)
	if c.ContextWindows == nil {
		c.ContextWindows = d.ContextWindows
	}
	return c
}

// check says what is wrong with c, naming the field; nil when nothing is.
func (c AgentStatusConfig) check() error {
	if f := c.badField(); f != nil {
		return fmt.Errorf("agent status %s %s: %s", f.field, f.value, f.problem)
	}
	return nil
}

// fieldProblem is a field of an AgentStatusConfig that breaks its rule.
type fieldProblem struct{ field, value, problem string }

// badField returns the first field of c that breaks its rule, or nil: the
// rules of the Go API and, through Options, of the options and flags.
func (c AgentStatusConfig) badField() *fieldProblem {
	const negative = "must not be negative (0 means the default)"
	switch {
	case c.ActiveWithin < 0:
		return &fieldProblem{"ActiveWithin", c.ActiveWithin.String(), negative}
	case !(c.BusyCPUPercent >= 0):
		return &fieldProblem{"BusyCPUPercent", fmt.Sprint(c.BusyCPUPercent), negative}
	case c.TurnTimeout < 0:
		return &fieldProblem{"TurnTimeout", c.TurnTimeout.String(), negative}
	case c.FirstReadBytes > 0 && c.FirstReadBytes < transcriptChunk:
		return &fieldProblem{"FirstReadBytes", procwalk.FormatBytes(uint64(c.FirstReadBytes)),
			"is less than 64 KiB: too little to find the last turn; want a size such as 8MiB, or all"}
	}
	for _, fam := range slices.Sorted(maps.Keys(c.ContextWindows)) {
		if w := c.ContextWindows[fam]; fam == "" || w <= 0 {
			return &fieldProblem{"ContextWindows", fmt.Sprintf("%q=%d", fam, w), "want a model family and a positive number of tokens"}
		}
	}
	return nil
}

// contextWindow is the window of model: the longest family prefix's.
func (c AgentStatusConfig) contextWindow(model string) int64 {
	best, w := -1, int64(0)
	for fam, tokens := range c.ContextWindows {
		if strings.HasPrefix(model, fam) && len(fam) > best {
			best, w = len(fam), tokens
		}
	}
	return w
}

// AgentState is what an agent session's transcript and processes say,
// Session.Agent.
type AgentState struct {
	Status string
	// StatusSince is when the agent entered Status, as far as this Grouper
	// saw (a blocked agent: since the tool use it waits on).
	StatusSince time.Time
	// StatusFor is how long, at the gather: the snapshot's time less
	// StatusSince.
	StatusFor time.Duration
	// Why names the rule that decided Status, for people.
	Why string
	// Transcript is nil when none was found (or the agent has no source).
	Transcript *Transcript
	// TranscriptError says why the transcript could not be read, if so.
	TranscriptError string
	// ContextWindowTokens is the model's window, 0 when unknown;
	// ContextPercent is ContextUsedTokens over it.
	ContextWindowTokens int64
	ContextPercent      float64
	// CPUPercent is the CPU of the agent's processes when measured.
	CPUPercent float64
	HaveCPU    bool
}

// agentTracker is the Grouper's memory of agents between gathers.
type agentTracker struct {
	byLeader map[procwalk.ProcID]*agentTrack
	order    []procwalk.ProcID // the position of each agent in lists
	buf      []byte            // reused transcript read buffer
}

type agentTrack struct {
	leader procwalk.ProcID
	rule   int
	uid    uint32
	home   string
	cwd    string
	start  time.Time
	found  bool // uid and home looked up
	file   *transcriptFile
	dirs   map[string]time.Time // listed directory -> its mtime then
	// firstCWD caches the working directory a file's first line names.
	firstCWD map[string]string
	err      string // why the transcript could not be read last
	status   string
	since    time.Time
	cpuSecs  float64
	cpuAt    time.Time
	ended    time.Time
	row      Session // the last row, shown while ended
}

// keptNames lists the names of agents known from earlier gathers and not
// among live (ended, or ending now), so that a new agent in the same folder
// does not take the name of a row still shown.
func (tr *agentTracker) keptNames(live []procwalk.ProcID) (leaders []procwalk.ProcID, names []string) {
	for _, id := range tr.order {
		if t := tr.byLeader[id]; t != nil && t.row.Name != "" && !slices.Contains(live, id) {
			leaders, names = append(leaders, id), append(names, t.row.Name)
		}
	}
	return leaders, names
}

// finish fills Agent of one gather's agent sessions, adds the rows of
// agents ended recently and orders agents stably: known ones keep their
// positions, new ones follow, oldest first.
func (k *agentKind) finish(g *Grouper, s *procwalk.Snapshot, sessions []Session) []Session {
	tr := &k.tracker
	if tr.byLeader == nil {
		tr.byLeader = make(map[procwalk.ProcID]*agentTrack)
	}
	cfg := g.cfg.AgentStatus
	live := map[procwalk.ProcID]int{}
	var claimed = map[string]bool{}
	for _, t := range tr.byLeader {
		if t.file != nil && t.ended.IsZero() {
			claimed[t.file.path] = true
		}
	}
	var newOrder []procwalk.ProcID
	for i := range sessions {
		ss := &sessions[i]
		id, ok := ss.Leader()
		if !ok {
			continue
		}
		live[id] = i
		t := tr.byLeader[id]
		if t == nil {
			t = &agentTrack{leader: id, rule: slices.IndexFunc(g.cfg.Agents, func(r AgentRule) bool { return r.Name == ss.Attrs[AttrAgent] })}
			tr.byLeader[id] = t
			newOrder = append(newOrder, id)
		}
		g.agentStatus(s, ss, t, tr, cfg, claimed)
	}
	// Agents gone since the last gather end; ended ones leave after a while.
	var rows []Session
	var order []procwalk.ProcID
	for _, id := range append(tr.order, newOrder...) {
		t := tr.byLeader[id]
		if t == nil {
			continue
		}
		if i, ok := live[id]; ok {
			t.row = sessions[i]
			rows, order = append(rows, sessions[i]), append(order, id)
			continue
		}
		if t.ended.IsZero() {
			t.ended = s.Time
			t.endRow()
		}
		if cfg.EndedKeep < 0 || s.Time.Sub(t.ended) > cfg.EndedKeep {
			delete(tr.byLeader, id)
			continue
		}
		ended := *t.row.Agent
		ended.StatusFor = s.Time.Sub(t.ended)
		t.row.Agent = &ended
		rows, order = append(rows, t.row), append(order, id)
	}
	tr.order = order
	return rows
}

// endRow turns the agent's last row into its ended row: no members, the
// cumulative counters kept.
func (t *agentTrack) endRow() {
	r := &t.row
	attrs := make(map[string]string, len(r.Attrs))
	for k, v := range r.Attrs {
		attrs[k] = v
	}
	attrs[AttrStatus] = AgentEnded
	r.Attrs = attrs
	r.Roots, r.Members, r.index, r.Panes = nil, nil, nil, nil
	r.Totals = Totals{
		OldestStart:          r.Totals.OldestStart,
		CumulativeCPUSeconds: r.Totals.CumulativeCPUSeconds,
		CumulativeReadBytes:  r.Totals.CumulativeReadBytes,
		CumulativeWriteBytes: r.Totals.CumulativeWriteBytes,
	}
	a := AgentState{Status: AgentEnded, StatusSince: t.ended, Why: "its process is gone"}
	if r.Agent != nil {
		a.Transcript, a.ContextWindowTokens, a.ContextPercent = r.Agent.Transcript, r.Agent.ContextWindowTokens, r.Agent.ContextPercent
	}
	r.Agent = &a
}

// agentStatus reads the agent's transcript and decides its status.
func (g *Grouper) agentStatus(s *procwalk.Snapshot, ss *Session, t *agentTrack, tr *agentTracker, cfg AgentStatusConfig, claimed map[string]bool) {
	now := s.Time
	a := &AgentState{}
	ss.Agent = a
	leader := s.Process(t.leader.PID)
	if !t.found && leader != nil {
		t.found = true
		t.start, t.cwd = leader.Start, ss.Attrs[AttrCwd]
		t.uid, t.home = g.agentOwner(leader)
	}
	if t.rule >= 0 && g.cfg.Agents[t.rule].Transcript != nil && t.home != "" && t.cwd != "" {
		g.readTranscript(t, tr, g.cfg.Agents[t.rule].Transcript, now, claimed, cfg.FirstReadBytes)
	}
	a.TranscriptError = t.err
	if t.file != nil {
		tc := t.file.t
		tc.pending = nil
		a.Transcript = &tc
		a.ContextWindowTokens = tc.ContextWindowTokens
		if a.ContextWindowTokens == 0 {
			a.ContextWindowTokens = cfg.contextWindow(tc.Model)
		}
		if a.ContextWindowTokens > 0 && tc.ContextUsedTokens > 0 {
			a.ContextPercent = 100 * float64(tc.ContextUsedTokens) / float64(a.ContextWindowTokens)
		}
		ss.Attrs[AttrTranscript] = tc.Path
		if tc.Model != "" {
			ss.Attrs[AttrModel] = tc.Model
		}
		if tc.SessionID != "" {
			ss.Attrs[AttrSessionID] = tc.SessionID
		}
	}
	// CPU: the rate between gathers when the Sampler measured it, else the
	// cumulative counter's change since this Grouper's last gather.
	tot := &ss.Totals
	switch {
	case tot.RatesMeasured > 0:
		a.CPUPercent, a.HaveCPU = tot.CPUPercent, true
	case !t.cpuAt.IsZero() && now.Sub(t.cpuAt) > 0:
		a.CPUPercent = 100 * (tot.CumulativeCPUSeconds - t.cpuSecs) / now.Sub(t.cpuAt).Seconds()
		a.HaveCPU = true
	}
	t.cpuSecs, t.cpuAt = tot.CumulativeCPUSeconds, now

	status, why := decideStatus(a, t, s, ss, cfg, now)
	if status != t.status {
		t.status, t.since = status, now
		if status == AgentBlocked && a.Transcript != nil && !a.Transcript.PendingSince.IsZero() && a.Transcript.PendingSince.Before(now) {
			t.since = a.Transcript.PendingSince
		}
	}
	a.Status, a.StatusSince, a.StatusFor, a.Why = status, t.since, now.Sub(t.since), why
	ss.Attrs[AttrStatus] = status
}

// decideStatus applies the status rules in order (README "Agent status").
func decideStatus(a *AgentState, t *agentTrack, s *procwalk.Snapshot, ss *Session, cfg AgentStatusConfig, now time.Time) (string, string) {
	tc := a.Transcript
	if t.file != nil && !t.file.grew.IsZero() && now.Sub(t.file.grew) <= cfg.ActiveWithin {
		return AgentWorking, "its transcript grew within " + cfg.ActiveWithin.String()
	}
	if a.HaveCPU && a.CPUPercent >= cfg.BusyCPUPercent {
		return AgentWorking, fmt.Sprintf("its processes use %.0f%% CPU", a.CPUPercent)
	}
	if tc == nil {
		return AgentIdle, "no transcript found, and its processes are quiet"
	}
	if tc.PendingTools > 0 {
		for _, i := range ss.index {
			p := &s.Procs[i]
			if p.ID != t.leader && !p.Start.Before(tc.PendingSince.Add(-time.Second)) {
				return AgentWorking, "a tool it started is running"
			}
		}
		return AgentBlocked, "a tool use awaits its result, and nothing runs"
	}
	if (tc.Last == EntryPrompt || tc.Last == EntryToolResult) && now.Sub(tc.LastActivity) <= cfg.TurnTimeout {
		return AgentWorking, "the model is answering"
	}
	return AgentIdle, "its last turn ended"
}

// agentOwner finds the agent's uid (the owner of /proc/<pid>) and home
// (HOME of its environment, else its user's home in the passwd file).
func (g *Grouper) agentOwner(p *procwalk.Process) (uint32, string) {
	fi, err := os.Stat(g.fs.PIDPath(p.ID.PID, ""))
	if err != nil {
		return 0, ""
	}
	uid, ok := fileInfoUID(fi)
	if !ok {
		return 0, ""
	}
	if b, err := g.environs.Read(p.ID.PID); err == nil {
		if h := environValue(b, "HOME"); strings.HasPrefix(h, "/") {
			return uid, h
		}
	}
	return uid, g.cfg.Users.Home(int(uid))
}

// environValue finds KEY's value in an environ block.
func environValue(b []byte, key string) string {
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// readTranscript finds the agent's transcript (again when a directory
// changed) and reads what was appended to it.
// A first read reads at most firstRead bytes of its end (transcriptFile).
func (g *Grouper) readTranscript(t *agentTrack, tr *agentTracker, src *TranscriptSource, now time.Time, claimed map[string]bool, firstRead int64) {
	if t.dirs == nil {
		t.dirs = map[string]time.Time{}
	}
	changed := false
	dirs := src.dirs(t.home, t.cwd, t.start, now)
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if mt := fi.ModTime(); !mt.Equal(t.dirs[d]) {
			t.dirs[d], changed = mt, true
		}
	}
	if changed || t.file == nil {
		if path, ok := g.pickTranscript(t, src, dirs, claimed); ok && (t.file == nil || t.file.path != path) {
			if t.file != nil {
				delete(claimed, t.file.path)
			}
			t.file = &transcriptFile{path: path, uid: t.uid, parser: newTranscriptParser(src.Parser), firstRead: firstRead}
			claimed[path] = true
		}
	}
	if t.file == nil {
		return
	}
	first := t.file.offset == 0 && len(t.file.line) == 0
	var err error
	_, tr.buf, err = t.file.update(tr.buf, now)
	t.err = ""
	if err != nil {
		t.err = err.Error()
		t.file = nil // deleted or refused: look again next gather
		return
	}
	if first {
		// The first read is catching up, not growth: date it by the file.
		if fi, err := os.Stat(t.file.path); err == nil && fi.ModTime().Before(now) {
			t.file.grew = fi.ModTime()
		}
	}
}

// transcriptSlack allows for the clocks of /proc start times and of file
// times disagreeing by a little.
const transcriptSlack = 2 * time.Second

// pickTranscript chooses the agent's transcript: of the .jsonl files in
// dirs owned by its user, not claimed by another agent, and written since
// it started, the one created last since it started (birth time, where the
// file system keeps it), else the one written last. A file naming another
// working directory (Codex's session_meta) is skipped.
func (g *Grouper) pickTranscript(t *agentTrack, src *TranscriptSource, dirs []string, claimed map[string]bool) (string, bool) {
	since := t.start.Add(-transcriptSlack)
	var best string
	var bestBorn, bestMod time.Time
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			path := filepath.Join(d, e.Name())
			if claimed[path] && (t.file == nil || t.file.path != path) {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().Before(since) {
				continue
			}
			if uid, ok := fileInfoUID(fi); !ok || uid != t.uid {
				continue
			}
			if !t.sameProject(path, src) {
				continue
			}
			born := birthTime(path)
			if born.Before(since) {
				born = time.Time{}
			}
			if best == "" || born.After(bestBorn) || born.Equal(bestBorn) && fi.ModTime().After(bestMod) {
				best, bestBorn, bestMod = path, born, fi.ModTime()
			}
		}
	}
	return best, best != ""
}

// maxFirstLine bounds the read of a file's first line to learn its project.
const maxFirstLine = 64 << 10

// sameProject reports whether the file's first line names the agent's
// working directory, or none.
func (t *agentTrack) sameProject(path string, src *TranscriptSource) bool {
	if t.firstCWD == nil {
		t.firstCWD = map[string]string{}
	}
	cwd, ok := t.firstCWD[path]
	if !ok {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		b := make([]byte, maxFirstLine)
		n, _ := f.Read(b)
		f.Close()
		line, _, complete := strings.Cut(string(b[:n]), "\n")
		if !complete {
			return false // the first line is not written yet: look again later
		}
		var tc Transcript
		newTranscriptParser(src.Parser).line([]byte(line), &tc, time.Time{})
		cwd = tc.CWD
		if len(t.firstCWD) < 1024 {
			t.firstCWD[path] = cwd
		}
	}
	return cwd == "" || cwd == t.cwd
}

// birthTime is when the file was created, zero where the file system or
// kernel does not say.
func birthTime(path string) time.Time {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st)
	if err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec))
}
