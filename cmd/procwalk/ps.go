//go:build linux

package main

import (
	"context"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/cmdline"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"regexp"
	"slices"
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
	cmdline.Spec{Meta: "KEY", Choices: metric.ProcessSortNames}.String(fs, &c.sort, "sort", "rss", "sort by "+strings.Join(metric.ProcessSortNames(), "|")+" (env PROCWALK_SORT)")
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

// psPlan is what the flags ask for, checked before any scan.
type psPlan struct {
	order  metric.ProcessOrder
	cols   []render.ProcessColumn
	match  func(*procwalk.Process) bool
	rates  bool
	fields procwalk.Fields // read for every process in the scan
	later  procwalk.Fields // read after it, for the rows shown (see fields)
	users  *procwalk.Users
}

func (c *psCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErrorf("ps takes no arguments, got %q: select processes with --filter, --regex or --user", args[0])
	}
	plan, err := c.plan()
	if err != nil {
		return err
	}
	frame.OneShotGC()
	p, err := c.g.pipeline(frame.Config{Fields: plan.fields, NoRates: !plan.rates})
	if err != nil {
		return err
	}
	f, err := c.g.gather(ctx, p, plan.rates)
	if err != nil {
		return err
	}
	procs, err := c.rows(f, plan)
	if err != nil {
		return err
	}
	return c.print(f.Snapshot, plan, procs)
}

// rows selects and sorts the processes to show, reading plan.later of
// those alone: of the matches when the order needs it, else of the rows
// left after --limit.
func (c *psCommand) rows(f frame.Frame, plan psPlan) ([]*procwalk.Process, error) {
	snap := f.Snapshot
	procs := make([]*procwalk.Process, 0, len(snap.Procs))
	for i := range snap.Procs {
		if p := &snap.Procs[i]; plan.match(p) {
			procs = append(procs, p)
		}
	}
	sortNeeds := plan.later & plan.order.Needs()
	if sortNeeds != 0 {
		if err := f.ReadMore(procs, sortNeeds); err != nil {
			return nil, err
		}
	}
	plan.order.Sort(snap, procs)
	if c.limit > 0 && len(procs) > c.limit {
		procs = procs[:c.limit]
	}
	if rest := plan.later &^ sortNeeds; rest != 0 {
		if err := f.ReadMore(procs, rest); err != nil {
			return nil, err
		}
	}
	return procs, nil
}

// plan checks the flags and works out what to read.
func (c *psCommand) plan() (psPlan, error) {
	var plan psPlan
	var err error
	if plan.order, err = parsePSSort(c.sort); err != nil {
		return plan, err
	}
	// Asking for PSS, by sort or column, is asking to read it; the default
	// columns then show it too.
	if plan.order.Needs()&procwalk.FieldSmaps != 0 {
		c.g.pss = true
	}
	if plan.cols, err = c.tableColumns(); err != nil {
		return plan, err
	}
	if slices.ContainsFunc(plan.cols, func(col render.ProcessColumn) bool { return col.Needs&procwalk.FieldSmaps != 0 }) {
		c.g.pss = true
	}
	if c.noRates && plan.order.NeedsRates() {
		return plan, usageErrorf("--sort %s needs rates, which --no-rates turns off: drop one of them", plan.order.Name)
	}
	plan.rates = !c.noRates && (c.json || plan.order.NeedsRates() || slices.ContainsFunc(plan.cols, func(col render.ProcessColumn) bool { return col.Rates }))
	if c.limit < 0 {
		return plan, usageErrorf("--limit %d: want 0 (all) or a positive count", c.limit)
	}
	// The user database is read only for what shows or matches a name.
	var users *procwalk.Users
	var usersErr error
	if c.json || c.user != "" || slices.ContainsFunc(plan.cols, func(col render.ProcessColumn) bool { return col.Name == "user" }) {
		users, usersErr = c.g.users()
	}
	plan.users = users
	if plan.match, err = c.matcher(users, usersErr); err != nil {
		return plan, err
	}
	plan.fields, plan.later = c.fields(plan)
	return plan, nil
}

// fields is the union of what is shown, sorted and filtered: a table of
// pid,ppid,rss,comm reads stat and statm alone. It returns what the scan
// reads of every process, and what is read after it of the rows shown
// alone: smaps_rollup, which takes each target's mmap lock, unless a PSS
// or USS growth rate is shown (a rate needs it in both samples).
func (c *psCommand) fields(plan psPlan) (scan, later procwalk.Fields) {
	if c.json {
		// JSON shows every value of the default scan: the owner, the
		// command line, swap, and with rates io and its rates.
		scan = procwalk.FieldStatus | procwalk.FieldCmdline
		if plan.rates {
			scan |= procwalk.FieldIO
		}
	} else {
		scan = plan.order.Needs()
		for _, col := range plan.cols {
			scan |= col.Needs
		}
		if c.filter != "" || c.regex != "" {
			scan |= procwalk.FieldCmdline
		}
		if c.user != "" {
			scan |= procwalk.FieldOwner
		}
	}
	if !c.g.pss {
		return scan, 0
	}
	scan &^= procwalk.FieldSmaps
	if plan.rates && c.showsSmapsRate(plan) {
		return scan | procwalk.FieldSmaps, 0
	}
	return scan, procwalk.FieldSmaps
}

// showsSmapsRate reports whether a PSS or USS growth rate is shown or
// sorted by: JSON with rates has them.
func (c *psCommand) showsSmapsRate(plan psPlan) bool {
	if c.json || plan.order.NeedsRates() && plan.order.Needs()&procwalk.FieldSmaps != 0 {
		return true
	}
	return slices.ContainsFunc(plan.cols, func(col render.ProcessColumn) bool { return col.Rates && col.Needs&procwalk.FieldSmaps != 0 })
}

// print prints procs, rows of snap.
func (c *psCommand) print(snap *procwalk.Snapshot, plan psPlan, procs []*procwalk.Process) error {
	if c.json {
		return render.WriteJSONSnapshot(c.e.stdout, snap, procs, plan.users)
	}
	t := render.ProcessTable(snap, plan.cols, procs, plan.users, c.columns == "")
	if err := printTable(c.e, t, c.e.stdout, c.wide); err != nil {
		return err
	}
	writeVisibilityNote(c.e.stderr, snap)
	return nil
}

// matcher builds the row filter from --kernel, --user, --filter, --regex.
func (c *psCommand) matcher(users *procwalk.Users, usersErr error) (func(*procwalk.Process) bool, error) {
	var re *regexp.Regexp
	if c.regex != "" {
		var err error
		if re, err = regexp.Compile(c.regex); err != nil {
			return nil, usageErrorf("--regex %q: %v", c.regex, err)
		}
	}
	uid := procwalk.AnyOwner
	if c.user != "" {
		var err error
		if uid, err = lookupUser(c.user, c.g.passwd, users, usersErr); err != nil {
			return nil, err
		}
	}
	return procwalk.Filter{Kernel: c.kernel, UID: uid, Contains: c.filter, Regexp: re}.Match, nil
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

func parsePSSort(name string) (metric.ProcessOrder, error) {
	o, ok := metric.ParseProcessOrder(name)
	if !ok {
		return o, usageErrorf("--sort %q: want one of %s, or a metric name (procwalk ps --help lists them)", o.Name,
			strings.Join(metric.ProcessSortNames(), ", "))
	}
	return o, nil
}

// tableColumns resolves --columns, or the default set for the other flags.
func (c *psCommand) tableColumns() ([]render.ProcessColumn, error) {
	names := c.columns
	if names == "" {
		names = "pid,ppid,user,state,threads,rss"
		if c.g.pss {
			names += ",pss,uss"
		}
		if !c.noRates {
			names += ",cpu,read,write"
		}
		names += ",time,age,command"
	}
	var cols []render.ProcessColumn
	for _, name := range strings.Split(names, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		col, ok := render.FindProcessColumn(name)
		if !ok {
			return nil, usageErrorf("--columns: unknown column %q: want some of %s, or metric names (procwalk ps --help lists them)", name, render.ProcessColumnNames)
		}
		if col.Rates && c.noRates {
			return nil, usageErrorf("--columns %s needs rates, which --no-rates turns off: drop one of them", name)
		}
		cols = append(cols, col)
	}
	return cols, nil
}
