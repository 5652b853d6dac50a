//go:build linux

package session

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
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
	// AgentRateLimited: the conversation's last entry is a model call
	// refused for the rate limit (Claude Code's API error "rate_limit").
	AgentRateLimited = "rate_limited"
	// AgentError: the conversation's last entry is a model call that
	// failed for another reason (LastError says which).
	AgentError = "error"
)

// AgentStatuses are the statuses an agent can have, in the order above.
func AgentStatuses() []string {
	return []string{AgentWorking, AgentIdle, AgentBlocked, AgentEnded, AgentRateLimited, AgentError}
}

// AttentionRank orders agent statuses by what needs a person first:
// blocked (waiting for an answer), stopped on a failed model call (error,
// then rate_limited, which passes by itself), working, idle, then ended;
// 0 for a status it does not know. The live view's agents table sorts by it.
func AttentionRank(status string) int {
	switch status {
	case AgentBlocked:
		return 6
	case AgentError:
		return 5
	case AgentRateLimited:
		return 4
	case AgentWorking:
		return 3
	case AgentIdle:
		return 2
	case AgentEnded:
		return 1
	}
	return 0
}

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
	// Prices, when set, prices each agent's tokens (AgentState.CostUSD):
	// procwalk carries no prices of its own (agent_cost.go).
	Prices *PriceTable
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
	// Binding says how the transcript was found to be the agent's
	// (BindOpenFile ... BindElimination), or BindAmbiguous: several files
	// could be, Candidates names them, and none was read.
	Binding    string
	Candidates []string
	// SubagentTokens are the cumulative counts of its subagents' own
	// transcripts (Subagents of them, of which SubagentsWorking grew within
	// ActiveWithin); Tokens adds them to the transcript's.
	SubagentTokens   TokenCounts
	Subagents        int
	SubagentsWorking int
	// TranscriptError says why the transcript could not be read, if so.
	TranscriptError string
	// Skipped lists the files in the agent's transcript folders that were
	// not read and why: a FIFO, a symbolic link, another user's file, an
	// unreadable first line. At most maxSkipped; SkippedMore counts the rest.
	Skipped     []SkippedFile
	SkippedMore int
	// ContextWindowTokens is the model's window, 0 when unknown;
	// ContextPercent is ContextUsedTokens over it.
	ContextWindowTokens int64
	ContextPercent      float64
	// CPUPercent is the CPU of the agent's processes when measured.
	CPUPercent float64
	HaveCPU    bool
	// CostUSD is what its tokens, its subagents' included, cost by
	// AgentStatusConfig.Prices, when HaveCost: with prices for every model
	// it ran. Unpriced names the models the table has no price for.
	CostUSD  float64
	HaveCost bool
	Unpriced []string
}

// Tokens are the agent's cumulative counts: its transcript's and its
// subagents'; zero without a transcript.
func (a *AgentState) Tokens() TokenCounts {
	if a.Transcript == nil {
		return TokenCounts{}
	}
	c := a.Transcript.Tokens()
	c.Add(a.SubagentTokens)
	return c
}

// AgentStrings are the attributes of an agent session that outputs list
// beside its metrics (JSON's and Lua's agent objects, Telegraf's string
// fields): what its transcript says, when it says.
func AgentStrings() []string {
	return []string{AttrModel, AttrSessionID, AttrTranscript, AttrTitle, AttrGitBranch, AttrAgentVersion, AttrPermissionMode, AttrLastError}
}

// SkippedFile is a file of an agent's transcript folders left unread.
type SkippedFile struct {
	Path string
	Why  string
}

// maxSkipped bounds the skipped files kept per agent.
const maxSkipped = 16

// skipList collects an agent's skipped files, at most maxSkipped.
type skipList struct {
	files []SkippedFile
	more  int
}

// remove forgets path's entry.
func (l *skipList) remove(path string) {
	l.files = slices.DeleteFunc(l.files, func(f SkippedFile) bool { return f.Path == path })
}

func (l *skipList) add(path, why string) {
	for i := range l.files {
		if l.files[i].Path == path {
			l.files[i].Why = why
			return
		}
	}
	if len(l.files) >= maxSkipped {
		l.more++
		return
	}
	l.files = append(l.files, SkippedFile{path, why})
}

// skippedSummary says in one line which files were skipped and why.
func skippedSummary(files []SkippedFile, more int) string {
	parts := make([]string, 0, len(files))
	for _, f := range files {
		parts = append(parts, f.Path+" ("+f.Why+")")
	}
	n := len(files) + more
	out := fmt.Sprintf("%d file%s of its transcript folders not read: %s", n, map[bool]string{true: "s"}[n > 1], strings.Join(parts, ", "))
	if more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// agentTracker is the Grouper's memory of agents between gathers.
type agentTracker struct {
	byLeader map[procwalk.ProcID]*agentTrack
	order    []procwalk.ProcID // the position of each agent in lists
	gather   uint64            // gathers so far
	dirs     map[string]*transcriptDir
	// prefixDirs caches the folders found by a long project name's prefix.
	prefixDirs map[string]*prefixListing
	buf        []byte // reused transcript read buffer
	dirBuf     []byte // reused getdents buffer
	headBuf    []byte // reused first-line buffer
	// wall tells the time file systems stamp files with (time.Now when
	// nil): a folder listed within racyWindow of its change is listed
	// again.
	wall func() time.Time
	// beforeOpen, when set (tests), runs before a transcript is opened.
	beforeOpen func(path string)
}

func (tr *agentTracker) now() time.Time {
	if tr.wall != nil {
		return tr.wall()
	}
	return time.Now()
}

type agentTrack struct {
	leader procwalk.ProcID
	rule   int
	start  time.Time
	found  bool // identity looked up
	id     agentIdentity
	source *TranscriptSource
	// folderKey names the folder whose agents compete for its files.
	folderKey string
	dirIdx    []*transcriptDir // its transcript folders, this gather
	bound     *binding
	file      *transcriptFile
	// The evidence already used (agent_bind.go).
	argsUsed    bool
	recordUsed  string
	recordMtime time.Time
	recordSize  int64
	toolsSeen   map[procwalk.ProcID]bool
	toolUsed    string
	ambiguous   []string // the files it could own, when ambiguous
	// cands are its candidates, kept between gathers (agent_bind.go).
	cands   candCache
	subs    subagents
	err     string // why the transcript could not be read last
	skipped skipList
	status  string
	since   time.Time
	cpuSecs float64
	cpuAt   time.Time
	ended   time.Time
	row     Session // the last row, shown while ended
}

// setFile makes path the agent's transcript, read from its start.
func (t *agentTrack) setFile(path string, firstRead int64) {
	t.file = &transcriptFile{path: path, uid: t.id.uid, parser: newTranscriptParser(t.source.Parser), firstRead: firstRead}
	t.subs = subagents{}
	t.ambiguous, t.cands = nil, candCache{}
}

// unbind forgets the agent's transcript: deleted, refused, or another's.
func (t *agentTrack) unbind() {
	t.bound, t.file = nil, nil
	t.subs = subagents{}
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
func (k *agentKind) finish(g *Grouper, s *procwalk.Snapshot, sessions []Session, n *noteList) []Session {
	tr := &k.tracker
	if tr.byLeader == nil {
		tr.byLeader = make(map[procwalk.ProcID]*agentTrack)
	}
	tr.gather++
	cfg := g.cfg.AgentStatus
	live := map[procwalk.ProcID]int{}
	var newOrder []procwalk.ProcID
	var tracks []*agentTrack
	var liveSessions []*Session
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
		g.prepareTrack(s, ss, t, tr)
		tracks, liveSessions = append(tracks, t), append(liveSessions, ss)
	}
	g.bindTranscripts(s, tr, tracks, liveSessions)
	for i, t := range tracks {
		ss := liveSessions[i]
		g.agentStatus(s, ss, t, tr, cfg)
		if a := ss.Agent; a.Binding == BindAmbiguous {
			n.addf("agent %s: its transcript is one of %s (%d agents share its folder, none says which): not read; Claude Code 2.1 names it in %s",
				ss.Name, strings.Join(a.Candidates, ", "), len(a.Candidates), filepath.Join(t.id.claudeConfig, "sessions", "<pid>.json"))
		}
		if a := ss.Agent; len(a.Unpriced) > 0 {
			n.addf("agent %s: no price for %s in %s: cost_usd left out (add the model family's line)", ss.Name, strings.Join(a.Unpriced, ", "), cfg.Prices.Source)
		}
		if sk := ss.Agent.Skipped; len(sk) > 0 {
			n.addf("agent %s: %s", ss.Name, skippedSummary(sk, ss.Agent.SkippedMore))
		}
	}
	tr.dropDirs()
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

// prepareTrack learns an agent's identity (once) and indexes its
// transcript folders for this gather.
func (g *Grouper) prepareTrack(s *procwalk.Snapshot, ss *Session, t *agentTrack, tr *agentTracker) {
	t.skipped = skipList{}
	leader := s.Process(t.leader.PID)
	if !t.found && leader != nil {
		t.found = true
		t.start = leader.Start
		g.identify(t, leader, ss.Attrs[AttrCwd])
		if t.rule >= 0 && t.id.home != "" && t.id.cwd != "" {
			t.source = g.cfg.Agents[t.rule].Transcript
		}
	}
	t.dirIdx = t.dirIdx[:0]
	if t.source == nil {
		return
	}
	t.folderKey = strings.Join([]string{t.source.Dir, t.id.home, t.id.claudeConfig, t.id.codexHome, t.id.project}, "\x00")
	for _, path := range tr.transcriptDirs(t, t.source, s.Time) {
		d := tr.dir(path, t.id.uid)
		if !d.listed {
			if d.err != nil && !errors.Is(d.err, syscall.ENOENT) {
				t.skipped.add(path, skipReason(d.err))
			}
			continue
		}
		if t.bound == nil {
			d.restatSome(restatBudget, tr.gather)
		}
		t.dirIdx = append(t.dirIdx, d)
	}
}

// restatBudget is how many old entries of a folder an unbound agent's
// gather stats again: a file written to again (an old session resumed)
// becomes a candidate within len(folder)/restatBudget gathers.
const restatBudget = 256

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
	if p := r.Agent; p != nil {
		a.Transcript, a.ContextWindowTokens, a.ContextPercent = p.Transcript, p.ContextWindowTokens, p.ContextPercent
		a.SubagentTokens, a.Subagents, a.Binding = p.SubagentTokens, p.Subagents, p.Binding
		a.CostUSD, a.HaveCost = p.CostUSD, p.HaveCost
	}
	r.Agent = &a
}

// agentStatus reads the agent's transcript and subagents and decides its
// status.
func (g *Grouper) agentStatus(s *procwalk.Snapshot, ss *Session, t *agentTrack, tr *agentTracker, cfg AgentStatusConfig) {
	now := s.Time
	a := &AgentState{}
	ss.Agent = a
	if t.file != nil {
		g.readTranscript(t, tr, now)
	}
	switch {
	case t.bound != nil:
		a.Binding = t.bound.kind
	case len(t.ambiguous) > 0:
		a.Binding, a.Candidates = BindAmbiguous, slices.Clone(t.ambiguous)
	}
	a.TranscriptError = t.err
	if t.file != nil {
		tc := t.file.t.shared()
		a.Transcript = tc
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
		for attr, v := range map[string]string{AttrSessionID: tc.SessionID, AttrTitle: tc.Title, AttrGitBranch: tc.GitBranch,
			AttrAgentVersion: tc.Version, AttrPermissionMode: tc.PermissionMode, AttrLastError: tc.LastError} {
			if v != "" {
				ss.Attrs[attr] = v
			}
		}
		g.readSubagents(t, tr, now, cfg.FirstReadBytes)
		a.SubagentTokens, a.Subagents, a.SubagentsWorking = t.subs.tokens(), len(t.subs.files), t.subs.working(now, cfg.ActiveWithin)
		if cfg.Prices != nil {
			a.CostUSD, a.Unpriced = cfg.Prices.Cost(mergeModels(tc.ByModel, t.subs.byModel()))
			a.HaveCost = len(a.Unpriced) == 0
		}
	}
	a.Skipped, a.SkippedMore = slices.Clone(t.skipped.files), t.skipped.more
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
	if tc != nil && tc.Last == EntryAPIError {
		// The turn ended on a model call that failed for good: no growth
		// or CPU makes that work until the next entry.
		if tc.LastError == "rate_limit" {
			return AgentRateLimited, "its last model call was refused: rate_limit"
		}
		return AgentError, "its last model call failed: " + tc.LastError
	}
	if t.file != nil && !t.file.grew.IsZero() && now.Sub(t.file.grew) <= cfg.ActiveWithin {
		return AgentWorking, "its transcript grew within " + cfg.ActiveWithin.String()
	}
	if a.SubagentsWorking > 0 {
		return AgentWorking, "a subagent's transcript grew within " + cfg.ActiveWithin.String()
	}
	if a.HaveCPU && a.CPUPercent >= cfg.BusyCPUPercent {
		return AgentWorking, fmt.Sprintf("its processes use %.0f%% CPU", a.CPUPercent)
	}
	if tc == nil {
		if a.Binding == BindAmbiguous {
			return AgentIdle, "its transcript is ambiguous, and its processes are quiet"
		}
		return AgentIdle, "no transcript found, and its processes are quiet"
	}
	if tc.PendingTools > 0 {
		for _, i := range ss.index {
			p := &s.Procs[i]
			if p.ID != t.leader && !p.Start.Before(tc.PendingSince.Add(-time.Second)) {
				return AgentWorking, "a tool it started is running"
			}
		}
		if tc.PendingSubagents > 0 {
			// A subagent works inside the agent's process: working while
			// it (or, before it writes, the tool use) is recent.
			last := tc.PendingSince
			if sl := t.subs.lastActivity(); sl.After(last) {
				last = sl
			}
			if now.Sub(last) <= cfg.TurnTimeout {
				return AgentWorking, "a subagent it started is working"
			}
		}
		return AgentBlocked, "a tool use awaits its result, and nothing runs"
	}
	if (tc.Last == EntryPrompt || tc.Last == EntryToolResult) && now.Sub(tc.LastActivity) <= cfg.TurnTimeout {
		return AgentWorking, "the model is answering"
	}
	return AgentIdle, "its last turn ended"
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

// readTranscript reads what was appended to the agent's transcript.
// A first read reads at most FirstReadBytes of its end (transcriptFile).
func (g *Grouper) readTranscript(t *agentTrack, tr *agentTracker, now time.Time) {
	first := t.file.offset == 0 && len(t.file.line) == 0
	if tr.beforeOpen != nil {
		tr.beforeOpen(t.file.path)
	}
	var err error
	_, tr.buf, err = t.file.update(tr.buf, now)
	t.err = ""
	if err != nil {
		t.err = err.Error()
		t.skipped.add(t.file.path, skipReason(err))
		t.unbind() // deleted or refused: look again next gather
		return
	}
	if first && t.file.modTime.Before(now) {
		// The first read is catching up, not growth: date it by the file.
		t.file.grew = t.file.modTime
	}
}

// skipReason says why a file was not read, without the path its error
// starts with.
func skipReason(err error) string {
	msg := err.Error()
	for _, known := range []error{fsio.ErrSymlink, fsio.ErrNotRegular, fsio.ErrOtherOwner, fsio.ErrTooLarge} {
		if errors.Is(err, known) {
			if i := strings.Index(msg, known.Error()); i >= 0 {
				return msg[i:]
			}
		}
	}
	return msg
}

// transcriptSlack allows for the clocks of /proc start times and of file
// times disagreeing by a little.
const transcriptSlack = 2 * time.Second

// direntReason names a directory entry's type as a reason to skip it.
func direntReason(typ byte) string {
	what := map[byte]string{syscall.DT_FIFO: "a FIFO", syscall.DT_SOCK: "a socket", syscall.DT_CHR: "a character device",
		syscall.DT_BLK: "a block device", syscall.DT_DIR: "a directory"}[typ]
	if typ == syscall.DT_LNK {
		return fsio.ErrSymlink.Error()
	}
	if what == "" {
		return fsio.ErrNotRegular.Error()
	}
	return fsio.ErrNotRegular.Error() + ": " + what
}
