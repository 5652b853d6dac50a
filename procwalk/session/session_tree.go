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

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// session_tree.go builds tree sessions: a process and all its descendants,
// the process named by a pid, a pidfile, or the oldest process matching a
// pattern. Unlike the other kinds, tree sessions may overlap: each is a whole
// subtree, even inside another.

// KindTree is a configured process and its descendants.
const KindTree = "tree"

type treeKind struct{}

func (treeKind) name() string { return KindTree }

// plan: a pattern is matched against command lines.
func (treeKind) plan(g *Grouper) kindPlan {
	for _, t := range g.cfg.Trees {
		if t.Pattern != nil {
			return kindPlan{every: procwalk.FieldCmdline}
		}
	}
	return kindPlan{}
}

func (treeKind) tagAttrs() []string    { return nil }
func (treeKind) numberAttrs() []string { return nil }

// info: the root's comm.
func (treeKind) info(s *Session) []string { return []string{s.Attrs[AttrCommand]} }

func (treeKind) group(x *grouping) []Session { return x.g.groupTrees(x.s, x.notes) }

// AddTreeRef makes the tree session ref names (tree:NAME, tree:NAME@ID)
// one that c builds: a pid, a pidfile or a regex needs no TreeSpec
// configured (tree:1234, tree:/run/x.pid, tree:postgres). A ref of another
// kind, or of a tree c has, changes nothing.
func (c *Config) AddTreeRef(ref string) error {
	kind, name, err := ParseRef(ref)
	if err != nil || kind != KindTree {
		return err
	}
	if base, _, ok := SplitRefID(name); ok {
		name = base // tree:1234@ID: build the tree, let Find check the ID
	}
	if slices.ContainsFunc(c.Trees, func(t TreeSpec) bool { return t.Name == name }) {
		return nil
	}
	spec, err := ParseTreeSpec(name)
	if err != nil {
		return err
	}
	spec.Name = name
	c.Trees = append(c.Trees, spec)
	return nil
}

// ParseTreeSpec reads "[NAME=]SPEC", the form of the --tree flag: SPEC is a
// pid, a pidfile path (it holds a '/'), or a regex matched against command
// lines. NAME defaults to the pid, the pidfile's base name without ".pid",
// or the regex.
func ParseTreeSpec(s string) (TreeSpec, error) {
	var t TreeSpec
	spec := s
	if name, rest, ok := strings.Cut(s, "="); ok && name != "" && !strings.ContainsAny(name, "/^$()[]|*+?\\ ") {
		t.Name, spec = name, rest
	}
	switch {
	case spec == "":
		return TreeSpec{}, fmt.Errorf("%w: tree %q: want [NAME=]PID, [NAME=]/path/to.pid or [NAME=]REGEX", ErrBadConfig, s)
	case isDigits(spec):
		pid, err := strconv.Atoi(spec)
		if err != nil || pid <= 0 {
			return TreeSpec{}, fmt.Errorf("%w: tree %q: bad pid", ErrBadConfig, s)
		}
		t.PID = pid
	case strings.Contains(spec, "/"):
		t.PIDFile = spec
	default:
		re, err := regexp.Compile(spec)
		if err != nil {
			return TreeSpec{}, fmt.Errorf("%w: tree %q: %v", ErrBadConfig, s, err)
		}
		t.Pattern = re
	}
	t.Name = t.name()
	return t, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// name is the session name: Name, or one derived from the spec.
func (t TreeSpec) name() string {
	switch {
	case t.Name != "":
		return t.Name
	case t.PID > 0:
		return strconv.Itoa(t.PID)
	case t.PIDFile != "":
		return strings.TrimSuffix(filepath.Base(t.PIDFile), ".pid")
	case t.Pattern != nil:
		return t.Pattern.String()
	}
	return ""
}

func (t TreeSpec) check() error {
	n := 0
	if t.PID > 0 {
		n++
	}
	if t.PIDFile != "" {
		n++
	}
	if t.Pattern != nil {
		n++
	}
	if n != 1 {
		return fmt.Errorf("set exactly one of a pid, a pidfile or a pattern (got %d)", n)
	}
	return nil
}

func (g *Grouper) groupTrees(s *procwalk.Snapshot, n *noteList) []Session {
	var out []Session
	self := g.selfPIDs(s)
	seen := map[string]bool{}
	for _, t := range g.cfg.Trees {
		name := t.name()
		if seen[name] {
			n.addf("tree: two trees are named %q; kept the first", name)
			continue
		}
		seen[name] = true
		root, attrs, err := t.resolve(s, self)
		if err != nil {
			n.addf("tree %s: %v", name, err)
			continue
		}
		b := newBuilder(s, KindTree)
		p := &s.Procs[root]
		attrs[AttrCommand] = p.Comm
		b.assignTree(int32(root), b.add(name, attrs))
		out = append(out, b.finish()...)
	}
	return sortByName(out)
}

// maxPIDFile bounds a pidfile's read: a pid and a newline, with room.
const maxPIDFile = 4096

// resolve finds the index of the tree's root process.
func (t TreeSpec) resolve(s *procwalk.Snapshot, self selfInfo) (int, map[string]string, error) {
	attrs := map[string]string{}
	pid := t.PID
	switch {
	case t.PIDFile != "":
		// A pidfile may sit in a directory another user controls (a
		// daemon's own): read it as such a file, never waiting on a FIFO.
		b, err := fsio.ReadUserFile(t.PIDFile, fsio.AnyOwner, maxPIDFile)
		if err != nil {
			return 0, nil, fmt.Errorf("pidfile: %w", err)
		}
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || v <= 0 {
			return 0, nil, fmt.Errorf("pidfile %s does not hold a pid", t.PIDFile)
		}
		pid = v
		attrs[AttrPIDFile] = t.PIDFile
	case t.Pattern != nil:
		best := -1
		for i := range s.Procs {
			p := &s.Procs[i]
			if p.Kernel || self.names(p, t.Pattern) {
				continue
			}
			subj := p.Comm
			if p.Read&procwalk.FieldCmdline != 0 && len(p.Cmdline) > 0 {
				subj = strings.Join(p.Cmdline, " ")
			}
			if t.Pattern.MatchString(subj) && (best < 0 || p.ID.StartTicks < s.Procs[best].ID.StartTicks) {
				best = i
			}
		}
		if best < 0 {
			return 0, nil, fmt.Errorf("no process matches %q", t.Pattern)
		}
		attrs[AttrPattern] = t.Pattern.String()
		return best, attrs, nil
	}
	i := s.Index(pid)
	if i < 0 || s.Procs[i].Kernel {
		return 0, nil, fmt.Errorf("no process %d", pid)
	}
	return i, attrs, nil
}

// ownProcFS reports whether fs is the procfs this process runs in: its
// "self" link names our pid, so it numbers processes as our pid namespace
// does.
func ownProcFS(fs procwalk.FS) bool {
	link, err := os.Readlink(fs.Path("self"))
	return err == nil && link == strconv.Itoa(os.Getpid())
}

// selfInfo describes this process when the snapshot is of the live /proc.
type selfInfo struct {
	pid       int
	ancestors map[int]bool
	args      []string
}

func (g *Grouper) selfPIDs(s *procwalk.Snapshot) selfInfo {
	if !g.liveFS {
		return selfInfo{} // a fixture, or another host's /proc
	}
	si := selfInfo{pid: os.Getpid(), ancestors: map[int]bool{}, args: os.Args[1:]}
	for _, a := range s.Ancestors(si.pid) {
		si.ancestors[a.ID.PID] = true
	}
	return si
}

// names reports whether p is this procwalk, or an ancestor (sudo, env, a
// wrapper) that passes on one of our arguments matching re: a pattern must
// not find the command that names it.
func (si selfInfo) names(p *procwalk.Process, re *regexp.Regexp) bool {
	if si.pid == 0 {
		return false
	}
	if p.ID.PID == si.pid {
		return true
	}
	if !si.ancestors[p.ID.PID] {
		return false
	}
	for _, arg := range p.Cmdline[min(1, len(p.Cmdline)):] {
		if slices.Contains(si.args, arg) && re.MatchString(arg) {
			return true
		}
	}
	return false
}
