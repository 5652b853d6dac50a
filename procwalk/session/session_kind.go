//go:build linux

package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// session_kind.go defines what a session kind is. Each kind is complete in
// its own file (session_tmux.go, session_number.go, session_tty.go,
// session_tree.go, session_cgroup.go, session_user.go, agent.go, group.go):
// its name, what it reads, how it groups a snapshot, its INFO text, its
// Telegraf tags and its numeric attributes. Adding a kind is its file, its
// test, a line in kindTable and a row in the README's table of kinds
// (TestREADMEKindTable).

// sessionKind is one kind of session. A Grouper owns one value of each kind
// it builds (kindTable), so a kind may keep memory between gathers in its
// own fields (sticky names, caches); the Grouper passes itself for the
// configuration and the sources the kinds share (tmux's answer, the walk of
// cgroupfs).
type sessionKind interface {
	// name is the kind's name, as in "KIND:NAME".
	name() string
	// plan says what the kind reads with the configuration of g.
	plan(g *Grouper) kindPlan
	// group builds the kind's sessions of one gather, in the order they
	// are reported.
	group(x *grouping) []Session
	// info describes a session of the kind for an INFO column, in parts
	// that the caller joins with ", ".
	info(s *Session) []string
	// tagAttrs are the Session.Attrs that Telegraf writes as tags of the
	// kind's procwalk_session lines: few values that stay stable over a
	// session's life.
	tagAttrs() []string
	// numberAttrs are the Session.Attrs that hold counts or ids, which
	// JSON writes as numbers.
	numberAttrs() []string
}

// kindPlan is what a kind reads beyond stat and statm.
type kindPlan struct {
	every procwalk.Fields // from every process
	some  procwalk.Fields // from the processes pick selects (see Selector)
	pick  func(*procwalk.Process) procwalk.Fields
	tmux  bool // asks the tmux servers for their panes
}

// kindPreparer is a kind with work to do before a Monitor's scan of fields
// (see Grouper.Prepare); done, when not nil, ends it after the scan.
type kindPreparer interface {
	prepare(g *Grouper, fields procwalk.Fields) (done func())
}

// kindFinisher is a kind that revises its sessions once their cumulative
// counters are set: agents add the rows of agents ended a moment ago and
// keep their order from gather to gather. Notes say what it could not do.
type kindFinisher interface {
	finish(g *Grouper, s *procwalk.Snapshot, sessions []Session, n *noteList) []Session
}

// kindTable returns a fresh value of every kind, in the order Group reports
// them.
func kindTable() []sessionKind {
	return []sessionKind{
		&tmuxKind{},                  // a tmux session: every process of its panes
		numberKind{KindSID, sidOf},   // a Linux session id (setsid)
		numberKind{KindPGRP, pgrpOf}, // a process group (a shell job)
		ttyKind{},                    // a controlling terminal
		treeKind{},                   // a configured process and its descendants
		&cgroupKind{},                // a systemd unit, a Kubernetes pod or a cgroup path
		userKind{},                   // a real uid
		&agentKind{},                 // an AI coding agent and its descendants
		groupKind{},                  // a user-defined group (GroupRule)
	}
}

// Kinds returns every session kind, in the order Group reports them.
func Kinds() []string {
	table := kindTable()
	out := make([]string, len(table))
	for i, k := range table {
		out[i] = k.name()
	}
	return out
}

// OverviewKinds are the kinds an overview of a host lists (procwalk
// sessions and top without --kind): the groups people name things by. sid,
// pgrp and tty have a session per shell and job: in tmux each repeats a
// pane, in an ssh login the login's scope (a cgroup session), and they
// buried the rest, so they are listed on request.
func OverviewKinds() []string {
	return []string{KindTmux, KindTree, KindCgroup, KindUser, KindAgent, KindGroup}
}

// ParseKinds reads a comma-separated list of kinds, spaces around each
// ignored: "" is OverviewKinds, "all" every kind. An unknown kind is an
// error that wraps ErrUnknownKind and lists the kinds.
func ParseKinds(s string) ([]string, error) {
	switch s {
	case "":
		return OverviewKinds(), nil
	case "all":
		return Kinds(), nil
	}
	var kinds []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(Kinds(), k) {
			return nil, fmt.Errorf("%q: %w: kinds are %s, or all", k, ErrUnknownKind, strings.Join(Kinds(), ", "))
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// grouping is one gather of a Grouper: what the kinds share while they
// group a snapshot.
type grouping struct {
	g     *Grouper
	s     *procwalk.Snapshot
	notes *noteList
	// tmuxAnswer is tmux's answer, asked for when a kind plans it; tmux
	// holds the grouping into tmux sessions once a kind has asked for it.
	tmuxAnswer chan tmuxAnswer
	tmux       *tmuxResult
}

// Info is the session's INFO text, as the sessions table shows it: what its
// kind knows beyond the numbers ("2 windows, 3 panes, socket default",
// "leader bash, pts/3", "pod default/web, burstable, mem 90.0% of 512.0
// MiB"), and a mark when the session is partial. Not escaped: names come
// from processes, so pass it through Printable before a terminal.
func (s *Session) Info() string {
	var parts []string
	if k := s.sessionKind(); k != nil {
		parts = k.info(s)
	}
	if n := s.Attrs[AttrFolded]; n != "" && n != "1" {
		parts = append([]string{n + " sessions folded"}, parts...)
	}
	if s.Partial {
		parts = append(parts, "partial: see the note")
	}
	return strings.Join(parts, ", ")
}

// TagAttrs are the keys of the session's Attrs that Telegraf writes as tags
// (pod, namespace and unit of a cgroup session, an agent's name and
// status ...); the other attributes stay out of series keys.
func (s *Session) TagAttrs() []string {
	if k := s.sessionKind(); k != nil {
		return k.tagAttrs()
	}
	return nil
}

// NumberAttrs are the keys of the session's Attrs that hold counts or ids
// ("panes", "uid", "folded"), which JSON writes as numbers.
func (s *Session) NumberAttrs() []string {
	var keys []string
	if k := s.sessionKind(); k != nil {
		keys = k.numberAttrs()
	}
	if _, ok := s.Attrs[AttrFolded]; ok {
		keys = append(slices.Clip(keys), AttrFolded)
	}
	return keys
}

// sessionKind is the kind that built s, or the kind named s.Kind for a
// session built by hand; nil for an unknown kind.
func (s *Session) sessionKind() sessionKind {
	if s.kind != nil {
		return s.kind
	}
	for _, k := range kindTable() {
		if k.name() == s.Kind {
			return k
		}
	}
	return nil
}
