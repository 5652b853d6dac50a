//go:build linux

package session

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
)

// group.go holds user-defined groups: rules that name a group after what a
// process matches, read from a small line-based file:
//
//	# NAME-TEMPLATE  FIELD    REGEX (the rest of the line)
//	postgres         comm     ^postgres$
//	py-$1            cmdline  ^python3? -m ([a-z_]+)
//	${svc}           name     ^(?P<svc>nginx|redis-server)$
//
// FIELD is comm, name (argv[0]'s base name), exe or cmdline (arguments
// joined by spaces). The template expands $1, ${name} from the match. Rules
// are tried in order on each process from the top of the tree down; the
// first match wins, and the matched process's descendants fold into its
// group without being matched themselves.

// KindGroup is a user-defined group (GroupRule).
const KindGroup = "group"

type groupKind struct{}

func (groupKind) name() string { return KindGroup }

// plan: the fields the rules match.
func (groupKind) plan(g *Grouper) kindPlan {
	var p kindPlan
	for _, r := range g.cfg.Groups {
		p.every |= r.fields()
	}
	return p
}

func (groupKind) tagAttrs() []string    { return nil }
func (groupKind) numberAttrs() []string { return []string{AttrRule} }

// info: the comm of the process that matched.
func (groupKind) info(s *Session) []string { return []string{s.Attrs[AttrCommand]} }

func (groupKind) group(x *grouping) []Session {
	if len(x.g.cfg.Groups) == 0 {
		return nil
	}
	return groupRules(x.s, x.g.cfg.Groups)
}

// groupFields are the fields a group rule can match.
func groupFields() []string { return []string{"comm", "name", "exe", "cmdline"} }

// ParseGroupRules reads rules in the format above; name labels errors
// (usually the file name).
func ParseGroupRules(r io.Reader, name string) ([]GroupRule, error) {
	var rules []GroupRule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 3 {
			return nil, fmt.Errorf("%w: %s line %d: want NAME-TEMPLATE FIELD REGEX, e.g. \"py-$1 cmdline ^python3? -m (\\w+)\"", ErrBadConfig, name, line)
		}
		// The regex is the rest of the line after the second field.
		rest := strings.TrimSpace(text[len(f[0]):])
		rest = strings.TrimSpace(rest[len(f[1]):])
		re, err := regexp.Compile(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrBadConfig, name, line, err)
		}
		rule := GroupRule{Template: f[0], Field: f[1], Match: re}
		if err := rule.check(); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %w", ErrBadConfig, name, line, err)
		}
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s line %d: %v", ErrBadConfig, name, line+1, err)
	}
	return rules, nil
}

// LoadGroupRules reads a group rules file.
func LoadGroupRules(path string) ([]GroupRule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: groups file: %w", ErrBadConfig, err)
	}
	defer f.Close()
	return ParseGroupRules(f, path)
}

func (r GroupRule) check() error {
	if r.Template == "" || r.Match == nil {
		return fmt.Errorf("a rule needs a name template and a regex")
	}
	if !slices.Contains(groupFields(), r.Field) {
		return fmt.Errorf("unknown field %q: fields are %s", r.Field, strings.Join(groupFields(), ", "))
	}
	return nil
}

// fields returns the snapshot fields the rule reads.
func (r GroupRule) fields() procwalk.Fields {
	switch r.Field {
	case "exe":
		return procwalk.FieldExe
	case "name", "cmdline":
		return procwalk.FieldCmdline
	}
	return 0
}

// subject is the text of p the rule matches.
func (r GroupRule) subject(p *procwalk.Process) string {
	switch r.Field {
	case "comm":
		return p.Comm
	case "name":
		return p.Name()
	case "exe":
		return p.Exe
	}
	return strings.Join(p.Cmdline, " ")
}

// groupName expands the template with the match; "" when p does not match.
func (r GroupRule) groupName(p *procwalk.Process) string {
	subj := r.subject(p)
	m := r.Match.FindStringSubmatchIndex(subj)
	if m == nil {
		return ""
	}
	name := string(r.Match.ExpandString(nil, r.Template, subj, m))
	if strings.TrimSpace(name) == "" {
		return p.Comm // the template expanded to nothing (an empty group)
	}
	return name
}

func groupRules(s *procwalk.Snapshot, rules []GroupRule) []Session {
	b := newBuilder(s, KindGroup)
	index := map[string]int32{}
	for i := range s.Procs {
		if s.ParentIndex(int32(i)) >= 0 {
			continue
		}
		s.WalkIndex(int32(i), 0, func(p *procwalk.Process, _ int) bool {
			if p.Kernel {
				return false
			}
			for k, r := range rules {
				name := r.groupName(p)
				if name == "" {
					continue
				}
				si, ok := index[name]
				if !ok {
					si = b.add(name, map[string]string{AttrRule: strconv.Itoa(k + 1), AttrCommand: p.Comm})
					index[name] = si
				}
				b.assignTree(int32(s.Index(p.ID.PID)), si)
				return false // descendants folded in
			}
			return true
		})
	}
	return sortByName(b.finish())
}
