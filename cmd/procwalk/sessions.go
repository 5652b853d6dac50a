//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"io"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// sessions.go is `procwalk sessions` (and plain `procwalk`): every session
// of every kind on this host in one table, biggest first. session.go shows
// one session in detail; both share the flags and the gathering below.

// sessionFlags configure grouping; sessions, session, top, run and watch
// share them. Options is the struct the Telegraf input's TOML fills too.
type sessionFlags struct {
	session.Options
	noRates bool
}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	registerSessionOptions(fs, &f.Options)
	fs.BoolVar(&f.noRates, "no-rates", false, "scan once: no CPU % or IO rates, no --interval wait")
}

// registerSessionOptions registers the flags of o, the options of session
// grouping, as every command that groups (telegraf too) spells them.
func registerSessionOptions(fs *flag.FlagSet, o *session.Options) {
	registerSessionSources(fs, o)
	fs.Var((*cmdline.StringList)(&o.Agents), "agent", "extra AI agent rule NAME=REGEX, matched against comm, argv[0] and interpreter scripts; repeat for several")
	fs.Var((*cmdline.StringList)(&o.Trees), "tree", "tree session [NAME=]PID, [NAME=]PIDFILE or [NAME=]REGEX; repeat for several")
	fs.Var((*cmdline.StringList)(&o.Fold), "fold", "merge sessions whose names match: NAME=KIND:REGEX, e.g. 'logins=cgroup:^session-[0-9]+\\.scope$' (see FOLD in procwalk sessions --help); repeat for several")
	fs.Float64Var(&o.DangerPercent, "danger-percent", session.DefaultDangerPercent, "a cgroup session at or above this % of its memory limit or CPU quota is in DANGER")
	fs.Var((*cmdline.StringList)(&o.AgentTranscripts), "agent-transcript", "agent transcript source NAME=PARSER:DIR (see AGENTS in procwalk sessions --help); repeat for several")
	fs.Var((*cmdline.StringList)(&o.AgentContextWindows), "agent-context-window", "context window of a model family FAMILY=TOKENS, e.g. claude-sonnet-4-5=1000000; repeat for several")
	d := session.DefaultAgentStatus()
	fs.Var((*cmdline.DurationText)(&o.AgentActiveWithin), "agent-active-within", fmt.Sprintf("an agent whose transcript grew within this `duration` is working (default %v)", d.ActiveWithin))
	fs.Float64Var(&o.AgentBusyCPU, "agent-busy-cpu", d.BusyCPUPercent, "an agent whose processes use this much CPU (% of one core) is working")
	fs.Var((*cmdline.DurationText)(&o.AgentTurnTimeout), "agent-turn-timeout", fmt.Sprintf("after a prompt or tool result, the model counts as answering (working) for this `duration` (default %v)", d.TurnTimeout))
	fs.Var((*cmdline.DurationText)(&o.AgentEndedKeep), "agent-ended-keep", fmt.Sprintf("the `duration` an ended agent's row stays (watch, top, telegraf) (default %v; negative: not at all)", d.EndedKeep))
	fs.StringVar(&o.AgentFirstRead, "agent-first-read", "", firstReadHelp())
	cmdline.Path("FILE").String(fs, &o.AgentPrices, "agent-prices", "", pricesHelp)
}

// registerSessionSources registers the flags of o that say where sessions
// are found (tmux servers, cgroupfs, group rules): kill's too.
func registerSessionSources(fs *flag.FlagSet, o *session.Options) {
	cmdline.Path("SOCKET").Var(fs, (*cmdline.StringList)(&o.TmuxSockets), "tmux-socket", "tmux server to ask: a name (as tmux -L) or a socket path (as tmux -S); repeat for several; default: discover them")
	cmdline.Spec{Meta: "SOCKET"}.Var(fs, (*cmdline.CommaList)(&o.TmuxSockets), "tmux-sockets", "tmux servers to ask, comma-separated; added to --tmux-socket")
	cmdline.Path("FILE").String(fs, &o.GroupsFile, "groups", "", "group rules file: one 'NAME-TEMPLATE FIELD REGEX' a line (see procwalk sessions --help)")
	cmdline.Path("DIR").String(fs, &o.CgroupRoot, "cgroup-root", "", "where cgroupfs is mounted (default "+session.DefaultCgroupRoot+")")
}

// pricesHelp is --agent-prices'.
const pricesHelp = "price table `file` for each agent's cost_usd: FAMILY INPUT OUTPUT CACHE-READ CACHE-WRITE-5M [CACHE-WRITE-1H] a line, USD per million tokens (none built in)"

// firstReadHelp is --agent-first-read's, for sessions and telegraf alike.
func firstReadHelp() string {
	return "a transcript's first read reads its first line and this much of its end, e.g. 32MiB (default " +
		procwalk.FormatBytes(uint64(session.DefaultAgentStatus().FirstReadBytes)) + "; all: the whole file); transcript_skipped_bytes says what was not read"
}

// groupConfig turns the flags into a GroupConfig for kinds
// (session.Options, as for the Telegraf plugin).
func (f *sessionFlags) groupConfig(kinds []string, users *procwalk.Users) (session.Config, error) {
	opts := f.Options
	opts.Kinds, opts.Users = kinds, users
	cfg, err := opts.Config()
	return cfg, optionUsage(err)
}

// optionUsage turns a session.OptionError into a usage error naming its
// flag; other errors pass unchanged.
func optionUsage(err error) error {
	var oe *session.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	return &exitErr{Code: exitUsage, Err: oe.Rename("--" + oe.Flag()), Flag: oe.Flag()}
}

// gathered is one run's frame and the pipeline that gathered it.
type gathered struct {
	frame.Frame
	pipeline *frame.Pipeline // its Grouper, for what a frame lacks
	users    *procwalk.Users
}

// gatherSessions gathers a frame grouped by cfg, with the fields the kinds
// need and extra, twice --interval apart unless --no-rates.
func gatherSessions(ctx context.Context, g *globals, f *sessionFlags, cfg session.Config, extra procwalk.Fields) (gathered, error) {
	fsys, err := g.openFS()
	if err != nil {
		return gathered{}, err
	}
	cfg.Once = true // one frame, the grouper dropped after it
	grouper, err := session.NewGrouper(fsys, cfg)
	if err != nil {
		if errors.Is(err, session.ErrBadConfig) {
			return gathered{}, usageErrorf("%v", err)
		}
		return gathered{}, err
	}
	// The first of two samples reads what rates need; the one shown adds
	// what the kinds (the grouper's plan) and the caller need.
	p, err := g.pipeline(frame.Config{Fields: extra, Grouper: grouper, NoRates: f.noRates})
	if err != nil {
		return gathered{}, err
	}
	fr, err := g.gather(ctx, p, !f.noRates)
	if err != nil {
		return gathered{}, err
	}
	return gathered{Frame: fr, pipeline: p, users: cfg.Users}, nil
}

// writeNotes prints grouping notes and the visibility note to w.
func writeNotes(w io.Writer, gd gathered) {
	for _, n := range gd.Notes {
		fmt.Fprintf(w, "procwalk: note: %s\n", printable(n))
	}
	writeVisibilityNote(w, gd.Snapshot)
}

type sessionsCommand struct {
	fs    *flag.FlagSet
	g     *globals
	e     *env
	f     sessionFlags
	kind  string
	sort  string
	limit int
	json  bool
	wide  bool
}

func newSessionsCommand(g *globals, e *env) *ffcli.Command {
	c := &sessionsCommand{g: g, e: e}
	fs := newFlagSet("sessions", g, e.stderr)
	c.fs = fs
	c.f.register(fs)
	kindsSpec().String(fs, &c.kind, "kind", "", "kinds to list, comma-separated: "+strings.Join(session.Kinds(), ", ")+", or all (default: "+strings.Join(session.OverviewKinds(), ",")+")")
	cmdline.Spec{Meta: "KEY", Choices: metric.SessionSortNames, Usage: func() string {
		return "sort by " + strings.Join(metric.SessionSortNames(), "|") + " (default rss, pss with --pss; name, the agents' stable order, with --kind agent)"
	}}.String(fs, &c.sort, "sort", "", "")
	fs.IntVar(&c.limit, "limit", -1, "at most this many sessions per kind; 0 lists all (default: 10 per kind without --kind, all with it)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object: visibility, notes, sessions with totals (bytes, seconds), attributes, members")
	fs.BoolVar(&c.wide, "wide", false, "never fit the table to the terminal's width (or COLUMNS): all columns, whole cells")
	return &ffcli.Command{
		Name:       "sessions",
		ShortUsage: "procwalk sessions [flags]",
		ShortHelp:  "the default: list tmux, cgroup, user, agent, tree and group sessions, biggest first (--kind all adds sid, pgrp, tty)",
		LongHelp:   helpText("sessions"),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *sessionsCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf("sessions takes no arguments, got %q: to show one session run procwalk session KIND:NAME", args[0])
	}
	kinds, err := parseKinds(c.kind)
	if err != nil {
		return err
	}
	order, ok := metric.DefaultSessionOrder(kinds, c.g.pss), true
	if c.sort != "" {
		order, ok = metric.ParseSessionOrder(c.sort)
	}
	if !ok {
		return usageErrorf("--sort %q: sort by one of %s, or a session metric's name (README, Metric names)", c.sort, strings.Join(metric.SessionSortNames(), ", "))
	}
	if order.By != nil && order.By.Needs&procwalk.FieldSmaps != 0 {
		c.g.pss = true // sorting by PSS needs it read
	}
	if order.By != nil && order.By.Kind == metric.Rate && c.f.noRates {
		return c.g.needsRates("sort", order.Name)
	}
	limit := c.limit
	// --limit's default, -1, means "10 per kind, or all with --kind": given
	// (by flag, env or config) it is a bad count.
	if limit < -1 || limit == -1 && cmdline.IsSet(c.fs, "limit") {
		return usageErrorf("--limit %d: want 0 (all) or a positive count", c.limit)
	}
	if limit < 0 {
		limit = 10
		if c.kind != "" || c.json {
			limit = 0
		}
	}
	users, _ := c.g.users() // unreadable passwd: sessions named by uid
	cfg, err := c.f.groupConfig(kinds, users)
	if err != nil {
		return err
	}
	// Every session's SWAP and (--pss) PSS are shown and sorted by: swap
	// reads every process's status, unless the host has no swap in use;
	// --pss reads every smaps_rollup.
	extra := render.SessionsFields(c.g.pss, !c.f.noRates, c.json)
	frame.OneShotGC()
	gd, err := gatherSessions(ctx, c.g, &c.f, cfg, extra)
	if err != nil {
		return err
	}
	sessions := slices.Clone(gd.Sessions)
	order.Sort(sessions, gd.Snapshot.Fields, gd.Snapshot.Time)
	shown, hidden := session.LimitPerKind(sessions, limit)
	if c.json {
		if err := writeJSONSessions(c.e.stdout, gd, shown); err != nil {
			return err
		}
	} else if err := c.table(gd, shown, hidden); err != nil {
		return err
	}
	writeNotes(c.e.stderr, gd)
	return nil
}

// kindsSpec is --kind's: session kinds, or all.
func kindsSpec() cmdline.Spec {
	return cmdline.Spec{Meta: "KINDS", List: true, Choices: func() []string { return append(session.Kinds(), "all") }}
}

// parseKinds reads --kind (session.ParseKinds): an unknown kind is a bad
// flag value (exit 2) listing the kinds.
func parseKinds(s string) ([]string, error) {
	kinds, err := session.ParseKinds(s)
	if err != nil {
		return nil, usageErrorf("--kind %v", err)
	}
	return kinds, nil
}

func (c *sessionsCommand) table(gd gathered, shown []session.Session, hidden map[string]int) error {
	t := render.SessionsTable(shown, gd.Snapshot.Fields, gd.Snapshot.Time, c.g.pss)
	if err := printTable(c.e, t, c.e.stdout, c.wide); err != nil {
		return err
	}
	// The way to see them: --kind K, unless it was given, where only
	// --limit hides them.
	render.SessionsFooter(c.e.stdout, len(shown), hidden, func(kind string) string {
		if c.kind != "" {
			return "--limit 0 lists them all"
		}
		return "procwalk sessions --kind " + kind + " lists them all"
	})
	return nil
}

// writeJSONSessions writes sessions, of gd, as JSON, their panes'
// foreground commands and cwds read first.
func writeJSONSessions(w io.Writer, gd gathered, sessions []session.Session) error {
	for i := range sessions {
		gd.pipeline.Grouper().PaneForegrounds(gd.Snapshot, &sessions[i])
	}
	return render.WriteJSONSessions(w, gd.Snapshot, gd.Notes, sessions)
}
