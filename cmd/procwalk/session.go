//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// session.go is `procwalk session KIND:NAME`: one session's totals,
// attributes, tmux panes and member tree.

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
		LongHelp:   helpText("session"),
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
	kind, _, err := session.ParseRef(ref)
	switch {
	case err != nil: // an unknown kind: the message lists them
		return usageErrorf("%v", err)
	}
	users, _ := c.g.users() // unreadable passwd: sessions named by uid
	cfg, err := c.f.groupConfig([]string{kind}, users)
	if err != nil {
		return err
	}
	if err := cfg.AddTreeRef(ref); err != nil { // tree:1234 needs no --tree
		return usageErrorf("%s: %v", ref, err)
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
		if err := gd.ReadMembersSmaps(s); err != nil {
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

func (c *sessionCommand) writeJSON(gd gathered, s *session.Session) error {
	return render.WriteJSONSession(c.e.stdout, gd.Snapshot, gd.Notes, s, gd.users)
}

func (c *sessionCommand) write(gd gathered, s *session.Session) error {
	return render.SessionDetail(c.e.stdout, gd.Snapshot, s, gd.users, c.g.pss, c.e.outputWidth(c.e.stdout, c.wide))
}
