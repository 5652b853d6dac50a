//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
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
	j := render.NewJSONSession(gd.Snapshot.Time, gd.Snapshot.Fields, s)
	metrics := metric.Processes()
	for _, id := range s.Members {
		if p := gd.Snapshot.Lookup(id); p != nil {
			j.Processes = append(j.Processes, render.NewJSONProcess(gd.Snapshot, p, gd.users, metrics))
		}
	}
	all := render.NewJSONSessions(gd.Snapshot, gd.Notes)
	doc := struct {
		Time            time.Time             `json:"time"`
		ScanSeconds     float64               `json:"scan_seconds"`
		IntervalSeconds float64               `json:"interval_seconds,omitempty"`
		Visibility      render.JSONVisibility `json:"visibility"`
		Notes           []string              `json:"notes"`
		Session         render.JSONSession    `json:"session"`
	}{all.Time, all.ScanSeconds, all.IntervalSeconds, all.Visibility, all.Notes, j}
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func (c *sessionCommand) write(gd gathered, s *session.Session) error {
	return render.SessionDetail(c.e.stdout, gd.Snapshot, s, gd.users, c.g.pss, c.e.outputWidth(c.e.stdout, c.wide))
}
