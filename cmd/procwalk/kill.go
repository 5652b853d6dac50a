//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// kill.go is `procwalk kill`: terminate one process, a tree, a process
// group or a session, through the engine's Killer (pidfd-verified signals,
// first signal, grace, SIGKILL, protection, audit events).

type killCommand struct {
	g               *globals
	e               *env
	session         string
	tree            string
	pgrp            int
	signal          string
	grace           time.Duration
	dryRun          bool
	yes             bool
	force           bool
	json            bool
	protect         string
	killTmuxSession bool
	// sources say where --session is found: tmux servers, cgroupfs, group
	// rules (the sessions command's options).
	sources session.Options
}

func newKillCommand(g *globals, e *env) *ffcli.Command {
	c := &killCommand{g: g, e: e}
	fs := newFlagSet("kill", g, e.stderr)
	cmdline.Spec{Meta: "KIND:NAME"}.String(fs, &c.session, "session", "", "terminate the members of session KIND:NAME")
	fs.StringVar(&c.tree, "tree", "", "terminate PID (or PID@STARTTICKS) and its descendants")
	fs.IntVar(&c.pgrp, "pgrp", 0, "terminate process group N")
	cmdline.Spec{Meta: "SIGNAL", Choices: cmdline.Words("TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "KILL")}.String(fs, &c.signal, "signal", "TERM", "first signal: a name (TERM, INT, HUP ...) or number; KILL skips the grace")
	fs.DurationVar(&c.grace, "grace", kill.DefaultGrace, "time to exit after the first signal before SIGKILL")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print what would be signalled; signal nothing")
	fs.BoolVar(&c.yes, "yes", false, "do not ask before signalling more than one process")
	fs.BoolVar(&c.force, "force", false, "override the protected list (never the hard rules)")
	fs.BoolVar(&c.json, "json", false, "print each outcome as a JSON line (the audit event)")
	fs.StringVar(&c.protect, "protect", "", "more protected names, comma-separated globs (comm, argv[0] or script name)")
	fs.BoolVar(&c.killTmuxSession, "kill-tmux-session", false, "for a tmux session: run tmux kill-session once every member is gone")
	registerSessionSources(fs, &c.sources)
	fs.Lookup("tmux-sockets").Usage = "tmux servers to ask, comma-separated (as for sessions and telegraf); added to --tmux-socket"
	fs.Lookup("groups").Usage = "group rules file, for --session group:NAME"
	return &ffcli.Command{
		Name:       "kill",
		ShortUsage: "procwalk kill [flags] PID | --tree PID | --pgrp N | --session KIND:NAME",
		ShortHelp:  "terminate a process, tree, process group or session safely",
		UsageFunc: cmdline.LazyHelp(func() string {
			return strings.ReplaceAll(helpText("kill"), "{{protected}}", cmdline.WrapList(kill.DefaultProtected(), 68, "    "))
		}),
		FlagSet: fs,
		Options: ffOptions(),
		Exec:    c.exec,
	}
}

func (c *killCommand) exec(ctx context.Context, args []string) error {
	if err := newSources().CheckCommandLineOnlyEnv(); err != nil {
		return usageError(err)
	}
	cfg, err := c.config()
	if err != nil {
		return err
	}
	fsys, err := c.g.openFS()
	if err != nil {
		return err
	}
	scope, err := c.scope(fsys, args)
	if err != nil {
		return err
	}
	out := &render.EventPrinter{W: c.e.stdout, JSON: c.json}
	cfg.Audit = out.Print
	cfg.Sentinel = c.e.newSentinel()
	defer cfg.Sentinel.Close()
	k, err := kill.NewKiller(fsys, cfg)
	if err != nil {
		return usageErrorf("%v", err)
	}
	plan, err := k.Plan(scope)
	if err != nil {
		return err
	}
	if plan.Partial {
		fmt.Fprintf(c.e.stderr, "procwalk: partial view of /proc (hidden or vanished processes): members may be missing from %s\n", printable(plan.Scope))
	}
	if len(plan.Targets) > 1 && !c.dryRun && !c.yes {
		if err := c.confirm(ctx, k, plan); err != nil {
			return err
		}
	}
	// The signals stay held until the last line is written: a reader in
	// the scope that the kill ended (| cat, 2>&1) must not turn the
	// kill's exit status into a death by SIGPIPE on the error line.
	stopHolding := kill.HoldSignals(ctx, cfg.Sentinel)
	defer stopHolding()
	report := k.Execute(ctx, plan)
	for _, n := range report.Notes {
		fmt.Fprintf(c.e.stderr, "procwalk: %s\n", printable(n)) // notes name cgroups and tmux sessions
	}
	err = report.Err()
	if len(report.Outcomes) == 0 {
		err = fmt.Errorf("%s has no processes: nothing to signal", plan.Scope)
	}
	if err != nil {
		return &exitErr{Code: exitCode(c.e.sayError(ctx, err))} // said: runEnv adds nothing
	}
	return nil
}

// config turns the flags into a kill.Config, checking each value.
func (c *killCommand) config() (kill.Config, error) {
	sig, err := kill.ParseSignal(c.signal)
	if err != nil {
		return kill.Config{}, usageErrorf("--signal: %v", err)
	}
	if c.grace <= 0 {
		return kill.Config{}, usageErrorf("--grace %v: want a positive duration such as 5s or 500ms (use --signal KILL for no grace)", c.grace)
	}
	cfg := kill.Config{Signal: sig, Grace: c.grace, DryRun: c.dryRun, Force: c.force, Requester: "cli"}
	if cfg.Protected, err = kill.ProtectedPlus(cmdline.SplitList(c.protect)); err != nil {
		return cfg, usageErrorf("--protect: %v", err)
	}
	if c.g.pss {
		cfg.Fields |= procwalk.FieldSmaps // PSS in the events
	}
	return cfg, nil
}

// scope reads the one target the flags and arguments name.
func (c *killCommand) scope(fsys procwalk.FS, args []string) (kill.Scope, error) {
	named := 0
	for _, set := range []bool{len(args) > 0, c.tree != "", c.pgrp != 0, c.session != ""} {
		if set {
			named++
		}
	}
	if named != 1 || len(args) > 1 {
		return nil, usageErrorf("kill takes exactly one target: PID, --tree PID, --pgrp N or --session KIND:NAME")
	}
	switch {
	case len(args) == 1:
		id, err := resolveID(fsys, args[0], "PID")
		return kill.ProcessScope{ID: id}, err
	case c.tree != "":
		id, err := resolveID(fsys, c.tree, "--tree")
		return kill.TreeScope{Root: id}, err
	case c.pgrp != 0:
		if c.pgrp < 0 {
			return nil, usageErrorf("--pgrp %d: want a positive process group id", c.pgrp)
		}
		return kill.GroupScope{PGRP: c.pgrp}, nil
	}
	return c.sessionScope(fsys)
}

// resolveID reads "PID" (the process with that pid now) or
// "PID@STARTTICKS" (exactly that process): kill.ParseID, what naming the
// argument in a usage error.
func resolveID(fsys procwalk.FS, s, what string) (procwalk.ProcID, error) {
	id, err := kill.ParseID(fsys, s)
	if errors.Is(err, kill.ErrBadID) {
		return id, usageErrorf("%s %v", what, err)
	}
	return id, err
}

// sessionScope finds --session among the sessions of its kind
// (kill.FindSession).
func (c *killCommand) sessionScope(fsys procwalk.FS) (kill.Scope, error) {
	kind, _, err := session.ParseRef(c.session)
	if err != nil {
		return nil, usageErrorf("--session: %v", err)
	}
	if kind == session.KindTree {
		return nil, usageErrorf("--session %s: tree sessions are configured elsewhere; use --tree PID", c.session)
	}
	if c.killTmuxSession && kind != session.KindTmux { // before a gather that finds the session
		return nil, usageErrorf("--kill-tmux-session applies to tmux sessions, not %s", c.session)
	}
	opts := c.sources
	opts.Users, _ = c.g.users() // user sessions by name, as procwalk sessions shows them (unreadable passwd: by uid)
	scope, notes, err := kill.FindSession(fsys, c.session, opts, c.killTmuxSession)
	var oe *session.OptionError
	switch {
	case errors.As(err, &oe):
		return nil, optionUsage(err)
	case errors.Is(err, session.ErrBadConfig):
		return nil, usageErrorf("--session: %v", err)
	case err != nil:
		for _, n := range notes {
			fmt.Fprintf(c.e.stderr, "procwalk: %s\n", printable(n))
		}
		return nil, err
	}
	return scope, nil
}

// confirm lists the targets on stderr and asks (render.ConfirmKill).
// Without a terminal on stdin there is nobody to ask: refuse.
func (c *killCommand) confirm(ctx context.Context, k *kill.Killer, plan *kill.Plan) error {
	if !procwalk.IsTerminal(c.e.stdin) {
		render.KillPlan(c.e.stderr, plan)
		return usageErrorf("refusing to signal %d processes without confirmation: stdin is not a terminal; check them with --dry-run, then pass --yes", len(plan.Targets))
	}
	err := render.ConfirmKill(ctx, c.e.stderr, c.e.stdin, plan, k.Config().Signal, c.grace)
	if errors.Is(err, render.ErrNotConfirmed) || errors.Is(err, render.ErrInterrupted) {
		return &exitErr{Code: exitError, Err: err}
	}
	return err
}
