//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// session.go is `procwalk session KIND:NAME`: one session's totals,
// attributes, tmux panes and member tree.

const sessionHelp = `Shows one session: its totals, its attributes, its tmux panes, and the
tree of its members (each with its own RSS, CPU % and command).

KIND:NAME is a reference as procwalk sessions prints it in KIND and NAME
(and in "ref" in JSON): tmux:build, sid:4242, tty:pts/3, user:alice,
cgroup:nginx.service, cgroup:pod/<uid>, agent:claude/myproj.
tree:SPEC needs no --tree: tree:1234 is the tree of pid 1234,
tree:/run/nginx.pid of the pid in that file, tree:postgres of the oldest
process whose command line matches "postgres".

An unknown kind is a bad argument (exit 2) and the message lists the
kinds; an unknown session is an error (exit 1) that names the sessions
closest to it ("did you mean"). Grouping flags are those of procwalk
sessions (see its help).

EXAMPLES
  procwalk session tmux:build                 a tmux session and its jobs
  procwalk session --pss agent:claude/myproj  an agent: transcript, model, context
  procwalk session cgroup:pod/<uid>           a pod against its limits
  procwalk session tree:/run/nginx.pid        the tree of a pid file's process
  procwalk session --json user:alice | jq '.session.members | length'

` + exitCodesHelp

type sessionCommand struct {
	g    *globals
	e    *env
	f    sessionFlags
	json bool
	wide bool
}

func newSessionCommand(g *globals, e *env) *ffcli.Command {
	c := &sessionCommand{g: g, e: e}
	fs := newFlagSet("session", g, e.stderr)
	c.f.register(fs)
	fs.BoolVar(&c.json, "json", false, "print one JSON object: the session as in procwalk sessions --json, with every member process")
	fs.BoolVar(&c.wide, "wide", false, "never cut lines to the terminal's width (or COLUMNS)")
	return &ffcli.Command{
		Name:       "session",
		ShortUsage: "procwalk session [flags] KIND:NAME",
		ShortHelp:  "show one session: totals, attributes, member tree",
		LongHelp:   sessionHelp,
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *sessionCommand) exec(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageErrorf("session takes one KIND:NAME, e.g. procwalk session tmux:build; got %d arguments", len(args))
	}
	ref := args[0]
	kind, name, err := session.ParseRef(ref)
	switch {
	case err != nil: // an unknown kind: the message lists them
		return usageErrorf("%v", err)
	}
	users, _ := c.g.users() // unreadable passwd: sessions named by uid
	cfg, err := c.f.groupConfig([]string{kind}, users)
	if err != nil {
		return err
	}
	if base, _, ok := session.SplitRefID(name); ok && kind == session.KindTree {
		name = base // tree:1234@ID: build the tree, let Find check the ID
	}
	if kind == session.KindTree && !slices.ContainsFunc(cfg.Trees, func(t session.TreeSpec) bool { return t.Name == name }) {
		// tree:1234, tree:/run/x.pid, tree:postgres need no --tree.
		spec, err := session.ParseTreeSpec(name)
		if err != nil {
			return usageErrorf("%s: %v", ref, err)
		}
		spec.Name = name
		cfg.Trees = append(cfg.Trees, spec)
	}
	// The member tree shows users and command lines; the totals IO.
	gd, err := gatherSessions(ctx, c.g, &c.f, cfg, procwalk.FieldOwner|procwalk.FieldSwap|procwalk.FieldCmdline|procwalk.FieldIO)
	if err != nil {
		return err
	}
	s, err := session.Find(gd.Sessions, ref)
	if err != nil {
		// One line for one failure: the grouping notes say why none
		// matched ("no tmux server", "no process matches").
		if len(gd.Notes) > 0 {
			return fmt.Errorf("%w (%s)", err, strings.Join(gd.Notes, "; "))
		}
		return err
	}
	if c.g.pss {
		if err := readMembersSmaps(gd, s); err != nil {
			return err
		}
	}
	gd.pipeline.Grouper().PaneForegrounds(gd.Snapshot, s)
	if c.json {
		err = c.writeJSON(gd, s)
	} else {
		err = c.write(gd, s)
	}
	if err != nil {
		return err
	}
	writeNotes(c.e.stderr, gd)
	return nil
}

// readMembersSmaps reads smaps_rollup of s's members alone (each read
// takes the target's mmap lock) and adds their PSS and USS to s's totals.
// PSS growth needs smaps in both samples: the session view has none.
func readMembersSmaps(gd gathered, s *session.Session) error {
	members := make([]*procwalk.Process, 0, len(s.Members))
	for _, id := range s.Members {
		if p := gd.Snapshot.Lookup(id); p != nil {
			members = append(members, p)
		}
	}
	if err := gd.ReadMore(members, procwalk.FieldSmaps); err != nil {
		return err
	}
	for _, p := range members {
		s.Totals.AddSmaps(p)
	}
	return nil
}

func (c *sessionCommand) writeJSON(gd gathered, s *session.Session) error {
	j := newJSONSession(gd.Snapshot.Time, gd.Snapshot.Fields, s)
	metrics := metric.Processes()
	for _, id := range s.Members {
		if p := gd.Snapshot.Lookup(id); p != nil {
			j.Processes = append(j.Processes, newJSONProcess(gd.Snapshot, p, gd.users, metrics))
		}
	}
	all := newJSONSessions(gd)
	doc := struct {
		Time            time.Time      `json:"time"`
		ScanSeconds     float64        `json:"scan_seconds"`
		IntervalSeconds float64        `json:"interval_seconds,omitempty"`
		Visibility      jsonVisibility `json:"visibility"`
		Notes           []string       `json:"notes"`
		Session         jsonSession    `json:"session"`
	}{all.Time, all.ScanSeconds, all.IntervalSeconds, all.Visibility, all.Notes, j}
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func (c *sessionCommand) write(gd gathered, s *session.Session) error {
	w := c.e.stdout
	t := s.Totals
	fmt.Fprintf(w, "%s\n", printable(s.Ref()))
	kv := &table{cols: []column{{header: ""}, {header: ""}}}
	if s.ID() != "" {
		kv.add("ref", printable(s.RefID())+" (kill --session refuses it once the name passes to another session)")
	}
	kv.add("processes", fmt.Sprintf("%d (%s, %s, %s)", t.Procs, countOf(len(s.Roots), "root", "roots"),
		countOf(t.Threads, "thread", "threads"), countOf(t.Zombies, "zombie", "zombies")))
	cell := func(name string) string {
		d, _ := metric.Lookup(name)
		return sessionCell(&d, s, gd.Snapshot.Fields, gd.Snapshot.Time)
	}
	mem := "RSS " + cell("rss_bytes") + " (shared pages counted once per member)"
	if t.SmapsRead > 0 {
		mem += ", PSS " + cell("pss_bytes") + ", USS " + cell("uss_bytes")
	}
	mem += ", swap " + cell("swap_bytes")
	kv.add("memory", mem)
	if t.RatesMeasured > 0 {
		kv.add("memory growth", cell("rss_growth_bytes_per_minute")+"/min RSS")
	}
	cpu := cell("cpu_time_seconds") + " used by members while members"
	if t.RatesMeasured > 0 {
		cpu = cell("cpu_percent") + "% of one core now, " + cpu
	}
	kv.add("cpu", cpu)
	if t.IORead > 0 {
		io := fmt.Sprintf("read %s, written %s", cell("read_bytes"), cell("write_bytes"))
		if t.RatesMeasured > 0 {
			io += fmt.Sprintf(" (now %s/s, %s/s)", cell("read_bytes_per_second"), cell("write_bytes_per_second"))
		}
		if t.IORead < t.Procs {
			io += fmt.Sprintf("; %d of %d members readable (root sees all)", t.IORead, t.Procs)
		}
		kv.add("io", io)
	}
	kv.add("oldest", fmt.Sprintf("%s, %s ago", t.OldestStart.In(gd.Snapshot.Time.Location()).Format("2006-01-02 15:04:05"), formatDuration(gd.Snapshot.Time.Sub(t.OldestStart))))
	if u := t.Cgroup; u != nil {
		line := strings.Join(u.Describe(), ", ")
		if u.MemoryLimitPath != "" {
			line += "; memory limit set by " + u.MemoryLimitPath
		}
		if u.CPUQuotaPath != "" {
			line += "; cpu quota set by " + u.CPUQuotaPath
		}
		kv.add("cgroup v"+strconv.Itoa(u.Version), line)
	}
	if a := s.Agent; a != nil {
		addAgentLines(kv, s, a, gd.Snapshot.Time)
	}
	width := c.e.outputWidth(w, c.wide)
	if err := writeBlock(w, kv, width); err != nil {
		return err
	}

	if len(s.Attrs) > 0 {
		fmt.Fprintln(w, "\nATTRIBUTES")
		keys := make([]string, 0, len(s.Attrs))
		for k := range s.Attrs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		at := &table{cols: []column{{header: ""}, {header: ""}}}
		for _, k := range keys {
			at.add(k, printable(s.Attrs[k]))
		}
		if err := writeBlock(w, at, width); err != nil {
			return err
		}
	}

	if len(s.Panes) > 0 {
		fmt.Fprintln(w, "\nPANES")
		pt := &table{cols: []column{{header: "TARGET", min: 12}, {header: "ID"}, {header: "PID", right: true}, {header: "TTY", drop: 1}, {header: "COMMAND", min: 12}, {header: "CWD", min: 12}}}
		for _, p := range s.Panes {
			cmd := printable(p.Command)
			if p.Dead {
				cmd += " (dead)"
			}
			pt.add(printable(p.Target), p.PaneID, strconv.Itoa(p.PID), p.TTY, cmd, printable(p.Cwd))
		}
		if err := pt.write(w, width); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\nMEMBERS")
	return c.memberTree(gd, s)
}

// memberTree draws the members as a tree: each root, then its descendants
// that are members (a non-member in between breaks the line: its member
// descendants start a root of their own).
func (c *sessionCommand) memberTree(gd gathered, s *session.Session) error {
	snap := gd.Snapshot
	member := make(map[procwalk.ProcID]bool, len(s.Members))
	for _, id := range s.Members {
		member[id] = true
	}
	t := &table{cols: []column{{header: "PID", right: true}, {header: "USER"}, {header: "RSS", right: true}}}
	if c.g.pss {
		t.cols = append(t.cols, column{header: "PSS", right: true})
	}
	t.cols = append(t.cols, column{header: "CPU%", right: true}, column{header: "TIME", right: true}, column{header: "COMMAND"})
	var draw func(p *procwalk.Process, branch, indent string)
	draw = func(p *procwalk.Process, branch, indent string) {
		user := notMeasured
		if p.Read&procwalk.FieldOwner != 0 {
			user = gd.users.Name(p.EffectiveUID)
		}
		row := []string{strconv.Itoa(p.ID.PID), user, formatBytes(p.RSSBytes)}
		if c.g.pss {
			row = append(row, ownPSS(p))
		}
		cpu := notMeasured
		if p.Rates.Measured {
			cpu = formatPercent(p.Rates.CPUPercent)
		}
		t.add(append(row, cpu, formatSeconds(p.CPUSeconds()), branch+printable(commandLine(p)))...)
		var kids []*procwalk.Process
		for _, k := range snap.Children(p.ID.PID) {
			if member[k.ID] {
				kids = append(kids, k)
			}
		}
		for i, k := range kids {
			if i == len(kids)-1 {
				draw(k, indent+"└─ ", indent+"   ")
			} else {
				draw(k, indent+"├─ ", indent+"│  ")
			}
		}
	}
	for _, id := range s.Roots {
		if p := snap.Lookup(id); p != nil {
			draw(p, "", "")
		}
	}
	return t.print(c.e, c.e.stdout, c.wide)
}

// writeBlock writes a two-column key/value table without its (empty)
// header line, indented. Given a width (0: none), a long value wraps under
// itself, at spaces and after commas: values are data, never cut.
func writeBlock(w io.Writer, t *table, width int) error {
	keyWidth := 0
	for _, row := range t.rows {
		keyWidth = max(keyWidth, textwidth.Width(row[0]))
	}
	indent := strings.Repeat(" ", 2+keyWidth+2)
	bw := bufio.NewWriter(w)
	for _, row := range t.rows {
		lines := []string{row[1]}
		if room := width - len(indent); width > 0 && room >= 20 {
			lines = textwidth.Wrap(row[1], room)
		}
		pad := strings.Repeat(" ", keyWidth-textwidth.Width(row[0]))
		bw.WriteString(strings.TrimRight("  "+row[0]+pad+"  "+lines[0], " ") + "\n")
		for _, l := range lines[1:] {
			bw.WriteString(indent + l + "\n")
		}
	}
	return bw.Flush()
}

// formatSigned prints a byte rate with its sign: "+1.5 MiB", "-12.0 KiB".
func formatSigned(bytes float64) string {
	if bytes < 0 {
		return "-" + formatBytes(uint64(-bytes))
	}
	return "+" + formatBytes(uint64(bytes))
}

// addAgentLines says what an agent's transcript and processes tell.
func addAgentLines(kv *table, s *session.Session, a *session.AgentState, now time.Time) {
	kv.add("status", fmt.Sprintf("%s for %s: %s", a.Status, formatDuration(a.StatusFor), a.Why))
	t := a.Transcript
	if t == nil {
		why := "none found"
		if a.TranscriptError != "" {
			why = "unreadable: " + a.TranscriptError
		}
		kv.add("transcript", printable(why))
		return
	}
	if t.Model != "" {
		kv.add("model", printable(t.Model))
	}
	if t.ContextUsedTokens > 0 {
		ctx := fmt.Sprintf("%d tokens", t.ContextUsedTokens)
		if a.ContextWindowTokens > 0 {
			ctx += fmt.Sprintf(" of %d (%s%%)", a.ContextWindowTokens, formatPercent(a.ContextPercent))
		}
		kv.add("context", ctx)
	}
	partial := ""
	if t.SkippedBytes > 0 {
		// A bounded first read (--agent-first-read): say so beside the sums.
		partial = fmt.Sprintf(" (partial: of the part read; %s of the transcript was not)", formatBytes(uint64(t.SkippedBytes)))
	}
	kv.add("tokens", fmt.Sprintf("input %d, output %d, cache read %d, cache creation %d", t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheCreationTokens)+partial)
	kv.add("turns", fmt.Sprintf("%d, last entry %s, tool uses awaiting results: %d", t.Turns, t.Last, t.PendingTools)+partial)
	if !t.LastActivity.IsZero() {
		kv.add("last activity", fmt.Sprintf("%s, %s ago", t.LastActivity.In(now.Location()).Format("2006-01-02 15:04:05"), formatDuration(now.Sub(t.LastActivity))))
	}
	tr := printable(t.Path) + fmt.Sprintf(" (%d bytes read", t.Bytes-t.SkippedBytes)
	if t.SkippedBytes > 0 {
		tr += fmt.Sprintf(" of %d, %d not", t.Bytes, t.SkippedBytes)
	}
	if n := t.Malformed + t.Oversized; n > 0 {
		tr += fmt.Sprintf(", %d lines skipped", n)
	}
	kv.add("transcript", tr+")")
}
