//go:build linux

package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// session.go is procwalk session's page: one session in detail.

// SessionDetail writes s, of snap, as procwalk session shows it: its
// totals and what its kind knows (cgroup, agent), its attributes, its tmux
// panes, and its members as a tree; users names their owners, pss adds a
// PSS column, width is the output's (0: unlimited).
func SessionDetail(w io.Writer, snap *procwalk.Snapshot, s *session.Session, users *procwalk.Users, pss bool, width int) error {
	t := s.Totals
	fmt.Fprintf(w, "%s\n", procwalk.Printable(s.Ref()))
	kv := &Table{Cols: []Column{{Header: ""}, {Header: ""}}}
	if s.ID() != "" {
		kv.Add("ref", procwalk.Printable(s.RefID())+" (kill --session refuses it once the name passes to another session)")
	}
	kv.Add("processes", fmt.Sprintf("%d (%s, %s, %s)", t.Procs, CountOf(len(s.Roots), "root", "roots"),
		CountOf(t.Threads, "thread", "threads"), CountOf(t.Zombies, "zombie", "zombies")))
	cell := func(name string) string {
		d, _ := metric.Lookup(name)
		return SessionCell(&d, s, snap.Fields, snap.Time)
	}
	mem := "RSS " + cell("rss_bytes") + " (shared pages counted once per member)"
	if t.SmapsRead > 0 {
		mem += ", PSS " + cell("pss_bytes") + ", USS " + cell("uss_bytes")
	}
	mem += ", swap " + cell("swap_bytes")
	kv.Add("memory", mem)
	if t.RatesMeasured > 0 {
		kv.Add("memory growth", cell("rss_growth_bytes_per_minute")+"/min RSS")
	}
	cpu := cell("cpu_time_seconds") + " used by members while members"
	if t.RatesMeasured > 0 {
		cpu = cell("cpu_percent") + "% of one core now, " + cpu
	}
	kv.Add("cpu", cpu)
	if t.IORead > 0 {
		io := fmt.Sprintf("read %s, written %s", cell("read_bytes"), cell("write_bytes"))
		if t.RatesMeasured > 0 {
			io += fmt.Sprintf(" (now %s/s, %s/s)", cell("read_bytes_per_second"), cell("write_bytes_per_second"))
		}
		if t.IORead < t.Procs {
			io += fmt.Sprintf("; %d of %d members readable (root sees all)", t.IORead, t.Procs)
		}
		kv.Add("io", io)
	}
	kv.Add("oldest", fmt.Sprintf("%s, %s ago", t.OldestStart.In(snap.Time.Location()).Format("2006-01-02 15:04:05"), Duration(snap.Time.Sub(t.OldestStart))))
	if u := t.Cgroup; u != nil {
		line := strings.Join(u.Describe(), ", ")
		if u.MemoryLimitPath != "" {
			line += "; memory limit set by " + u.MemoryLimitPath
		}
		if u.CPUQuotaPath != "" {
			line += "; cpu quota set by " + u.CPUQuotaPath
		}
		kv.Add("cgroup v"+strconv.Itoa(u.Version), line)
	}
	if a := s.Agent; a != nil {
		addAgentLines(kv, s, a, snap.Time)
	}
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
		at := &Table{Cols: []Column{{Header: ""}, {Header: ""}}}
		for _, k := range keys {
			at.Add(k, procwalk.Printable(s.Attrs[k]))
		}
		if err := writeBlock(w, at, width); err != nil {
			return err
		}
	}

	if len(s.Panes) > 0 {
		fmt.Fprintln(w, "\nPANES")
		pt := &Table{Cols: []Column{{Header: "TARGET", Min: 12}, {Header: "ID"}, {Header: "PID", Right: true}, {Header: "TTY", Drop: 1}, {Header: "COMMAND", Min: 12}, {Header: "CWD", Min: 12}}}
		for _, p := range s.Panes {
			cmd := procwalk.Printable(p.Command)
			if p.Dead {
				cmd += " (dead)"
			}
			pt.Add(procwalk.Printable(p.Target), p.PaneID, strconv.Itoa(p.PID), p.TTY, cmd, procwalk.Printable(p.Cwd))
		}
		if err := pt.Write(w, width); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\nMEMBERS")
	return memberTree(w, snap, s, users, pss, width)
}

// memberTree draws the members as a tree: each root, then its descendants
// that are members (a non-member in between breaks the line: its member
// descendants start a root of their own).
func memberTree(w io.Writer, snap *procwalk.Snapshot, s *session.Session, users *procwalk.Users, pss bool, width int) error {
	member := make(map[procwalk.ProcID]bool, len(s.Members))
	for _, id := range s.Members {
		member[id] = true
	}
	t := &Table{Cols: []Column{{Header: "PID", Right: true}, {Header: "USER"}, {Header: "RSS", Right: true}}}
	if pss {
		t.Cols = append(t.Cols, Column{Header: "PSS", Right: true})
	}
	t.Cols = append(t.Cols, Column{Header: "CPU%", Right: true}, Column{Header: "TIME", Right: true}, Column{Header: "COMMAND"})
	var draw func(p *procwalk.Process, branch, indent string)
	draw = func(p *procwalk.Process, branch, indent string) {
		user := NotMeasured
		if p.Read&procwalk.FieldOwner != 0 {
			user = users.Name(p.EffectiveUID)
		}
		row := []string{strconv.Itoa(p.ID.PID), user, Bytes(p.RSSBytes)}
		if pss {
			row = append(row, OwnPSS(p))
		}
		cpu := NotMeasured
		if p.Rates.Measured {
			cpu = Percent(p.Rates.CPUPercent)
		}
		t.Add(append(row, cpu, Seconds(p.CPUSeconds()), branch+CommandLine(p))...)
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
	return t.Write(w, width)
}

// writeBlock writes a two-column key/value table without its (empty)
// header line, indented. Given a width (0: none), a long value wraps under
// itself, at spaces and after commas: values are data, never cut.
func writeBlock(w io.Writer, t *Table, width int) error {
	keyWidth := 0
	for _, row := range t.Rows {
		keyWidth = max(keyWidth, textwidth.Width(row[0]))
	}
	indent := strings.Repeat(" ", 2+keyWidth+2)
	bw := bufio.NewWriter(w)
	for _, row := range t.Rows {
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

// addAgentLines says what an agent's transcript and processes tell.
func addAgentLines(kv *Table, s *session.Session, a *session.AgentState, now time.Time) {
	status := a.Status
	if a.StatusFor > 0 { // 0: entered at this gather, as far as this run saw (a one-shot session's first look)
		status += " for " + Duration(a.StatusFor)
	}
	kv.Add("status", status+": "+procwalk.Printable(a.Why)) // Why may quote the transcript's error text
	switch {
	case a.Binding == session.BindAmbiguous:
		kv.Add("binding", procwalk.Printable("ambiguous: one of "+strings.Join(a.Candidates, ", ")+"; none read"))
	case a.Binding != "":
		kv.Add("binding", "by "+a.Binding)
	}
	for _, f := range a.Skipped {
		kv.Add("skipped", procwalk.Printable(f.Path+": "+f.Why))
	}
	if a.SkippedMore > 0 {
		kv.Add("skipped", fmt.Sprintf("%d more files", a.SkippedMore))
	}
	t := a.Transcript
	if t == nil {
		why := "none found"
		if a.TranscriptError != "" {
			why = "unreadable: " + a.TranscriptError
		}
		kv.Add("transcript", procwalk.Printable(why))
		return
	}
	if t.Model != "" {
		kv.Add("model", procwalk.Printable(t.Model))
	}
	var about []string
	for _, f := range [][2]string{{"title", t.Title}, {"branch", t.GitBranch}, {"version", t.Version}, {"permission mode", t.PermissionMode}} {
		if f[1] != "" {
			about = append(about, f[0]+" "+f[1])
		}
	}
	if len(about) > 0 {
		kv.Add("session", procwalk.Printable(strings.Join(about, ", ")))
	}
	if t.ContextUsedTokens > 0 {
		ctx := fmt.Sprintf("%d tokens", t.ContextUsedTokens)
		if a.ContextWindowTokens > 0 {
			ctx += fmt.Sprintf(" of %d (%s%%)", a.ContextWindowTokens, Percent(a.ContextPercent))
		}
		kv.Add("context", ctx)
	}
	partial := ""
	if t.SkippedBytes > 0 {
		// A bounded first read (--agent-first-read): say so beside the sums.
		partial = fmt.Sprintf(" (partial: of the part read; %s of the transcript was not)", Bytes(uint64(t.SkippedBytes)))
	}
	all := a.Tokens()
	kv.Add("tokens", fmt.Sprintf("input %d, output %d, cache read %d, cache creation %d", all.InputTokens, all.OutputTokens, all.CacheReadTokens, all.CacheCreationTokens)+partial)
	if a.Subagents > 0 {
		st := a.SubagentTokens
		kv.Add("subagents", fmt.Sprintf("%d (%d working), their tokens: input %d, output %d, cache read %d, cache creation %d",
			a.Subagents, a.SubagentsWorking, st.InputTokens, st.OutputTokens, st.CacheReadTokens, st.CacheCreationTokens))
	}
	turns := fmt.Sprintf("%d, last entry %s, tool uses awaiting results: %d", t.Turns, t.Last, t.PendingTools)
	if t.Compactions > 0 {
		turns += fmt.Sprintf(", compactions: %d", t.Compactions)
	}
	kv.Add("turns", turns+partial)
	switch {
	case a.HaveCost:
		kv.Add("cost", fmt.Sprintf("$%.4f", a.CostUSD)+partial)
	case len(a.Unpriced) > 0:
		kv.Add("cost", procwalk.Printable("unknown: no price for "+strings.Join(a.Unpriced, ", ")))
	}
	if t.HaveRateLimits {
		kv.Add("rate limits", fmt.Sprintf("primary %s%%, secondary %s%% used", Percent(t.RateLimitPrimaryPercent), Percent(t.RateLimitSecondaryPercent)))
	}
	if t.APIErrors > 0 {
		kv.Add("api errors", procwalk.Printable(fmt.Sprintf("%d, the last %s at %s, %s ago", t.APIErrors, t.LastError,
			t.LastErrorAt.In(now.Location()).Format("2006-01-02 15:04:05"), Duration(now.Sub(t.LastErrorAt)))))
	}
	if !t.LastActivity.IsZero() {
		kv.Add("last activity", fmt.Sprintf("%s, %s ago", t.LastActivity.In(now.Location()).Format("2006-01-02 15:04:05"), Duration(now.Sub(t.LastActivity))))
	}
	tr := procwalk.Printable(t.Path) + fmt.Sprintf(" (%d bytes read", t.Bytes-t.SkippedBytes)
	if t.SkippedBytes > 0 {
		tr += fmt.Sprintf(" of %d, %d not", t.Bytes, t.SkippedBytes)
	}
	if n := t.Malformed + t.Oversized; n > 0 {
		tr += fmt.Sprintf(", %d lines skipped", n)
	}
	kv.Add("transcript", tr+")")
}

// CountOf is "1 thing" or "N things".
func CountOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// OwnPSS is a process's PSS, or "-" when it has none or it was not read.
func OwnPSS(p *procwalk.Process) string {
	if p.Read&procwalk.FieldSmaps == 0 {
		return NotMeasured
	}
	return Bytes(p.Smaps.PSSBytes)
}
