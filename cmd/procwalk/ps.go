//go:build linux

package main

import (
	"cmp"
	"context"
	"fmt"
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

const psHelp = `Lists processes in a table with human units, or as JSON with --json.

By default ps scans twice, --interval apart, to measure CPU % and IO rates:
a rate needs two samples. A process first seen in the second scan has no
rate yet and shows "-" (absent in JSON), never a made-up 0. --no-rates
scans once and drops the rate columns: quicker.

COLUMNS (--columns, comma-separated; default: pid,ppid,user,state,threads,
rss,[pss,uss],cpu,read,write,time,age,command)
  pid ppid user       process id, parent id, effective user
  state threads       state letter (R S D Z T I ...), thread count
  rss pss uss swap    resident, proportional, unique and swapped memory
                      (pss and uss read smaps_rollup: they turn on --pss)
  cpu read write      CPU % of one core, storage read and write per second
  time age            CPU time used, time since start
  comm command        kernel name (15 bytes), or the full command line

  Any metric below works as a column too, by name or short name.

SORT (--sort; largest first, values not measured last, then by pid)
  rss pss uss swap cpu io time age pid, or any metric below
  pss and uss turn on --pss; cpu and io need rates (not --no-rates); age
  puts the oldest first; pid sorts ascending.

FILTERS (all given must match)
  --filter TEXT  the comm or the command line contains TEXT
  --regex RE     the comm or the command line matches RE (Go syntax;
                 (?i) ignores case)
  --user U       effective user name or numeric uid
  Kernel threads are hidden unless --kernel.

Partial data (processes that exited mid-scan, files denied without root,
hidepid) is reported in one line on stderr, and in "visibility" in JSON.

EXAMPLES
  procwalk ps                               every process, biggest RSS first
  procwalk ps --sort cpu --limit 10         the ten busiest
  procwalk ps --sort uss --user alice       memory alice's processes alone hold
  procwalk ps --regex '(?i)python' --columns pid,rss,cpu,command
  procwalk ps --json --no-rates | jq '.processes | length'

`

func newPSCommand(g *globals, e *env) *ffcli.Command {
	c := &psCommand{g: g, e: e}
	fs := newFlagSet("ps", g, e.stderr)
	fs.StringVar(&c.sort, "sort", "rss", "sort by "+strings.Join(psSortNames(), "|")+" (env PROCWALK_SORT)")
	fs.StringVar(&c.filter, "filter", "", "show processes whose comm or command line contains this text")
	fs.StringVar(&c.regex, "regex", "", "show processes whose comm or command line matches this regular expression")
	fs.StringVar(&c.user, "user", "", "show processes of this user name or numeric uid (effective uid)")
	fs.StringVar(&c.columns, "columns", "", "table columns, comma-separated (see COLUMNS); empty for the default set")
	fs.IntVar(&c.limit, "limit", 0, "show at most this many rows after sorting; 0 shows all")
	fs.BoolVar(&c.json, "json", false, "print one JSON object: host, visibility, processes (bytes, seconds)")
	fs.BoolVar(&c.noRates, "no-rates", false, "scan once: no CPU % or IO rates, no --interval wait")
	fs.BoolVar(&c.kernel, "kernel", false, "include kernel threads")
	fs.BoolVar(&c.wide, "wide", false, "never fit the table to the terminal's width (or COLUMNS): all columns, whole commands")
	return &ffcli.Command{
		Name:       "ps",
		ShortUsage: "procwalk ps [flags]",
		ShortHelp:  "list processes: memory, CPU %, IO rates, age, command",
		UsageFunc:  lazyHelp(func() string { return psHelp + metricsHelp() + "\n" + exitCodesHelp }),
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

// psPlan is what the flags ask for, checked before any scan.
type psPlan struct {
	order  psOrder
	cols   []psColumn
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
	oneShotGC()
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
	sortNeeds := plan.later & plan.order.needs()
	if sortNeeds != 0 {
		if err := f.ReadMore(procs, sortNeeds); err != nil {
			return nil, err
		}
	}
	plan.order.sort(snap, procs)
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
	if plan.order.needs()&procwalk.FieldSmaps != 0 {
		c.g.pss = true
	}
	if plan.cols, err = c.tableColumns(); err != nil {
		return plan, err
	}
	if slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.needs&procwalk.FieldSmaps != 0 }) {
		c.g.pss = true
	}
	if c.noRates && plan.order.needsRates() {
		return plan, usageErrorf("--sort %s needs rates, which --no-rates turns off: drop one of them", plan.order.name)
	}
	plan.rates = !c.noRates && (c.json || plan.order.needsRates() || slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.rates }))
	if c.limit < 0 {
		return plan, usageErrorf("--limit %d: want 0 (all) or a positive count", c.limit)
	}
	// The user database is read only for what shows or matches a name.
	var users *procwalk.Users
	var usersErr error
	if c.json || c.user != "" || slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.name == "user" }) {
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
		scan = plan.order.needs()
		for _, col := range plan.cols {
			scan |= col.needs
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
	if c.json || plan.order.needsRates() && plan.order.needs()&procwalk.FieldSmaps != 0 {
		return true
	}
	return slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.rates && col.needs&procwalk.FieldSmaps != 0 })
}

// print prints procs, rows of snap.
func (c *psCommand) print(snap *procwalk.Snapshot, plan psPlan, procs []*procwalk.Process) error {
	if c.json {
		return writeJSONSnapshot(c.e.stdout, snap, procs, plan.users)
	}
	t := &table{}
	for _, col := range plan.cols {
		tc := column{header: col.header, right: col.right}
		switch col.name {
		case "user", "comm":
			tc.min = 8
		case "command":
			tc.min = 20
		}
		if c.columns == "" {
			tc.drop = psDropRank(col.name) // columns asked for are never dropped
		}
		t.cols = append(t.cols, tc)
	}
	// One array holds every cell, rows are slices of it.
	n := len(plan.cols)
	cells := make([]string, len(procs)*n)
	t.rows = make([][]string, 0, len(procs))
	for r, p := range procs {
		row := cells[r*n : (r+1)*n : (r+1)*n]
		for i, col := range plan.cols {
			row[i] = col.value(snap, p, plan.users)
		}
		t.add(row...)
	}
	if err := t.print(c.e, c.e.stdout, c.wide); err != nil {
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
	uid := -1
	if c.user != "" {
		var err error
		if uid, err = lookupUser(c.user, c.g.passwd, users, usersErr); err != nil {
			return nil, err
		}
	}
	return func(p *procwalk.Process) bool {
		if p.Kernel && !c.kernel {
			return false
		}
		if uid >= 0 && (p.Read&procwalk.FieldOwner == 0 || p.EffectiveUID != uid) {
			return false // an owner we could not read never matches
		}
		if c.filter == "" && re == nil {
			return true
		}
		cmdline := strings.Join(p.Cmdline, " ")
		if c.filter != "" && !strings.Contains(p.Comm, c.filter) && !strings.Contains(cmdline, c.filter) {
			return false
		}
		return re == nil || re.MatchString(p.Comm) || re.MatchString(cmdline)
	}, nil
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

// psOrder is one --sort key: a metric of the catalogue, or pid.
type psOrder struct {
	name string
	by   *metric.Desc // nil: by pid, ascending
}

func (o psOrder) needs() procwalk.Fields {
	if o.by == nil {
		return 0
	}
	return o.by.Needs
}

func (o psOrder) needsRates() bool { return o.by != nil && o.by.Kind == metric.Rate }

// psSortNames are the sort keys the help lists: the short names of the
// catalogue's process metrics, and pid. Any name of a process metric
// (procwalk ps --sort rss_bytes) is accepted too.
func psSortNames() []string {
	return append(shortNames(metric.Processes()), "pid")
}

// shortNames are the first short name of each of metrics that has one,
// ids (tty, euid) aside.
func shortNames(metrics []metric.Desc) []string {
	var names []string
	for _, d := range metrics {
		if len(d.Aliases) > 0 && !d.ID {
			names = append(names, d.Aliases[0])
		}
	}
	return names
}

func parsePSSort(name string) (psOrder, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "pid" {
		return psOrder{name: name}, nil
	}
	if d, ok := metric.Lookup(name); ok && d.OfProcess() && d.Name != "pid" {
		return psOrder{name: name, by: &d}, nil
	}
	return psOrder{}, usageErrorf("--sort %q: want one of %s, or a metric name (procwalk ps --help lists them)", name,
		strings.Join(psSortNames(), ", "))
}

// sort orders procs by the metric (the catalogue's one rule: largest first,
// those without a value last, ties by pid), or by pid.
func (o psOrder) sort(s *procwalk.Snapshot, procs []*procwalk.Process) {
	if o.by == nil {
		slices.SortFunc(procs, func(a, b *procwalk.Process) int { return cmp.Compare(a.ID.PID, b.ID.PID) })
		return
	}
	metric.Sort(s, procs, o.by)
}

// psColumn is one --columns name: a metric of the catalogue, or one of the
// text columns (user, state, comm, command).
type psColumn struct {
	name   string
	header string
	right  bool
	needs  procwalk.Fields
	rates  bool
	value  func(s *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string
}

// psColumnNames are the short column names the help lists first.
const psColumnNames = "pid,ppid,user,state,threads,rss,pss,uss,swap,cpu,read,write,time,age,comm,command"

// psTextColumns are the columns that are no number.
func psTextColumns() []psColumn {
	return []psColumn{
		{name: "user", header: "USER", needs: procwalk.FieldOwner, value: func(_ *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string {
			if p.Read&procwalk.FieldOwner == 0 {
				return "?"
			}
			return printable(users.Name(p.EffectiveUID))
		}},
		{name: "state", header: "S", value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return printable(string(rune(p.State)))
		}},
		{name: "comm", header: "COMM", value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return printable(p.Comm)
		}},
		{name: "command", header: "COMMAND", needs: procwalk.FieldCmdline, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return commandLine(p)
		}},
	}
}

// metricColumn is the column of metric d: its label, its value in the
// table's units, "-" where it has none.
func metricColumn(name string, d *metric.Desc) psColumn {
	return psColumn{name: name, header: d.Label, right: true, needs: d.Needs, rates: d.Kind == metric.Rate,
		value: func(s *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			v, ok := d.Process(s, p)
			if !ok {
				return notMeasured
			}
			return formatMetric(d, v)
		}}
}

// psColumn finds column name: a text column, else a metric.
func findPSColumn(name string) (psColumn, bool) {
	for _, c := range psTextColumns() {
		if c.name == name {
			return c, true
		}
	}
	if d, ok := metric.Lookup(name); ok && d.OfProcess() {
		return metricColumn(name, &d), true
	}
	return psColumn{}, false
}

// commandLine is what the COMMAND column shows: the arguments joined by
// spaces, or "[comm]" when there are none (kernel threads, zombies, a
// process that cleared its argv), as ps(1) does.
func commandLine(p *procwalk.Process) string {
	var s string
	if len(p.Cmdline) == 0 || (len(p.Cmdline) == 1 && p.Cmdline[0] == "") {
		s = "[" + printable(p.Comm) + "]"
	} else {
		s = printable(strings.Join(p.Cmdline, " "))
		if p.CmdlineTruncated {
			s += "..."
		}
	}
	if p.Zombie() {
		s += " <defunct>"
	}
	return s
}

// psDropRank is the order in which the default columns go when the table
// does not fit the width: threads first, then uss, time, ppid, age, state,
// write, read; pid, user, rss, pss, cpu and the command stay.
func psDropRank(name string) int {
	return slices.Index([]string{"threads", "uss", "time", "ppid", "age", "state", "write", "read"}, name) + 1
}

// tableColumns resolves --columns, or the default set for the other flags.
func (c *psCommand) tableColumns() ([]psColumn, error) {
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
	var cols []psColumn
	for _, name := range strings.Split(names, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		col, ok := findPSColumn(name)
		if !ok {
			return nil, usageErrorf("--columns: unknown column %q: want some of %s, or metric names (procwalk ps --help lists them)", name, psColumnNames)
		}
		if col.rates && c.noRates {
			return nil, usageErrorf("--columns %s needs rates, which --no-rates turns off: drop one of them", name)
		}
		cols = append(cols, col)
	}
	return cols, nil
}
