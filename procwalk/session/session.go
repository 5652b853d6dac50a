//go:build linux

package session

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/suggest"
)

// session.go defines sessions: named groups of processes with honest totals.
// A session is the unit users think in ("my build in tmux", "that pod", "the
// Claude Code agent in myproj") and the unit that metrics, rules and kills
// target. A Grouper turns Snapshots into sessions; the kinds live in their
// own files (session_tmux.go, session_cgroup.go, agent.go, group.go ...).

// A process belongs to at most one session of each kind, so the sessions of
// one kind never double-count a process; across kinds they overlap freely
// (a process is in a tmux session, a sid, a user ...). Tree sessions are the
// exception: each is a whole subtree, even inside another. Kernel threads
// belong to no session. The kinds are listed in session_kind.go, each in a
// file of its own.

// Attribute keys of Session.Attrs. Each kind sets the keys listed with it;
// a key is absent, never empty, when its value is unknown.
const (
	AttrSocket      = "socket"      // tmux: socket path of the server
	AttrTmuxTarget  = "tmux_target" // tmux: first pane "session:window.pane"; agent: its pane
	AttrPanes       = "panes"       // tmux: number of panes
	AttrWindows     = "windows"     // tmux: number of windows
	AttrAttached    = "attached"    // tmux: clients attached
	AttrLeader      = "leader"      // sid, pgrp: comm of the leader when alive
	AttrTTY         = "tty"         // sid, pgrp: terminal name
	AttrCommand     = "command"     // tree, agent, group: comm of the root
	AttrPIDFile     = "pidfile"     // tree: the pidfile its root was read from
	AttrPattern     = "pattern"     // tree: the regex that found its root
	AttrCgroup      = "cgroup"      // cgroup: the session's cgroup directory
	AttrCgroupVer   = "cgroup_version"
	AttrUnit        = "unit"         // cgroup: systemd unit (.service, .scope)
	AttrSlice       = "slice"        // cgroup: innermost systemd slice
	AttrPodUID      = "pod_uid"      // cgroup: Kubernetes pod uid, with dashes
	AttrPod         = "pod"          // cgroup: pod name, when readable
	AttrNamespace   = "namespace"    // cgroup: pod namespace, when readable
	AttrContainerID = "container_id" // cgroup: container ids, comma-separated
	AttrQoS         = "qos"          // cgroup: guaranteed, burstable or besteffort
	AttrUser        = "user"         // user: name (uid when unknown)
	AttrUID         = "uid"          // user
	AttrAgent       = "agent"        // agent: the AgentRule name, e.g. "claude"
	AttrCwd         = "cwd"          // agent: working directory
	AttrProject     = "project"      // agent: folder name, "parent/folder" when ambiguous
	AttrElapsed     = "elapsed"      // agent: two-unit human form, e.g. "2 hr 5 min"
	AttrNested      = "nested_agents"
	AttrRule        = "rule"       // group: the rule's index (1-based) in the config
	AttrStatus      = "status"     // agent: working, idle, blocked or ended (agent_status.go)
	AttrModel       = "model"      // agent: the model of its last turn
	AttrSessionID   = "session_id" // agent: the agent's own session id, from its transcript
	AttrTranscript  = "transcript" // agent: the transcript file read
	// agent: what its transcript says of the session (agent_transcript.go).
	AttrTitle          = "title"           // custom-title, ai-title or summary
	AttrGitBranch      = "git_branch"      // the branch of its working directory
	AttrAgentVersion   = "agent_version"   // Claude Code's version, Codex's cli_version
	AttrPermissionMode = "permission_mode" // Claude Code's: default, acceptEdits, plan, bypassPermissions
	AttrLastError      = "last_error"      // the kind of its last failed model call, e.g. rate_limit
)

// Session is a named group of processes in one Snapshot.
type Session struct {
	Kind string
	// Name is unique within Kind; "KIND:NAME" names a session for Find.
	Name  string
	Attrs map[string]string
	// Roots are the members whose parent is not a member, ascending pid.
	Roots []procwalk.ProcID
	// Members is every member, ascending pid.
	Members []procwalk.ProcID
	Totals  Totals
	// Panes are a tmux session's panes, in window and pane order.
	Panes []TmuxPane
	// Partial is set when members may be missing because grouping could
	// not check every process (a note of Group says why): tmux sessions when
	// the environment of possible escapees was not or could not be read.
	Partial bool
	// Agent is an agent session's status, model and token use (agent
	// sessions only; nil elsewhere). An ended agent's row has no members.
	Agent *AgentState

	// kind is the kind that built the session (Info, TagAttrs).
	kind sessionKind
	// index holds each member's position in the Snapshot's Procs, for the
	// Grouper's own bookkeeping in the gather that built the session.
	index []int32
}

// TmuxPane is one pane of a tmux session, as `tmux list-panes` reports it.
type TmuxPane struct {
	Target     string // "session:window.pane", e.g. "build:0.1"
	PaneID     string // "%3": stable while the pane lives
	WindowName string
	PID        int    // the pane's first process (usually a shell)
	TTY        string // "/dev/pts/3"
	Cwd        string // of the pane's foreground process (Grouper.PaneForegrounds)
	Command    string // the pane's foreground command (Grouper.PaneForegrounds)
	Dead       bool   // the process exited; the pane stays (remain-on-exit)
}

// Ref is "KIND:NAME", the form Find accepts.
func (s *Session) Ref() string { return s.Kind + ":" + s.Name }

// Totals sums the members. The embedded Totals are this snapshot's
// sums: RSSBytes over-counts pages the members share, PSSBytes (with
// FieldSmaps) does not.
type Totals struct {
	procwalk.Totals

	// OldestStart is the start of the oldest member.
	OldestStart time.Time

	// Memory growth summed over members with a rate (see Rates).
	RSSGrowthBytesPerMinute float64
	PSSGrowthBytesPerMinute float64

	// Cumulative counters, kept by the Grouper across gathers: they never go
	// backwards when members exit. Each counts, per member, what the member
	// used while it was a member, up to the last gather that saw it:
	//   - CPU: user+system time of the member itself (not of reaped
	//     children, which are members of their own). CPU a member spends
	//     after the last gather that saw it and before it exits is lost.
	//   - IO: read_bytes/write_bytes of /proc/<pid>/io. The kernel adds a
	//     reaped child's counters to its parent's; when both were members
	//     the child's counted share is not counted twice.
	// The first gather starts them at the members' current counters; a
	// session that disappears and comes back starts again (a counter reset).
	CumulativeCPUSeconds float64
	CumulativeReadBytes  uint64
	CumulativeWriteBytes uint64

	// Cgroup is set for cgroup sessions whose cgroupfs could be read.
	Cgroup *CgroupUsage
}

// CgroupUsage is what cgroupfs says about a cgroup session: usage of the
// session's own cgroup, limits of the tightest of it and its ancestors.
type CgroupUsage struct {
	Version          int // 1 or 2
	MemoryUsageBytes uint64
	HaveMemoryUsage  bool
	// MemoryLimitBytes is 0 when no memory limit applies.
	MemoryLimitBytes uint64
	MemoryLimitPath  string // the cgroup that sets the limit
	// MemoryPercent is usage over limit, 0 without a limit.
	MemoryPercent float64
	// CPUQuotaCores is quota/period: 1.5 means one and a half CPUs; 0 when
	// no quota applies.
	CPUQuotaCores float64
	CPUQuotaPath  string
	// CPUCoresUsed is the members' CPU rate in cores (needs a Sampler);
	// CPUQuotaPercent is that over the quota, 0 without a quota or rate.
	CPUCoresUsed    float64
	CPUQuotaPercent float64
	// Danger is set when memory or CPU is at or above the danger threshold
	// (GroupConfig.DangerPercent) of its limit.
	Danger bool
}

// Config says which sessions to build and how. The zero value builds
// every kind with the defaults documented on each field.
type Config struct {
	// Kinds to build; empty means all. Unknown kinds are an error.
	Kinds []string

	Tmux TmuxConfig

	// CgroupRoot is where cgroupfs is mounted; "" means /sys/fs/cgroup.
	CgroupRoot string
	// DangerPercent of a cgroup limit marks danger; 0 means 80.
	DangerPercent float64

	// Agents detect AI coding agents; nil means DefaultAgents(). Use an
	// empty non-nil slice to detect none.
	Agents []AgentRule
	// AgentStatus holds the thresholds of agent statuses.
	AgentStatus AgentStatusConfig

	// Groups are the user-defined group rules (see ParseGroupRules).
	Groups []GroupRule

	// Trees are the tree sessions to build.
	Trees []TreeSpec

	// Fold merges sessions whose names match into one (see FoldRule); the
	// first matching rule of a session's kind names it.
	Fold []FoldRule

	// Users names user sessions (see ReadUsers); nil names them by uid.
	Users *procwalk.Users

	// Once says the Grouper groups one snapshot and is dropped (a one-shot
	// command): it keeps nothing for a next gather. Cumulative counters
	// are then the members' current counters, as in any first gather; a
	// later Group would start them afresh, forgetting exited members.
	Once bool
}

// TmuxConfig says which tmux servers to ask. With no Sockets, the default
// sockets are discovered: every socket in $TMUX_TMPDIR/tmux-<uid>/ (TMUX_TMPDIR
// defaults to /tmp) for the current uid, and for every uid when run as root.
type TmuxConfig struct {
	// Sockets are names (as tmux -L takes) or paths (as tmux -S takes).
	Sockets []string
	// TmpDir overrides $TMUX_TMPDIR; "" means $TMUX_TMPDIR, then /tmp.
	TmpDir string
	// ListPanes runs `tmux -S socket list-panes -a -F TmuxPaneFormat` and
	// returns its standard output; nil means run the tmux binary. Tests
	// inject a fake. It is called once per socket per Group, concurrently
	// for different sockets.
	ListPanes func(socket string) ([]byte, error)
}

// AgentRule detects one kind of AI coding agent. Match is tried against the
// comm, the base name of argv[0], and for interpreters (node, python, bun,
// deno ...) the script argument; the first rule that matches wins.
type AgentRule struct {
	Name  string // e.g. "claude"; the session name is Name/project
	Match *regexp.Regexp
	// Transcript, when set, is where the agent's transcripts are: status,
	// model and token use come from them (agent_status.go).
	Transcript *TranscriptSource
}

// GroupRule is one user-defined group rule: processes whose Field matches
// Match join the group named by expanding Template with the match ($1,
// ${name}); their descendants fold into it. The first matching rule wins.
type GroupRule struct {
	Template string
	Field    string // "comm", "name" (argv[0] base), "exe" or "cmdline"
	Match    *regexp.Regexp
}

// TreeSpec names a tree session: the subtree of PID, of the pid in PIDFile,
// or of the oldest process whose command line (comm when unread) matches
// Pattern. Exactly one of the three is set.
type TreeSpec struct {
	Name    string // "" means derived: the pid, pidfile base or pattern
	PID     int
	PIDFile string
	Pattern *regexp.Regexp
}

// Errors of Find and of grouping.
var (
	ErrUnknownKind = errors.New("unknown session kind")
	ErrNoSession   = errors.New("no such session")
	ErrBadRef      = errors.New("bad session reference")
	ErrBadConfig   = errors.New("bad session config")
)

// ParseRef splits "KIND:NAME". The name may itself contain ':'.
func ParseRef(ref string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(ref, ":")
	if !ok || kind == "" || name == "" {
		return "", "", fmt.Errorf("%w %q: want KIND:NAME, e.g. tmux:build (kinds: %s)", ErrBadRef, ref, strings.Join(Kinds(), ", "))
	}
	if !slices.Contains(Kinds(), kind) {
		return "", "", fmt.Errorf("%w %q in %q: kinds are %s", ErrUnknownKind, kind, ref, strings.Join(Kinds(), ", "))
	}
	return kind, name, nil
}

// maxListed bounds how many names an error message lists; maxSuggested
// how many it offers as "did you mean".
const (
	maxListed    = 12
	maxSuggested = 5
)

// Find returns the session named by ref ("KIND:NAME" or "KIND:NAME@ID", see
// Session.RefID; a name that itself ends in "@PID.TICKS" is taken whole).
// With an ID, the session named NAME must have that ID, else the error
// wraps ErrSessionChanged. When there is none,
// the error wraps ErrUnknownKind, ErrBadRef or ErrNoSession and lists the
// sessions of that kind that exist (or the kinds, when none of that kind).
func Find(sessions []Session, ref string) (*Session, error) {
	kind, name, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if base, id, ok := splitID(name); ok && !hasName(sessions, kind, name) {
		return findWithID(sessions, ref, kind, base, id)
	}
	var names []string
	for i := range sessions {
		s := &sessions[i]
		if s.Kind != kind {
			continue
		}
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	if kind == KindTmux {
		if s := findQualifiedTmux(sessions, name); s != nil {
			return s, nil
		}
	}
	if kind == KindUser {
		// user:UID is the session of that uid, named by its user when
		// the user database has it (user:1000 is user:alice): scripts
		// write user:$(id -u).
		for i := range sessions {
			if s := &sessions[i]; s.Kind == KindUser && s.Attrs[AttrUID] == name {
				return s, nil
			}
		}
	}
	if len(names) == 0 {
		if present := presentKinds(sessions); len(present) > 0 {
			return nil, fmt.Errorf("%w %s: there are no %s sessions; kinds present: %s", ErrNoSession, ref, kind, strings.Join(present, ", "))
		}
		return nil, fmt.Errorf("%w %s: there are no %s sessions", ErrNoSession, ref, kind)
	}
	slices.SortFunc(names, CompareNatural)
	return nil, fmt.Errorf("%w %s: %s", ErrNoSession, ref, whichOf(kind, name, names))
}

// whichOf says which of names (of sessions of kind) name may have meant:
// the closest ("did you mean"; first those that are name on one server of
// several, tmux's "server/name"), then all of them when they are few
// (beside the closest, very few), or how many there are.
func whichOf(kind, name string, names []string) string {
	var b strings.Builder
	close := suggest.Closest(name, names, maxSuggested)
	if len(close) > 0 {
		for i, c := range close {
			close[i] = kind + ":" + c
		}
		fmt.Fprintf(&b, "did you mean %s? ", strings.Join(close, ", "))
	}
	if len(names) > maxListed || len(close) > 0 && len(names) > 2*len(close)+2 {
		fmt.Fprintf(&b, "%d %s sessions in all: procwalk sessions --kind %s lists them", len(names), kind, kind)
	} else {
		fmt.Fprintf(&b, "%s sessions are %s", kind, strings.Join(names, ", "))
	}
	return b.String()
}

func hasName(sessions []Session, kind, name string) bool {
	for i := range sessions {
		if sessions[i].Kind == kind && sessions[i].Name == name {
			return true
		}
	}
	return false
}

func presentKinds(sessions []Session) []string {
	var out []string
	for _, k := range Kinds() {
		for i := range sessions {
			if sessions[i].Kind == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// LimitPerKind keeps the first limit sessions of each kind (0: all), in
// order, and counts the rest per kind.
func LimitPerKind(sessions []Session, limit int) (shown []Session, hidden map[string]int) {
	if limit <= 0 {
		return sessions, nil
	}
	hidden = map[string]int{}
	seen := map[string]int{}
	for _, s := range sessions {
		if seen[s.Kind]++; seen[s.Kind] > limit {
			hidden[s.Kind]++
			continue
		}
		shown = append(shown, s)
	}
	return shown, hidden
}
