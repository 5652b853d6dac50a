package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// topcmd.go is `procwalk top`: it wires the live view (package top) to a
// Monitor, a session Grouper and the safe-kill engine.

const topHelp = `A live view of this host's processes and sessions, refreshed every
--interval: CPU %, USS, PSS and RSS, memory growth (USS per minute), IO
rates, age; sessions (tmux, agents, cgroups and pods, users, groups) with
their totals; the process tree. The header shows load, memory, swap and
pressure (PSI), and gauges of the cgroup procwalk runs in (or --cgroup):
memory against its limit with the danger threshold marked, CPU against its
quota.

Keys: q quit, arrows/PgUp/PgDn/Home/End move, Tab switches processes /
sessions / tree, Enter opens a session's members (or folds a tree node),
s sorts by the next column, S or r reverses, / filters by name or command
line, Esc clears the filter or goes back, k kills the selected process and
K the selected session or process tree (after y/n), ? shows the keys.

Kills go through the safe-kill engine: pid and start time verified, TERM
then KILL after --grace, protected system processes refused (they are
dimmed; selecting one warns in red; --protect adds names). PSS and USS
are read (smaps_rollup) for the rows on screen only.

--danger-percent defaults to PROCWALK_DANGER_PERCENT, else
HYPERPLANE_SESSION_PROCESS_TERMINATOR_THRESHOLD_PERCENT, else 80.
Without a terminal, top exits 2 unless --once prints one text frame
(COLUMNS x LINES, default 80x24).

EXAMPLES
  procwalk top                              processes, busiest first
  procwalk top --view sessions --kind tmux,agent
  procwalk top --cgroup cgroup:pod/<uid>    gauges of another pod
  procwalk top --once --view sessions --kind agent > agents.txt

` + exitCodesHelp

type topCommand struct {
	fs      *flag.FlagSet
	g       *globals
	e       *env
	f       sessionFlags
	kind    string
	cgroup  string
	once    bool
	view    string
	protect string
	grace   time.Duration
	kinds   []string // parsed --kind, cgroup added
	notes   []string // for the view's status line, escaped
	// limitMemory sets the runtime's memory limit (topMemoryLimit).
	limitMemory bool
}

func newTopCommand(g *globals, e *env) *ffcli.Command {
	c := &topCommand{g: g, e: e}
	fs := newFlagSet("top", g, e.stderr)
	c.fs = fs
	c.f.register(fs)
	fs.StringVar(&c.kind, "kind", "", "session kinds of the sessions view, comma-separated (default: "+strings.Join(overviewKinds(), ",")+"); cgroup is always read for the gauges")
	fs.StringVar(&c.cgroup, "cgroup", "", "the cgroup session the gauges show, e.g. cgroup:pod/<uid> (default: the one procwalk runs in)")
	fs.BoolVar(&c.once, "once", false, "print one text frame and exit, for pipes and logs")
	fs.StringVar(&c.view, "view", "processes", "the view to start in (or print with --once): processes or sessions")
	fs.StringVar(&c.protect, "protect", "", "more protected names for kills, comma-separated globs (comm, argv[0] or script name)")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "time a killed process has between TERM and KILL")
	return &ffcli.Command{
		Name:       "top",
		ShortUsage: "procwalk top [flags]",
		ShortHelp:  "live view of processes and sessions: sort, filter, drill in, kill safely",
		LongHelp:   topHelp,
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *topCommand) exec(ctx context.Context, args []string) error {
	c.g.longRunning = true
	if len(args) > 0 {
		return usageErrorf("top takes no arguments, got %q", args[0])
	}
	if c.g.interval <= 0 {
		return usageErrorf("--interval %v: want a positive refresh interval such as 1s", c.g.interval)
	}
	out, ok := c.e.stdout.(*os.File)
	if (!ok || !isTerminal(out)) && !c.once {
		return usageErrorf("top needs a terminal (stdout is not one): run it in a terminal, or add --once for one text frame")
	}
	if c.view != "processes" && c.view != "sessions" {
		return usageErrorf("--view %q: want processes or sessions", c.view)
	}
	kinds, err := parseKinds(c.kind)
	if err != nil {
		return err
	}
	if !slices.Contains(kinds, session.KindCgroup) {
		kinds = append(kinds, session.KindCgroup) // the gauges
	}
	// Set by flag, PROCWALK_DANGER_PERCENT or the config file: it wins.
	dangerSet := false
	c.fs.Visit(func(f *flag.Flag) { dangerSet = dangerSet || f.Name == "danger-percent" })
	if !dangerSet {
		if v := os.Getenv("HYPERPLANE_SESSION_PROCESS_TERMINATOR_THRESHOLD_PERCENT"); v != "" {
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return usageErrorf("HYPERPLANE_SESSION_PROCESS_TERMINATOR_THRESHOLD_PERCENT=%q: want a percentage such as 80", v)
			}
			c.f.danger = d
		}
	}
	fsys, err := c.g.openFS()
	if err != nil {
		return err
	}
	c.kinds = kinds
	if c.grace <= 0 {
		return usageErrorf("--grace %v: want a positive duration such as 5s", c.grace)
	}
	c.limitMemory = os.Getenv("GOMEMLIMIT") == ""
	model, err := c.viewModel(fsys)
	if err != nil {
		return err
	}

	if c.once {
		return c.printOnce(ctx, model)
	}
	keys, closeKeys, err := keyboard(c.e.stdin)
	if err != nil {
		return err
	}
	defer closeKeys()
	p := tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(keys), tea.WithOutput(c.e.stdout))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}

// keyboard is where the live view reads keys: stdin when it is a terminal,
// else the controlling terminal (procwalk top </dev/null, or under a
// pipe), as top(1) and less(1) do.
func keyboard(stdin io.Reader) (keys *os.File, closeKeys func() error, err error) {
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return f, func() error { return nil }, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, usageErrorf("top reads keys from the terminal: stdin is not one, and /dev/tty cannot be opened (%v): run it in a terminal, or add --once for one text frame", err)
	}
	return tty, tty.Close, nil
}

// viewModel builds the live view as exec runs it. A note of the source's
// (why BPF did not load) printed now would be hidden by the full-screen
// view and seen only after quitting: the view shows it in its status line
// instead. --once keeps it on stderr, before the frame.
func (c *topCommand) viewModel(fsys procwalk.FS) (*top.Model, error) {
	if !c.once {
		c.g.note = func(n string) { c.notes = append(c.notes, "note: "+printable(n)) }
	}
	return c.model(fsys)
}

// model builds the live view over fsys: its Source, the safe-kill engine
// and the view, as the command runs it (BenchmarkTopRefresh measures it).
func (c *topCommand) model(fsys procwalk.FS) (*top.Model, error) {
	src, users, err := c.source(fsys)
	if err != nil {
		return nil, err
	}
	kcfg := kill.Config{Grace: c.grace, Requester: "top"}
	if c.protect != "" {
		extra := splitList(c.protect)
		if err := kill.ValidateProtected(extra); err != nil {
			return nil, usageErrorf("--protect: %v", err)
		}
		kcfg.Protected = append(kill.DefaultProtected(), extra...)
	}
	killer, err := kill.NewKiller(fsys, kcfg)
	if err != nil {
		return nil, err
	}
	return top.New(top.Config{
		Interval: c.g.interval, Escape: printable, Users: users, DangerPercent: c.f.danger, Sessions: c.view == "sessions",
		Status: strings.Join(c.notes, "; "),
	}, src, topKiller{killer}), nil
}

// topMemoryLimit is top's soft memory limit (GOMEMLIMIT, which wins when
// set) at n processes: 34 MiB of the runtime's memory up to 10,000
// processes, about 38 MiB resident with the binary's pages, in every view
// (the sessions views hold a Grouper's state besides the snapshots); more
// in proportion beyond, so the collector never chases a live heap the
// limit cannot hold. It, not a low GOGC, bounds top's memory: a refresh
// makes little garbage (rows and snapshots reuse their storage), and
// collecting at GOGC's default spends less CPU on marking.
func topMemoryLimit(n int) int64 {
	const bytes = 34 << 20
	return bytes * int64(max(n, 10_000)) / 10_000
}

// source builds the live view's Source: two Monitors that keep snapshots
// (the view shows one while the next is gathered), one grouping every
// session kind for the sessions views, one only the cgroups the gauges
// need for the process views. The first is built again for each visit to
// the sessions views (topSource.Gather).
func (c *topCommand) source(fsys procwalk.FS) (*topSource, *procwalk.Users, error) {
	users, _ := c.g.users()
	// One snapshot source (--source) for both Monitors: a BPF program is
	// loaded once, and each Monitor recycles only its own snapshots.
	snaps, err := c.g.snapshotSource(fsys)
	if err != nil {
		return nil, nil, err
	}
	monitor := func(kinds []string) (*procwalk.Monitor, *session.Grouper, error) {
		cfg, err := c.f.groupConfig(kinds, users)
		if err != nil {
			return nil, nil, err
		}
		g, err := session.NewGrouper(fsys, cfg)
		if err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
		return procwalk.NewMonitor(fsys, procwalk.MonitorConfig{Clock: c.g.clock, KeepLast: true, Source: snaps}, g), g, nil
	}
	src := &topSource{fs: fsys, home: c.cgroup, limitMemory: c.limitMemory, newSessions: func() (*procwalk.Monitor, *session.Grouper, error) { return monitor(c.kinds) }}
	if src.sessions, src.sessionsGrouper, err = monitor(c.kinds); err != nil {
		return nil, nil, err
	}
	if src.processes, src.processesGrouper, err = monitor([]string{session.KindCgroup}); err != nil {
		return nil, nil, err
	}
	return src, users, nil
}

// printOnce prints one frame with rates: two gathers --interval apart.
func (c *topCommand) printOnce(ctx context.Context, model *top.Model) error {
	width, height := envSize("COLUMNS", 80), envSize("LINES", 24)
	frame, err := model.Frame(ctx, c.g.interval, width, height)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(c.e.stdout, frame)
	return err
}

// envSize reads a terminal size from env, or def.
func envSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// topSource gathers the live view's frames.
type topSource struct {
	fs                                procwalk.FS
	sessions, processes               *procwalk.Monitor
	sessionsGrouper, processesGrouper *session.Grouper
	// newSessions builds the sessions Monitor and Grouper again, after
	// they were dropped on leaving the sessions views.
	newSessions func() (*procwalk.Monitor, *session.Grouper, error)
	home        string // --cgroup
	// limitMemory sets the runtime's memory limit for the number of
	// processes at each gather (topMemoryLimit); off when GOMEMLIMIT is set.
	limitMemory bool
	last        *procwalk.Monitor
	// idle is the Monitor of the view left, released at the gather after
	// the switch: the screen shows its last frame until then.
	idle *procwalk.Monitor
}

func (s *topSource) Gather(need top.Need) (top.Frame, error) {
	if s.idle != nil && s.idle != s.monitorFor(need) {
		// Its snapshots (two at 10,000 processes: megabytes) would stay
		// resident while the other kind of view is shown.
		s.idle.Release()
		if s.idle == s.sessions {
			// So would the sessions Grouper's memory of every session's
			// members (its cumulative counters) and the Monitor's rate
			// samples: megabytes that a later visit would find stale.
			s.sessions, s.sessionsGrouper = nil, nil
		}
		debug.FreeOSMemory() // once a switch: the freed megabytes, now
	}
	s.idle = nil
	if s.last != nil && s.last != s.monitorFor(need) {
		// The screen shows the last frame of the view left until this
		// gather's: the one before it is shown no more, and its storage
		// serves this scan rather than adding to the peak.
		s.last.ReleaseHeld()
	}
	if need.Sessions && s.sessions == nil {
		var err error
		if s.sessions, s.sessionsGrouper, err = s.newSessions(); err != nil {
			return top.Frame{}, err
		}
	}
	m, g := s.processes, s.processesGrouper
	if need.Sessions {
		m, g = s.sessions, s.sessionsGrouper
	}
	if s.last != nil && s.last != m {
		s.idle = s.last
	}
	m.SetFields(need.Every)
	snap, err := m.Gather()
	if err != nil {
		return top.Frame{}, err
	}
	s.last = m
	if s.limitMemory {
		debug.SetMemoryLimit(topMemoryLimit(len(snap.Procs)))
	}
	sessions, notes := g.Group(snap)
	f := top.Frame{Snap: snap, Sessions: sessions, System: s.fs.System(), Notes: notes}
	if s.home != "" {
		f.Home, _ = session.Find(sessions, s.home)
	} else if self := snap.Process(os.Getpid()); self != nil {
		f.Home = cgroupSessionOf(sessions, self.ID)
	}
	return f, nil
}

// monitorFor is the Monitor that gathers for need, nil when it is to be
// built.
func (s *topSource) monitorFor(need top.Need) *procwalk.Monitor {
	if need.Sessions {
		return s.sessions
	}
	return s.processes
}

func (s *topSource) ReadMore(procs []*procwalk.Process, f procwalk.Fields) {
	s.last.ReadMore(procs, f)
}

// cgroupSessionOf is the cgroup session with member id, or nil.
func cgroupSessionOf(sessions []session.Session, id procwalk.ProcID) *session.Session {
	for i := range sessions {
		s := &sessions[i]
		if s.Kind == session.KindCgroup && slices.Contains(s.Members, id) {
			return s
		}
	}
	return nil
}

// topKiller is the safe-kill engine as the live view uses it.
type topKiller struct{ k *kill.Killer }

func (t topKiller) Checker() func(p *procwalk.Process) error { return t.k.Checker() }
func (t topKiller) Kill(ctx context.Context, id procwalk.ProcID) kill.Outcome {
	return t.k.Terminate(ctx, id)
}
func (t topKiller) KillTree(ctx context.Context, root procwalk.ProcID) (*kill.Report, error) {
	return t.k.TerminateScope(ctx, kill.TreeScope{Root: root})
}
func (t topKiller) KillSession(ctx context.Context, s *session.Session) (*kill.Report, error) {
	return t.k.TerminateScope(ctx, kill.NewSessionScope(s, false))
}
