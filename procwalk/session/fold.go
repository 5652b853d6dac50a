//go:build linux

package session

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// fold.go merges sessions whose names are per instance by nature (login
// scopes session-N.scope, docker-<id>.scope, pod uids, numbered tmux
// sessions) into one session a dashboard can follow: every new name is a
// new series in InfluxDB or Prometheus.

// FoldRule merges the sessions of Kind whose name Match matches into the
// session named by expanding Name with the match ($1, ${name}); sessions
// whose names expand alike, or equal the expansion, become one.
type FoldRule struct {
	Name  string // template, e.g. "logins" or "docker/$1"
	Kind  string
	Match *regexp.Regexp
}

// AttrFolded is the number of sessions a folded session merges.
const AttrFolded = "folded"

// ParseFoldRule parses NAME=KIND:REGEX, the form of --fold and of
// Telegraf's fold option: logins=cgroup:^session-[0-9]+\.scope$.
func ParseFoldRule(s string) (FoldRule, error) {
	name, rest, ok := strings.Cut(s, "=")
	kind, expr, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || strings.TrimSpace(name) == "" || expr == "" {
		return FoldRule{}, fmt.Errorf("%w: fold rule %q: want NAME=KIND:REGEX, e.g. logins=cgroup:^session-[0-9]+\\.scope$", ErrBadConfig, s)
	}
	r := FoldRule{Name: name, Kind: kind}
	if err := r.checkKind(); err != nil {
		return FoldRule{}, fmt.Errorf("%w: fold rule %q: %w", ErrBadConfig, s, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return FoldRule{}, fmt.Errorf("%w: fold rule %q: %v", ErrBadConfig, s, err)
	}
	r.Match = re
	return r, nil
}

// checkKind refuses kinds a fold cannot apply to: agents (one status row
// per agent, kept from gather to gather) and unknown kinds.
func (r FoldRule) checkKind() error {
	switch {
	case r.Kind == KindAgent:
		return fmt.Errorf("agent sessions cannot be folded: their status is per agent")
	case !slices.Contains(Kinds(), r.Kind):
		return fmt.Errorf("%w %q: kinds are %s", ErrUnknownKind, r.Kind, strings.Join(Kinds(), ", "))
	}
	return nil
}

// foldName is the name rules give a session of kind: the first matching
// rule's expansion, else the session's own name.
func foldName(rules []FoldRule, kind, name string) (string, bool) {
	for _, r := range rules {
		if r.Kind != kind {
			continue
		}
		if m := r.Match.FindStringSubmatchIndex(name); m != nil {
			if n := string(r.Match.ExpandString(nil, r.Name, name, m)); strings.TrimSpace(n) != "" {
				return n, true
			}
		}
	}
	return name, false
}

// fold applies rules to the sessions of one kind, built from s. A session
// folded alone is renamed; several are merged: members (each once, for
// trees that overlap), roots, panes and totals of them all, the attributes
// they share, and AttrFolded. A merge has no cgroup usage: its parts may
// have different limits. Cumulative counters, set after, follow the merged
// name.
func fold(s *procwalk.Snapshot, rules []FoldRule, kind string, sessions []Session) []Session {
	if !slices.ContainsFunc(rules, func(r FoldRule) bool { return r.Kind == kind }) {
		return sessions
	}
	byName := map[string][]int{}
	var names []string
	folded := false
	for i := range sessions {
		name, ok := foldName(rules, kind, sessions[i].Name)
		folded = folded || ok
		if _, seen := byName[name]; !seen {
			names = append(names, name)
		}
		byName[name] = append(byName[name], i)
	}
	if !folded {
		return sessions
	}
	out := make([]Session, 0, len(names))
	for _, name := range names {
		parts := byName[name]
		ss := sessions[parts[0]]
		if len(parts) > 1 {
			ss = merge(s, sessions, parts)
		}
		if ss.Name != name || len(parts) > 1 {
			ss.Name = name
			ss.Attrs = maps.Clone(ss.Attrs)
			if ss.Attrs == nil {
				ss.Attrs = map[string]string{}
			}
			ss.Attrs[AttrFolded] = strconv.Itoa(len(parts))
		}
		out = append(out, ss)
	}
	return sortByName(out)
}

// merge builds one session of the sessions at parts.
func merge(s *procwalk.Snapshot, sessions []Session, parts []int) Session {
	first := &sessions[parts[0]]
	m := Session{Kind: first.Kind, Attrs: maps.Clone(first.Attrs)}
	member := map[int32]bool{}
	for _, i := range parts {
		p := &sessions[i]
		for k, v := range m.Attrs {
			if p.Attrs[k] != v {
				delete(m.Attrs, k) // only what every part says
			}
		}
		for _, x := range p.index {
			member[x] = true
		}
		m.Panes = append(m.Panes, p.Panes...)
		m.Partial = m.Partial || p.Partial
	}
	index := slices.Collect(maps.Keys(member))
	slices.SortFunc(index, func(a, b int32) int { return s.Procs[a].ID.PID - s.Procs[b].ID.PID })
	m.index = index
	m.Members = make([]procwalk.ProcID, 0, len(index))
	for _, x := range index {
		p := &s.Procs[x]
		m.Members = append(m.Members, p.ID)
		if par := s.ParentIndex(x); par < 0 || !member[par] {
			m.Roots = append(m.Roots, p.ID)
		}
		m.Totals.add(p)
	}
	return m
}
