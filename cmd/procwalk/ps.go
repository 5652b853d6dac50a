//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"regexp"
	"strconv"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// ps.go is `procwalk ps`: one row per process, sorted and filtered.

type psCommand struct {
	g       *globals
	e       *env
	sort    string
	filter  string
	regex   string
	user    string
	columns string
	limit   int
	json    bool
	noRates bool
	kernel  bool
	wide    bool
}

func newPSCommand(g *globals, e *env) *ffcli.Command {
	c := &psCommand{g: g, e: e}
	fs := newFlagSet("ps", g, e.stderr)
	cmdline.Spec{Meta: "KEY", Choices: metric.ProcessSortNames, Usage: func() string {
		return "sort by " + strings.Join(metric.ProcessSortNames(), "|") + " (env PROCWALK_SORT)"
	}}.String(fs, &c.sort, "sort", "rss", "")
	fs.StringVar(&c.filter, "filter", "", "show processes whose comm or command line contains this text")
	cmdline.Spec{Meta: "RE"}.String(fs, &c.regex, "regex", "", "show processes whose comm or command line matches this regular expression")
	cmdline.Spec{Meta: "USER"}.String(fs, &c.user, "user", "", "show processes of this user name or numeric uid (effective uid)")
	cmdline.Spec{Meta: "LIST", List: true, Choices: func() []string { return strings.Split(render.ProcessColumnNames, ",") }}.String(fs, &c.columns, "columns", "", "table columns, comma-separated (see COLUMNS); empty for the default set")
	fs.IntVar(&c.limit, "limit", 0, "show at most this many rows after sorting; 0 shows all")
	fs.BoolVar(&c.json, "json", false, "print one JSON object: host, visibility, processes (bytes, seconds)")
	fs.BoolVar(&c.noRates, "no-rates", false, "scan once: no CPU % or IO rates, no --interval wait")
	fs.BoolVar(&c.kernel, "kernel", false, "include kernel threads")
	fs.BoolVar(&c.wide, "wide", false, "never fit the table to the terminal's width (or COLUMNS): all columns, whole commands")
	return &ffcli.Command{
		Name:       "ps",
		ShortUsage: "procwalk ps [flags]",
		ShortHelp:  "list processes: memory, CPU %, IO rates, age, command",
		UsageFunc:  cmdline.LazyHelp(func() string { return helpText("ps") + render.MetricsHelp() + "\n" + helpText("exit-codes") }),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

func (c *psCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf("ps takes no arguments, got %q: select processes with --filter, --regex or --user", args[0])
	}
	q, users, err := c.query()
	if err != nil {
		return err
	}
	scan, _ := q.Fields()
	frame.OneShotGC()
	p, err := c.g.pipeline(frame.Config{Fields: scan, NoRates: !q.Rates})
	if err != nil {
		return err
	}
	f, err := c.g.gather(ctx, p, q.Rates)
	if err != nil {
		return err
	}
	procs, err := q.Rows(f)
	if err != nil {
		return err
	}
	return c.print(f.Snapshot, q, procs, users)
}

// query checks the flags and turns them into the listing asked for, with
// the user database when it shows or matches a name.
func (c *psCommand) query() (render.ProcessQuery, *procwalk.Users, error) {
	order, ok := metric.ParseProcessOrder(c.sort)
	if !ok {
		return render.ProcessQuery{}, nil, usageErrorf("--sort %q: want one of %s, or a metric name (procwalk ps --help lists them)", order.Name,
			strings.Join(metric.ProcessSortNames(), ", "))
	}
	q, err := render.NewProcessQuery(order, c.columns, c.json, c.g.pss, c.noRates)
	var qe *render.QueryError
	switch {
	case errors.As(err, &qe) && qe.Err == render.ErrNeedsRates:
		return q, nil, c.g.needsRates(qe.Option, qe.Name)
	case errors.As(err, &qe):
		return q, nil, usageErrorf("--columns: unknown column %q: want some of %s, or metric names (procwalk ps --help lists them)", qe.Name, render.ProcessColumnNames)
	case err != nil:
		return q, nil, usageError(err)
	case c.limit < 0:
		return q, nil, usageErrorf("--limit %d: want 0 (all) or a positive count", c.limit)
	}
	q.Limit = c.limit
	// The user database is read only for what shows or matches a name.
	var users *procwalk.Users
	var usersErr error
	if q.ShowsUsers() || c.user != "" {
		users, usersErr = c.g.users()
	}
	q.Filter = procwalk.Filter{Kernel: c.kernel, UID: procwalk.AnyOwner, Contains: c.filter}
	if c.regex != "" {
		if q.Filter.Regexp, err = regexp.Compile(c.regex); err != nil {
			return q, nil, usageErrorf("--regex %q: %v", c.regex, err)
		}
	}
	if c.user != "" {
		if q.Filter.UID, err = lookupUser(c.user, c.g.passwd, users, usersErr); err != nil {
			return q, nil, err
		}
	}
	return q, users, nil
}

// print prints procs, rows of snap.
func (c *psCommand) print(snap *procwalk.Snapshot, q render.ProcessQuery, procs []*procwalk.Process, users *procwalk.Users) error {
	if q.JSON {
		return render.WriteJSONSnapshot(c.e.stdout, snap, procs, users)
	}
	t := render.ProcessTable(snap, q.Columns, procs, users, c.columns == "")
	if err := printTable(c.e, t, c.e.stdout, c.wide); err != nil {
		return err
	}
	writeVisibilityNote(c.e.stderr, snap)
	return nil
}

// lookupUser turns --user NAME|UID into a uid.
func lookupUser(s, passwd string, users *procwalk.Users, usersErr error) (int, error) {
	if uid, err := strconv.Atoi(s); err == nil {
		if uid < 0 {
			return 0, usageErrorf("--user %d: a uid is not negative", uid)
		}
		return uid, nil
	}
	if usersErr != nil {
		return 0, fmt.Errorf("--user %q: cannot map the name to a uid: %w; give the numeric uid, or fix --passwd", s, usersErr)
	}
	uid, ok := users.LookupUID(s)
	if !ok {
		return 0, usageErrorf("--user %q: no such user in %s; give a user name from there or a numeric uid", s, passwd)
	}
	return uid, nil
}
