//go:build linux

package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// topcmd.go is `procwalk top`: it wires the live view (package top) to a
// Monitor, a session Grouper and the safe-kill engine.

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
	replay  string   // --replay: a recording's frames instead of this host's
	at      string   // --at: the frame of --replay to start at
	kinds   []string // parsed --kind, cgroup added
	listed  []string // the kinds --kind asked for, which the sessions view lists
	notes   []string // for the view's status line, escaped
	// limitMemory sets the runtime's memory limit (topMemoryLimit).
	limitMemory bool
}

func newTopCommand(g *globals, e *env) *ffcli.Command {
	c := &topCommand{g: g, e: e}
	fs := newFlagSet("top", g, e.stderr)
	c.fs = fs
	c.f.register(fs)
	// Taken, not refused, so that a config file's no-rates line for
	// sessions does not stop top; but it is no one-scan mode here.
	fs.Lookup("no-rates").Usage = "ignored: top measures rates between its refreshes (--once: two scans --interval apart)"
	kindsSpec().String(fs, &c.kind, "kind", "", "session kinds of the sessions view, comma-separated (default: "+strings.Join(session.OverviewKinds(), ",")+"); cgroup is always read for the gauges")
	cmdline.Spec{Meta: "KIND:NAME"}.String(fs, &c.cgroup, "cgroup", "", "the cgroup session the gauges show, e.g. cgroup:pod/<uid> (default: the one procwalk runs in)")
	fs.BoolVar(&c.once, "once", false, "print one text frame and exit, for pipes and logs")
	cmdline.Spec{Meta: "MODE", Choices: cmdline.Words("processes", "sessions", "agents"), Strict: true}.String(fs, &c.view, "view", "processes", "the view to start in (or print with --once): processes, sessions or agents")
	fs.StringVar(&c.protect, "protect", "", "more protected names for kills, comma-separated globs (comm, argv[0] or script name)")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "time a killed process has between TERM and KILL")
	cmdline.Path("FILE").String(fs, &c.replay, "replay", "", "show the frames of this recording (procwalk record) instead of this host's: [ and ] step back and forth; nothing can be killed")
	fs.StringVar(&c.at, "at", "", "with --replay, start at the frame shown at this time: +90s (from the first frame), 03:12, or an RFC 3339 time")
	return &ffcli.Command{
		Name:       "top",
		ShortUsage: "procwalk top [flags]",
		ShortHelp:  "live view of processes and sessions: sort, filter, drill in, kill safely",
		LongHelp:   helpText("top"),
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
	if (!ok || !procwalk.IsTerminal(out)) && !c.once {
		return usageErrorf("top needs a terminal (stdout is not one): run it in a terminal, or add --once for one text frame")
	}
	kinds, err := parseKinds(c.kind)
	if c.kind != "" {
		c.listed = slices.Clone(kinds) // before the gauges' cgroup is added
	}
	if err != nil {
		return err
	}
	if !slices.Contains(kinds, session.KindCgroup) {
		kinds = append(kinds, session.KindCgroup) // the gauges
	}
	// Set by flag, PROCWALK_DANGER_PERCENT or the config file: it wins.
	if !cmdline.IsSet(c.fs, "danger-percent") {
		if v := os.Getenv("HYPERPLANE_SESSION_PROCESS_TERMINATOR_THRESHOLD_PERCENT"); v != "" {
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return usageErrorf("HYPERPLANE_SESSION_PROCESS_TERMINATOR_THRESHOLD_PERCENT=%q: want a percentage such as 80", v)
			}
			c.f.DangerPercent = d
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
	model, closeSource, err := c.viewModel(ctx, fsys)
	if err != nil {
		return err
	}
	defer closeSource()

	if c.once {
		return c.printOnce(ctx, model)
	}
	keys, closeKeys, err := keyboard(c.e.stdin)
	if err != nil {
		return err
	}
	defer closeKeys()
	// 20 frames a second at most: the screen changes once a refresh or a
	// key, and Bubble Tea's renderer wakes at every frame even when nothing
	// changed (at its default 60, half of the view's CPU when idle).
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(keys), tea.WithOutput(c.e.stdout), tea.WithFPS(topFPS)}
	if os.Getenv("NO_COLOR") != "" {
		// Any value, as no-color.org says (Bubble Tea takes only a true
		// boolean): no colours, attributes kept (reverse video marks the
		// selected row).
		opts = append(opts, tea.WithColorProfile(colorprofile.ASCII))
	}
	p := tea.NewProgram(model, opts...)
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}

// topFPS is the live view's most frames a second.
const topFPS = 20

// keyboard is where the live view reads keys: stdin when it is a terminal,
// else the controlling terminal (procwalk top </dev/null, or under a
// pipe), as top(1) and less(1) do.
func keyboard(stdin io.Reader) (keys *os.File, closeKeys func() error, err error) {
	if f, ok := stdin.(*os.File); ok && procwalk.IsTerminal(f) {
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
func (c *topCommand) viewModel(ctx context.Context, fsys procwalk.FS) (*top.Model, func(), error) {
	if !c.once {
		c.g.note = func(n string) { c.notes = append(c.notes, "note: "+printable(n)) }
	}
	return c.model(ctx, fsys)
}

// model builds the live view over fsys: its Source (stopped by close),
// the safe-kill engine and the view, as the command runs it
// (BenchmarkTopRefresh measures it).
func (c *topCommand) model(ctx context.Context, fsys procwalk.FS) (m *top.Model, close func(), err error) {
	if c.replay != "" {
		src, err := newReplayTopSource(c.replay, c.at)
		if err != nil {
			return nil, nil, err
		}
		users := src.Header().UserNames() // the recorded host's names
		if users == nil {
			users, _ = c.g.users()
		}
		return top.New(top.Config{Interval: c.g.interval, Users: users, DangerPercent: c.f.DangerPercent,
			Sessions: c.view == "sessions", Status: "replay: [ ] step a frame, { } ten; nothing can be killed",
			NoKill: "a replay: its processes are not this host's, nothing can be killed"}, src, nil), src.Close, nil
	}
	if c.at != "" {
		return nil, nil, usageErrorf("--at %s needs --replay FILE: it names a frame of a recording", c.at)
	}
	src, pipeline, users, err := c.source(ctx, fsys)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			src.Close()
		}
	}()
	kcfg := kill.Config{Grace: c.grace, Requester: "top", Sentinel: c.e.newSentinel()}
	if kcfg.Protected, err = kill.ProtectedPlus(cmdline.SplitList(c.protect)); err != nil {
		return nil, nil, usageErrorf("--protect: %v", err)
	}
	killer, err := kill.NewKiller(fsys, kcfg)
	if err != nil {
		return nil, nil, err
	}
	return top.New(top.Config{
		ASCII: top.ASCIILocale(os.Getenv), Marker: os.Getenv("TERM") == "dumb", SwitchTmux: tmuxSwitcher(), Kinds: c.listed,
		Interval: c.g.interval, Users: users, DangerPercent: c.f.DangerPercent, Sessions: c.view == "sessions", Agents: c.view == "agents",
		Status: strings.Join(c.notes, "; "), Trim: pipeline.Trim,
	}, src, topKiller{killer}), src.Close, nil
}

// source builds the live view's Source over one pipeline (top.LiveSource):
// every session kind for the sessions views, the cgroups the gauges need
// alone for the others.
func (c *topCommand) source(ctx context.Context, fsys procwalk.FS) (*top.LiveSource, *frame.Pipeline, *procwalk.Users, error) {
	users, _ := c.g.users()
	grouper := func(kinds []string) (*session.Grouper, error) {
		cfg, err := c.f.groupConfig(kinds, users)
		if err != nil {
			return nil, err
		}
		g, err := session.NewGrouper(fsys, cfg)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		return g, nil
	}
	live := top.LiveConfig{Home: c.cgroup, NewSessions: func() (*session.Grouper, error) { return grouper(c.kinds) }}
	var err error
	if live.Sessions, err = live.NewSessions(); err != nil {
		return nil, nil, nil, err
	}
	if live.Processes, err = grouper([]string{session.KindCgroup}); err != nil {
		return nil, nil, nil, err
	}
	mem := frame.Memory{Retention: frame.HoldLast}
	if c.limitMemory {
		mem.Limit = frame.LiveViewLimit
	}
	if live.Pipeline, err = c.g.pipeline(frame.Config{Grouper: live.Processes, System: true, Memory: mem}); err != nil {
		return nil, nil, nil, err
	}
	return top.NewLiveSource(ctx, live), live.Pipeline, users, nil
}

// printOnce prints one frame with rates: two gathers --interval apart.
func (c *topCommand) printOnce(ctx context.Context, model *top.Model) error {
	width, height := cmp.Or(c.e.columns, 80), cmp.Or(render.ColumnsFromEnv(os.Getenv("LINES")), 24)
	frame, err := model.Frame(ctx, c.g.interval, width, height)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(c.e.stdout, frame)
	return err
}

// topKiller is the safe-kill engine as the live view uses it: each kill
// with the first signal the view asks for (the picker).
type topKiller struct{ *kill.Killer }

func (t topKiller) Kill(ctx context.Context, id procwalk.ProcID, sig syscall.Signal) kill.Outcome {
	return t.WithSignal(sig).Terminate(ctx, id)
}
func (t topKiller) KillTree(ctx context.Context, root procwalk.ProcID, sig syscall.Signal) (*kill.Report, error) {
	return t.WithSignal(sig).TerminateScope(ctx, kill.TreeScope{Root: root})
}
func (t topKiller) KillSession(ctx context.Context, s *session.Session, sig syscall.Signal) (*kill.Report, error) {
	return t.WithSignal(sig).TerminateScope(ctx, kill.NewSessionScope(s, false))
}

// tmuxSwitcher switches the tmux client procwalk runs in ($TMUX) to a
// pane; nil outside tmux.
func tmuxSwitcher() func(target string) error {
	if os.Getenv("TMUX") == "" {
		return nil
	}
	return func(target string) error {
		out, err := exec.Command("tmux", "switch-client", "-t", target).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
}
