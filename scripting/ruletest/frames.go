//go:build linux

package ruletest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// frames.go turns the "at" blocks of a test into Frames: each block
// changes the processes and sessions of the one before it; rates are
// measured between frames by procwalk's Sampler, as live, unless a line
// sets one; sessions hold the processes written under them and their
// descendants, their totals and cumulative counters made as a Grouper's.

// start is the time of a described test's first frame (2026-01-01 00:00
// UTC): a fixed date, so that what a rule prints of times is the same
// every day.
func start() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// bootBefore is how long the described host has been up at the first
// frame.
const bootBefore = 24 * time.Hour

// defaultContextWindow is an agent's context window when a test gives a
// context_percent alone: Claude's 200,000 tokens.
const defaultContextWindow = 200_000

// clockTicks is the described host's USER_HZ.
const clockTicks = 100

// world is the described host between frames.
type world struct {
	t        *Test
	procs    map[int]*wproc
	sessions []*wsession
	sampler  procwalk.Sampler
	counters session.Counters
}

// wproc is a described process, with the rates a line set by hand.
type wproc struct {
	p     procwalk.Process
	rates map[string]float64 // cpu, growth, read_rate, write_rate ...
}

// wsession is a described session: the pids written under it (with their
// descendants, its members), its attributes, agent state and limits.
type wsession struct {
	kind, name string
	attrs      map[string]string
	pids       []int
	agent      *session.AgentState
	since      time.Time // agent: status since
	cgroup     *session.CgroupUsage
}

// buildFrames returns the test's frames.
func buildFrames(t *Test) ([]frame.Frame, error) {
	w := &world{t: t, procs: map[int]*wproc{}}
	var out []frame.Frame
	for i := range t.Frames {
		fs := &t.Frames[i]
		now := start().Add(fs.at)
		if err := w.apply(fs, now); err != nil {
			return nil, err
		}
		out = append(out, w.frame(now))
	}
	return out, nil
}

func (w *world) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, w.t.Path, line, fmt.Sprintf(format, args...))
}

// apply reads one frame's lines.
func (w *world) apply(fs *frameSpec, now time.Time) error {
	type open struct {
		indent int
		pid    int // 0: a session line
		sess   *wsession
	}
	var stack []open
	for _, st := range fs.lines {
		for len(stack) > 0 && stack[len(stack)-1].indent >= st.indent {
			stack = stack[:len(stack)-1]
		}
		var parent, sess = 0, (*wsession)(nil)
		for i := len(stack) - 1; i >= 0; i-- {
			if parent == 0 && stack[i].pid != 0 {
				parent = stack[i].pid
			}
			if sess == nil && stack[i].sess != nil {
				sess = stack[i].sess
			}
		}
		switch st.kind {
		case "exit":
			if w.procs[st.pid] == nil {
				return w.errorf(st.line, "exit %d: no such process", st.pid)
			}
			delete(w.procs, st.pid)
			for _, c := range w.procs {
				if c.p.PPID == st.pid {
					c.p.PPID = 1 // orphans go to init, as the kernel does
				}
			}
		case "session":
			s, err := w.session(st, now)
			if err != nil {
				return err
			}
			stack = append(stack, open{indent: st.indent, sess: s})
		case "proc":
			if err := w.process(st, parent, sess, now); err != nil {
				return err
			}
			stack = append(stack, open{indent: st.indent, pid: st.pid})
		}
	}
	return nil
}

// session creates or changes a session.
func (w *world) session(st statement, now time.Time) (*wsession, error) {
	kind, name, _ := strings.Cut(st.ref, ":")
	if !slices.Contains(session.Kinds(), kind) {
		return nil, w.errorf(st.line, "session %s: unknown kind %q; kinds are %s", st.ref, kind, strings.Join(session.Kinds(), ", "))
	}
	var s *wsession
	for _, old := range w.sessions {
		if old.kind == kind && old.name == name {
			s = old
		}
	}
	if s == nil {
		s = &wsession{kind: kind, name: name, attrs: map[string]string{}}
		w.sessions = append(w.sessions, s)
	}
	for _, kv := range st.keys {
		if err := s.set(kv, now); err != nil {
			return nil, w.errorf(st.line, "session %s %s=%s: %v", st.ref, kv.key, kv.value, err)
		}
	}
	return s, nil
}

// set reads one key of a session line: an agent's state, a cgroup's
// usage and limits, else an attribute (s.attrs.KEY).
func (s *wsession) set(kv keyValue, now time.Time) error {
	num := func() (float64, error) { return strconv.ParseFloat(kv.value, 64) }
	agent := func() *session.AgentState {
		if s.agent == nil {
			s.agent = &session.AgentState{Transcript: &session.Transcript{}}
		}
		return s.agent
	}
	cg := func() *session.CgroupUsage {
		if s.cgroup == nil {
			s.cgroup = &session.CgroupUsage{Version: 2}
		}
		return s.cgroup
	}
	var err error
	switch kv.key {
	case "status":
		a := agent()
		if a.Status != kv.value {
			s.since = now
		}
		a.Status = kv.value
		s.attrs[session.AttrStatus] = kv.value
	case "status_for":
		var d time.Duration
		if d, err = parseTime(kv.value); err == nil {
			agent()
			s.since = now.Add(-d)
		}
	case "why":
		agent().Why = kv.value
	case "model":
		agent().Transcript.Model = kv.value
		s.attrs[session.AttrModel] = kv.value
	case "context_percent":
		agent().ContextPercent, err = num()
	case "context_window":
		var n float64
		n, err = num()
		agent().ContextWindowTokens = int64(n)
	case "context_used":
		var n float64
		n, err = num()
		agent().Transcript.ContextUsedTokens = int64(n)
	case "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "turns", "pending_tools":
		var n float64
		n, err = num()
		tr := agent().Transcript
		switch kv.key {
		case "input_tokens":
			tr.InputTokens = int64(n)
		case "output_tokens":
			tr.OutputTokens = int64(n)
		case "cache_read_tokens":
			tr.CacheReadTokens = int64(n)
		case "cache_creation_tokens":
			tr.CacheCreationTokens = int64(n)
		case "turns":
			tr.Turns = int(n)
		case "pending_tools":
			tr.PendingTools = int(n)
		}
	case "memory_limit", "memory_usage":
		var n uint64
		n, err = parseSize(kv.value)
		c := cg()
		if kv.key == "memory_limit" {
			c.MemoryLimitBytes = n
		} else {
			c.MemoryUsageBytes, c.HaveMemoryUsage = n, true
		}
	case "cpu_quota":
		cg().CPUQuotaCores, err = num()
	default:
		s.attrs[kv.key] = kv.value
	}
	return err
}

// process creates or changes a process; parent is the process line above
// it in the block (0: none), sess the session line it is under.
func (w *world) process(st statement, parent int, sess *wsession, now time.Time) error {
	wp := w.procs[st.pid]
	if wp == nil {
		if st.comm == "" {
			return w.errorf(st.line, "process %d is new: give its name, as in '%d bash'", st.pid, st.pid)
		}
		ppid := parent
		if ppid == 0 && st.pid != 1 {
			ppid = 1
		}
		wp = &wproc{rates: map[string]float64{}}
		wp.p = procwalk.Process{ID: procwalk.ProcID{PID: st.pid}, PPID: ppid, PGRP: st.pid, SID: st.pid, State: 'S', Threads: 1,
			Comm: st.comm, Cmdline: []string{st.comm}, Start: now, Read: procwalk.AllFields}
		if parent != 0 {
			if pp := w.procs[parent]; pp != nil {
				wp.p.PGRP, wp.p.SID, wp.p.RealUID, wp.p.EffectiveUID = pp.p.PGRP, pp.p.SID, pp.p.RealUID, pp.p.EffectiveUID
			}
		}
		w.procs[st.pid] = wp
	} else if st.comm != "" {
		wp.p.Comm = st.comm
	}
	if parent != 0 && wp.p.PPID != parent {
		wp.p.PPID = parent
	}
	if sess != nil && !slices.Contains(sess.pids, st.pid) {
		sess.pids = append(sess.pids, st.pid)
	}
	for _, kv := range st.keys {
		if err := w.setProcess(wp, kv, now); err != nil {
			return w.errorf(st.line, "process %d %s=%s: %v", st.pid, kv.key, kv.value, err)
		}
	}
	// A start time is whole clock ticks after boot, as the kernel has it.
	ticks := uint64(wp.p.Start.Sub(start().Add(-bootBefore)) / (time.Second / clockTicks))
	wp.p.ID.StartTicks = ticks
	wp.p.Start = start().Add(-bootBefore).Add(time.Duration(ticks) * (time.Second / clockTicks))
	return nil
}

// processKeys are the keys of a process line, for errors.
func processKeys() []string {
	return []string{"ppid", "pgrp", "sid", "tty", "comm", "cmdline", "exe", "cwd", "cgroup", "user", "uid", "state", "threads", "kernel",
		"rss", "vsize", "shared", "swap", "pss", "uss", "cpu_time", "read_bytes", "write_bytes", "fds", "oom_score", "age",
		"cpu", "growth", "read_rate", "write_rate"}
}

// setProcess reads one key of a process line.
func (w *world) setProcess(wp *wproc, kv keyValue, now time.Time) error {
	p := &wp.p
	size := func(dst *uint64) error {
		n, err := parseSize(kv.value)
		*dst = n
		return err
	}
	integer := func(dst *int) error {
		n, err := strconv.Atoi(kv.value)
		*dst = n
		return err
	}
	switch kv.key {
	case "ppid":
		return integer(&p.PPID)
	case "pgrp":
		return integer(&p.PGRP)
	case "sid":
		return integer(&p.SID)
	case "tty":
		return integer(&p.TTY)
	case "comm":
		p.Comm = kv.value
	case "cmdline":
		p.Cmdline = strings.Fields(kv.value)
	case "exe":
		p.Exe = kv.value
	case "cwd":
		p.Cwd = kv.value
	case "cgroup":
		p.Cgroups = []procwalk.CgroupLine{{HierarchyID: 0, Path: kv.value}}
	case "user":
		uid, ok := w.t.Users[kv.value]
		if !ok {
			return fmt.Errorf("no such user: add a line 'user %s UID'", kv.value)
		}
		p.RealUID, p.EffectiveUID = uid, uid
	case "uid":
		if err := integer(&p.EffectiveUID); err != nil {
			return err
		}
		p.RealUID = p.EffectiveUID
	case "state":
		if len(kv.value) != 1 {
			return fmt.Errorf("one letter: R S D Z T I")
		}
		p.State = kv.value[0]
	case "threads":
		return integer(&p.Threads)
	case "kernel":
		p.Kernel = kv.value == "true"
	case "rss":
		return size(&p.RSSBytes)
	case "vsize":
		return size(&p.VSizeBytes)
	case "shared":
		return size(&p.SharedBytes)
	case "swap":
		return size(&p.SwapBytes)
	case "pss", "uss":
		p.Read |= procwalk.FieldSmaps
		if kv.key == "pss" {
			return size(&p.Smaps.PSSBytes)
		}
		return size(&p.Smaps.USSBytes)
	case "read_bytes":
		return size(&p.IO.ReadBytes)
	case "write_bytes":
		return size(&p.IO.WriteBytes)
	case "cpu_time":
		d, err := parseSeconds(kv.value)
		p.UserCPUSeconds, p.SystemCPUSeconds = d, 0
		return err
	case "fds":
		return integer(&p.FDs)
	case "oom_score":
		return integer(&p.OOMScore)
	case "age":
		d, err := parseTime(kv.value)
		p.Start = now.Add(-d)
		return err
	case "cpu", "growth", "read_rate", "write_rate":
		var v float64
		var err error
		if kv.key == "cpu" {
			v, err = strconv.ParseFloat(strings.TrimSuffix(kv.value, "%"), 64)
		} else {
			var n uint64
			n, err = parseSize(strings.TrimPrefix(kv.value, "-"))
			v = float64(n)
			if strings.HasPrefix(kv.value, "-") {
				v = -v
			}
		}
		wp.rates[kv.key] = v
		return err
	default:
		return fmt.Errorf("unknown key; a process takes %s", strings.Join(processKeys(), ", "))
	}
	return nil
}

// frame makes the frame of the world at now: the snapshot (rates from the
// Sampler, then those set by hand), the sessions.
func (w *world) frame(now time.Time) frame.Frame {
	procs := make([]procwalk.Process, 0, len(w.procs))
	for _, wp := range w.procs {
		procs = append(procs, wp.p)
	}
	host := procwalk.Host{BootTime: start().Add(-bootBefore), ClockTicks: clockTicks, PageSizeBytes: 4096, MemTotalBytes: w.t.Host.memBytes, CPUs: w.t.Host.cpus}
	snap := procwalk.NewSnapshot(host, procwalk.AllFields, 0, procs, procwalk.Visibility{Listed: len(procs)})
	snap.Time, snap.Source = now, procwalk.SourceProc
	w.sampler.Observe(snap)
	for i := range snap.Procs {
		p := &snap.Procs[i]
		r := w.procs[p.ID.PID].rates
		if len(r) == 0 {
			continue
		}
		if !p.Rates.Measured {
			p.Rates = procwalk.Rates{Measured: true, IntervalSeconds: 0}
		}
		if v, ok := r["cpu"]; ok {
			p.Rates.CPUPercent = v
		}
		if v, ok := r["growth"]; ok {
			p.Rates.RSSGrowthBytesPerMinute = v
		}
		if v, ok := r["read_rate"]; ok {
			p.Rates.ReadBytesPerSecond, p.Rates.HaveIO = v, true
		}
		if v, ok := r["write_rate"]; ok {
			p.Rates.WriteBytesPerSecond, p.Rates.HaveIO = v, true
		}
	}
	var sessions []session.Session
	for _, ws := range w.sessions {
		var members []procwalk.ProcID
		seen := map[int]bool{}
		for _, pid := range ws.pids {
			p := snap.Process(pid)
			if p == nil || seen[pid] {
				continue
			}
			seen[pid] = true
			members = append(members, p.ID)
			for _, d := range snap.Descendants(pid) {
				if !seen[d.ID.PID] {
					seen[d.ID.PID] = true
					members = append(members, d.ID)
				}
			}
		}
		if len(members) == 0 && ws.agent == nil {
			continue // a session whose processes all exited is gone
		}
		s := session.Build(snap, ws.kind, ws.name, maps.Clone(ws.attrs), members)
		if ws.agent != nil {
			a := *ws.agent
			tr := *a.Transcript
			a.Transcript = &tr
			a.StatusSince = ws.since
			if !ws.since.IsZero() {
				a.StatusFor = now.Sub(ws.since)
			}
			switch {
			case a.ContextPercent == 0 && a.ContextWindowTokens > 0 && tr.ContextUsedTokens > 0:
				a.ContextPercent = float64(tr.ContextUsedTokens) / float64(a.ContextWindowTokens) * 100
			case a.ContextPercent > 0 && tr.ContextUsedTokens == 0:
				// A percentage alone: the tokens it stands for, in the
				// window given or a 200,000-token one.
				if a.ContextWindowTokens == 0 {
					a.ContextWindowTokens = defaultContextWindow
				}
				tr.ContextUsedTokens = int64(a.ContextPercent / 100 * float64(a.ContextWindowTokens))
			}
			s.Agent = &a
		}
		if ws.cgroup != nil {
			c := *ws.cgroup
			if !c.HaveMemoryUsage {
				c.MemoryUsageBytes, c.HaveMemoryUsage = s.Totals.RSSBytes, true
			}
			if c.MemoryLimitBytes > 0 {
				c.MemoryPercent = float64(c.MemoryUsageBytes) / float64(c.MemoryLimitBytes) * 100
			}
			if c.CPUQuotaCores > 0 && s.Totals.RatesMeasured > 0 {
				c.CPUCoresUsed = s.Totals.CPUPercent / 100
				c.CPUQuotaPercent = c.CPUCoresUsed / c.CPUQuotaCores * 100
			}
			c.Danger = c.MemoryPercent >= session.DefaultDangerPercent || c.CPUQuotaPercent >= session.DefaultDangerPercent
			s.Totals.Cgroup = &c
		}
		sessions = append(sessions, s)
	}
	w.counters.Update(snap, sessions)
	return frame.Frame{Snapshot: snap, Sessions: sessions}
}

// parseSize reads a size: 2GiB, 512M, 1.5 GB, 4096.
func parseSize(s string) (uint64, error) {
	n, err := procwalk.ParseBytes(s)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// parseSeconds reads seconds, "12.5" or a duration "2m".
func parseSeconds(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	return d.Seconds(), err
}
