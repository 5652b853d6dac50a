//go:build linux

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// agent.go finds AI coding agents (Claude Code, Codex, Gemini CLI, Aider)
// and makes each, with its descendants, a session named after the project
// it works in.

// KindAgent is an AI coding agent and its descendants.
const KindAgent = "agent"

// agentKind keeps agents' names, matches and statuses between gathers.
type agentKind struct {
	// cache maps the names a process is matched by to its agent rule;
	// last is the last key looked up and lastRule its answer (neighbouring
	// processes often share their names: no hashing then).
	cache    map[agentKey]int16
	last     agentKey
	lastRule int16
	haveLast bool
	// names keeps agent names stable across gathers (session_sticky.go).
	names stickyNames
	// tracker follows agent sessions over time (agent_status.go).
	tracker agentTracker
	// cmdlines keeps the command lines read of the last gather's
	// possible agents, when keepArgs (agent_cmdline.go).
	cmdlines map[procwalk.ProcID]keptCmdline
	keepArgs bool
}

func (*agentKind) name() string { return KindAgent }

// plan: the command line of possible agents (agentNeedsCmdline), and
// tmux's panes, to say which pane an agent runs in.
func (k *agentKind) plan(g *Grouper) kindPlan {
	k.keepArgs = addressesRandomised(g.fs)
	return kindPlan{some: procwalk.FieldCmdline, tmux: true, pick: func(p *procwalk.Process) procwalk.Fields {
		if agentNeedsCmdline(p) && !k.fillCmdline(p) {
			return procwalk.FieldCmdline
		}
		return 0
	}}
}

// tagAttrs: the agent rule's name. Not the status: a tag that changes
// starts a new series for every field (Telegraf writes it as a field and
// as the status tag of procwalk_agent_status's state set).
func (*agentKind) tagAttrs() []string { return []string{AttrAgent} }

func (*agentKind) numberAttrs() []string { return []string{AttrNested} }

// info: the summary (status, model, context), the folder, the age, the
// pane and the nested agents.
func (*agentKind) info(s *Session) []string {
	a := s.Attrs
	parts := s.AgentSummary()
	if p := a[AttrCwd]; p != "" {
		parts = append(parts, p)
	}
	parts = append(parts, a[AttrElapsed])
	if t := a[AttrTmuxTarget]; t != "" {
		parts = append(parts, "tmux "+t)
	}
	if n := a[AttrNested]; n != "" {
		parts = append(parts, n+" nested")
	}
	return parts
}

func (k *agentKind) group(x *grouping) []Session {
	if !x.g.cfg.Once { // a next gather's scan spares the lines kept
		k.keepCmdlines(x.s)
	}
	return k.groupAgents(x.g, x.s, x.tmuxPanes().panes)
}

// DefaultAgents returns the agent rules used when GroupConfig.Agents is nil:
//   - claude: Claude Code, as its native binary or its npm CLI under node
//     (comm or argv[0] "claude", or a script under @anthropic-ai/claude-code/),
//     with ClaudeTranscripts;
//   - codex:  OpenAI Codex CLI (codex, or @openai/codex/ under node), with
//     CodexTranscripts;
//   - gemini: Gemini CLI (gemini, or @google/gemini-cli/ under node);
//   - aider:  Aider (a Python script named aider).
func DefaultAgents() []AgentRule {
	return []AgentRule{
		{Name: "claude", Match: regexp.MustCompile(`^claude$|/@anthropic-ai/claude-code/`), Transcript: ClaudeTranscripts()},
		{Name: "codex", Match: regexp.MustCompile(`^codex$|/@openai/codex/`), Transcript: CodexTranscripts()},
		{Name: "gemini", Match: regexp.MustCompile(`^gemini$|/@google/gemini-cli/`)},
		{Name: "aider", Match: regexp.MustCompile(`^aider$`)},
	}
}

// ParseAgentRule reads "NAME=REGEX", the form of the --agent flag.
func ParseAgentRule(s string) (AgentRule, error) {
	name, expr, ok := strings.Cut(s, "=")
	if !ok || name == "" || expr == "" || strings.ContainsAny(name, " \t/:") {
		return AgentRule{}, fmt.Errorf("%w: agent rule %q: want NAME=REGEX, e.g. codex=^codex$ (NAME without spaces, '/' or ':')", ErrBadConfig, s)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return AgentRule{}, fmt.Errorf("%w: agent rule %q: %v", ErrBadConfig, s, err)
	}
	return AgentRule{Name: name, Match: re}, nil
}

// agentInterpreter reports whether a program runs an agent's CLI as a script
// argument, whose path is then matched too.
func agentInterpreter(name string) bool {
	switch name {
	case "node", "nodejs", "bun", "deno", "python", "python3", "ruby":
		return true
	}
	return strings.HasPrefix(name, "python3.")
}

// mayBeAgent rules out kernel threads and zombies: an agent that exited is
// no session any more (its children went to init or a subreaper), and its
// comm alone would make one named after its pid, its cwd being gone.
func mayBeAgent(p *procwalk.Process) bool { return !p.Kernel && !p.Zombie() }

// agentNeedsCmdline reports whether matching p against rules needs its
// command line, which a scan then reads for p alone: an interpreter's script
// argument (node running Claude Code's CLI), and argv[0] where the comm may
// not be the whole name (the kernel cuts comm at 15 bytes). Anything else
// matches by comm, which is argv[0]'s base name unless the process rewrote
// its title.
func agentNeedsCmdline(p *procwalk.Process) bool {
	return mayBeAgent(p) && (agentInterpreter(p.Comm) || len(p.Comm) >= maxCommLen)
}

// maxCommLen is the longest comm the kernel keeps (TASK_COMM_LEN - 1).
const maxCommLen = 15

// agentKey is what matching a process against the agent rules looks at:
// the comm, argv[0]'s base name and, for interpreters, the script argument
// (match tries its full path and its base name). Processes with equal keys
// match the same rule, so the Grouper caches the answer per key.
type agentKey struct{ comm, name, script string }

func agentNames(p *procwalk.Process) agentKey {
	k := agentKey{comm: p.Comm, name: p.Name()}
	if agentInterpreter(p.Comm) || agentInterpreter(k.name) {
		for _, a := range p.Cmdline[min(1, len(p.Cmdline)):] {
			if a != "" && a[0] != '-' {
				k.script = a
				break
			}
		}
	}
	return k
}

func (k agentKey) match(rules []AgentRule) int {
	for i, r := range rules {
		if r.Match.MatchString(k.comm) || r.Match.MatchString(k.name) {
			return i
		}
		if k.script != "" && (r.Match.MatchString(k.script) || r.Match.MatchString(filepath.Base(k.script))) {
			return i
		}
	}
	return -1
}

// maxAgentCache bounds the Grouper's agent match cache: command lines with
// unique arguments (temporary paths, ids) must not grow it without end.
const maxAgentCache = 8192

// matchAgentCached returns the index of the first rule matching p, or -1,
// through the Grouper's cache: most processes share their names with many
// others and with the previous gather's.
func (k *agentKind) matchAgentCached(p *procwalk.Process, rules []AgentRule) int {
	if !mayBeAgent(p) {
		return -1
	}
	key := agentNames(p)
	if k.haveLast && key == k.last {
		return int(k.lastRule)
	}
	r, ok := k.cache[key]
	if !ok {
		if k.cache == nil || len(k.cache) >= maxAgentCache {
			k.cache = make(map[agentKey]int16)
		}
		r = int16(key.match(rules))
		k.cache[key] = r
	}
	k.last, k.lastRule, k.haveLast = key, r, true
	return int(r)
}

// groupAgents makes one session per outermost agent: an agent started by
// another agent (a sub-agent, a nested CLI) folds into the outer session, so
// agent sessions never double-count; the outer one says how many it holds.
func (k *agentKind) groupAgents(g *Grouper, s *procwalk.Snapshot, panes paneIndex) []Session {
	rule := make([]int16, len(s.Procs))
	var agents []int32
	for i := range s.Procs {
		r := k.matchAgentCached(&s.Procs[i], g.cfg.Agents)
		rule[i] = int16(r)
		if r >= 0 {
			agents = append(agents, int32(i))
		}
	}
	var outer []int32
	nested := map[int32]int{}
	for _, i := range agents {
		top := i
		for a := s.ParentIndex(i); a >= 0; a = s.ParentIndex(a) {
			if rule[a] >= 0 {
				top = a
			}
		}
		if top == i {
			outer = append(outer, i)
		} else {
			nested[top]++
		}
	}
	// Oldest first; start ticks then pid break ties.
	slices.SortFunc(outer, func(a, b int32) int {
		pa, pb := &s.Procs[a], &s.Procs[b]
		if pa.ID.StartTicks != pb.ID.StartTicks {
			if pa.ID.StartTicks < pb.ID.StartTicks {
				return -1
			}
			return 1
		}
		return pa.ID.PID - pb.ID.PID
	})
	cwds := make([]string, len(outer))
	for k, i := range outer {
		cwds[k] = cwd(g.fs, &s.Procs[i])
	}
	projects := projectNames(cwds)
	leaders := make([]procwalk.ProcID, len(outer))
	bases := make([]string, len(outer))
	for k, i := range outer {
		p := &s.Procs[i]
		project := projects[k]
		if project == "" {
			project = "pid-" + strconv.Itoa(p.ID.PID) // cwd unreadable
		}
		leaders[k], bases[k] = p.ID, g.cfg.Agents[rule[i]].Name+"/"+project
	}
	// A second agent in the same folder gets "#2"; names stick (session_sticky.go).
	// Agents ended a moment ago keep their rows, so keep their names.
	endedLeaders, endedNames := k.tracker.keptNames(leaders)
	for k, l := range endedLeaders {
		leaders = append(leaders, l)
		bases = append(bases, stripNumber(endedNames[k]))
	}
	var names []string
	names, k.names = k.names.assign(leaders, bases)
	b := newBuilder(s, KindAgent)
	for k, i := range outer {
		p := &s.Procs[i]
		r := g.cfg.Agents[rule[i]]
		project := projects[k]
		if project == "" {
			project = "pid-" + strconv.Itoa(p.ID.PID)
		}
		name := names[k]
		elapsed := s.Time.Sub(p.Start)
		attrs := map[string]string{
			AttrAgent:   r.Name,
			AttrCommand: p.Comm,
			AttrElapsed: HumanDuration(elapsed), // its age_seconds, for people
		}
		if cwds[k] != "" {
			attrs[AttrCwd], attrs[AttrProject] = cwds[k], project
		}
		if t := panes.target(int(i)); t != "" {
			attrs[AttrTmuxTarget] = t
		}
		if c := nested[i]; c > 0 {
			attrs[AttrNested] = strconv.Itoa(c)
		}
		b.assignTree(i, b.add(name, attrs))
	}
	return b.finish() // in the order added: oldest first
}

// projectNames names each working directory by its folder; folders that
// share a name but not a path get "parent/folder", and if that is still
// ambiguous the whole path. Equal paths get equal names; "" stays "".
func projectNames(cwds []string) []string {
	out := make([]string, len(cwds))
	name := func(cwd string, parts int) string {
		if parts == 0 {
			return cwd
		}
		elems := strings.Split(strings.Trim(cwd, "/"), "/")
		if len(elems) < parts {
			return cwd
		}
		return strings.Join(elems[len(elems)-parts:], "/")
	}
	for k, cwd := range cwds {
		if cwd == "" {
			continue
		}
		if cwd == "/" {
			out[k] = "/"
			continue
		}
		for _, parts := range []int{1, 2, 0} {
			n := name(cwd, parts)
			clash := false
			for _, other := range cwds {
				if other != "" && other != cwd && name(other, parts) == n {
					clash = true
					break
				}
			}
			if !clash || parts == 0 {
				out[k] = n
				break
			}
		}
	}
	return out
}

// AgentSummary is what tells an agent session apart at a glance, for an
// INFO column: its status (for how long, when blocked or ended), model and
// context use, e.g. "blocked 3 min", "claude-sonnet-4-5", "ctx 91%". Nil
// for a session that is not an agent.
func (s *Session) AgentSummary() []string {
	a := s.Agent
	if a == nil {
		return nil
	}
	status := a.Status
	if a.Status == AgentBlocked || a.Status == AgentEnded {
		status += " " + HumanDuration(a.StatusFor)
	}
	parts := []string{status}
	if m := s.Attrs[AttrModel]; m != "" {
		parts = append(parts, m)
	}
	if a.Transcript != nil && a.Transcript.ContextUsedTokens > 0 && a.ContextWindowTokens > 0 {
		parts = append(parts, "ctx "+strconv.FormatFloat(a.ContextPercent, 'f', 0, 64)+"%")
	}
	return parts
}

// HumanDuration says how long in at most two units: "< 1 min", "12 min",
// "2 hr 5 min", "1 day", "3 days 4 hr". A zero second unit is left out.
func HumanDuration(d time.Duration) string {
	mins := int64(d / time.Minute)
	switch {
	case mins < 1:
		return "< 1 min"
	case mins < 60:
		return strconv.FormatInt(mins, 10) + " min"
	case mins < 24*60:
		h, m := mins/60, mins%60
		out := strconv.FormatInt(h, 10) + " hr"
		if m > 0 {
			out += " " + strconv.FormatInt(m, 10) + " min"
		}
		return out
	}
	days, h := mins/(24*60), mins%(24*60)/60
	out := strconv.FormatInt(days, 10) + " day"
	if days > 1 {
		out += "s"
	}
	if h > 0 {
		out += " " + strconv.FormatInt(h, 10) + " hr"
	}
	return out
}

// cwd is p's working directory: the snapshot's when it read cwd, else read
// now (Grouper.Fields leaves cwd out: only agents and panes need theirs),
// checking that the pid still names p. "" when unknown.
func cwd(fs procwalk.FS, p *procwalk.Process) string {
	if p.Read&procwalk.FieldCwd != 0 {
		return p.Cwd
	}
	cwd, err := os.Readlink(fs.PIDPath(p.ID.PID, "cwd"))
	if err != nil {
		return ""
	}
	if st, err := fs.ReadStat(p.ID.PID); err != nil || st.StartTicks != p.ID.StartTicks {
		return "" // exited, and the pid reused, since the snapshot
	}
	return cwd
}
