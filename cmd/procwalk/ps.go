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

SORT (--sort; largest first, then by pid)
  rss pss uss cpu io age pid
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

` + exitCodesHelp

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
	fs.BoolVar(&c.wide, "wide", false, "never cut the command column to the terminal's width")
	return &ffcli.Command{
		Name:       "ps",
		ShortUsage: "procwalk ps [flags]",
		ShortHelp:  "list processes: memory, CPU %, IO rates, age, command",
		LongHelp:   psHelp,
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
	fields procwalk.Fields
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
	snap, err := c.g.snapshot(ctx, plan.fields, plan.rates)
	if err != nil {
		return err
	}
	return c.print(snap, plan)
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
	if plan.order.needsPSS {
		c.g.pss = true
	}
	if plan.cols, err = c.tableColumns(); err != nil {
		return plan, err
	}
	if slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.needsPSS }) {
		c.g.pss = true
	}
	if c.noRates && plan.order.needsRates {
		return plan, usageErrorf("--sort %s needs rates, which --no-rates turns off: drop one of them", plan.order.name)
	}
	plan.rates = !c.noRates && (c.json || plan.order.needsRates || slices.ContainsFunc(plan.cols, func(col psColumn) bool { return col.needsRates }))
	if c.limit < 0 {
		return plan, usageErrorf("--limit %d: want 0 (all) or a positive count", c.limit)
	}
	users, usersErr := c.g.users()
	plan.users = users
	if plan.match, err = c.matcher(users, usersErr); err != nil {
		return plan, err
	}
	plan.fields = procwalk.FieldStatus | procwalk.FieldCmdline
	if plan.rates {
		plan.fields |= procwalk.FieldIO
	}
	if c.g.pss {
		plan.fields |= procwalk.FieldSmaps
	}
	return plan, nil
}

// print selects, sorts and prints the processes of snap.
func (c *psCommand) print(snap *procwalk.Snapshot, plan psPlan) error {
	var procs []*procwalk.Process
	for i := range snap.Procs {
		if p := &snap.Procs[i]; plan.match(p) {
			procs = append(procs, p)
		}
	}
	plan.order.sort(snap, procs)
	if c.limit > 0 && len(procs) > c.limit {
		procs = procs[:c.limit]
	}

	if c.json {
		return writeJSONSnapshot(c.e.stdout, snap, procs, plan.users)
	}
	t := &table{}
	for _, col := range plan.cols {
		t.cols = append(t.cols, column{header: col.header, right: col.right})
	}
	for _, p := range procs {
		row := make([]string, len(plan.cols))
		for i, col := range plan.cols {
			row[i] = col.value(snap, p, plan.users)
		}
		t.add(row...)
	}
	if err := t.print(c.e.stdout, c.wide); err != nil {
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
		if uid >= 0 && (p.Read&procwalk.FieldStatus == 0 || p.EffectiveUID != uid) {
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

// psOrder is one --sort key.
type psOrder struct {
	name       string
	needsPSS   bool
	needsRates bool
	// key returns the value to sort by, largest first, and false when the
	// process has none (not measured, not readable): those sort last.
	key func(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool)
}

func psOrders() []psOrder {
	return []psOrder{
		{name: "rss", key: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return float64(p.RSSBytes), true
		}},
		{name: "pss", needsPSS: true, key: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return float64(p.Smaps.PSSBytes), p.Read&procwalk.FieldSmaps != 0
		}},
		{name: "uss", needsPSS: true, key: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return float64(p.Smaps.USSBytes), p.Read&procwalk.FieldSmaps != 0
		}},
		{name: "cpu", needsRates: true, key: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return p.Rates.CPUPercent, p.Rates.Measured
		}},
		{name: "io", needsRates: true, key: func(_ *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return p.Rates.ReadBytesPerSecond + p.Rates.WriteBytesPerSecond, p.Rates.HaveIO
		}},
		{name: "age", key: func(s *procwalk.Snapshot, p *procwalk.Process) (float64, bool) {
			return s.Time.Sub(p.Start).Seconds(), true
		}},
		{name: "pid"}, // ascending, the key is the tie-breaker itself
	}
}

func psSortNames() []string {
	var names []string
	for _, o := range psOrders() {
		names = append(names, o.name)
	}
	return names
}

func parsePSSort(name string) (psOrder, error) {
	for _, o := range psOrders() {
		if o.name == strings.ToLower(name) {
			return o, nil
		}
	}
	return psOrder{}, usageErrorf("--sort %q: want one of %s", name, strings.Join(psSortNames(), ", "))
}

// sort orders procs by the key, largest first, keyless last, then by pid.
func (o psOrder) sort(s *procwalk.Snapshot, procs []*procwalk.Process) {
	slices.SortStableFunc(procs, func(a, b *procwalk.Process) int {
		if o.key != nil {
			va, oka := o.key(s, a)
			vb, okb := o.key(s, b)
			switch {
			case oka != okb:
				if oka {
					return -1
				}
				return 1
			case va != vb:
				return cmp.Compare(vb, va)
			}
		}
		return cmp.Compare(a.ID.PID, b.ID.PID)
	})
}

// psColumn is one --columns name.
type psColumn struct {
	name       string
	header     string
	right      bool
	needsPSS   bool
	needsRates bool
	value      func(s *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string
}

func psColumns() []psColumn {
	return []psColumn{
		{name: "pid", header: "PID", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return strconv.Itoa(p.ID.PID)
		}},
		{name: "ppid", header: "PPID", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return strconv.Itoa(p.PPID)
		}},
		{name: "user", header: "USER", value: func(_ *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) string {
			if p.Read&procwalk.FieldStatus == 0 {
				return "?"
			}
			return printable(users.Name(p.EffectiveUID))
		}},
		{name: "state", header: "S", value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return printable(string(rune(p.State)))
		}},
		{name: "threads", header: "THR", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return strconv.Itoa(p.Threads)
		}},
		{name: "rss", header: "RSS", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return formatBytes(p.RSSBytes)
		}},
		{name: "pss", header: "PSS", right: true, needsPSS: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if p.Read&procwalk.FieldSmaps == 0 {
				return notMeasured
			}
			return formatBytes(p.Smaps.PSSBytes)
		}},
		{name: "uss", header: "USS", right: true, needsPSS: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if p.Read&procwalk.FieldSmaps == 0 {
				return notMeasured
			}
			return formatBytes(p.Smaps.USSBytes)
		}},
		{name: "swap", header: "SWAP", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if p.Read&(procwalk.FieldStatus|procwalk.FieldSmaps) == 0 {
				return notMeasured
			}
			return formatBytes(p.SwapBytes)
		}},
		{name: "cpu", header: "CPU%", right: true, needsRates: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if !p.Rates.Measured {
				return notMeasured
			}
			return formatPercent(p.Rates.CPUPercent)
		}},
		{name: "read", header: "READ/s", right: true, needsRates: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if !p.Rates.HaveIO {
				return notMeasured
			}
			return formatRate(p.Rates.ReadBytesPerSecond)
		}},
		{name: "write", header: "WRITE/s", right: true, needsRates: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			if !p.Rates.HaveIO {
				return notMeasured
			}
			return formatRate(p.Rates.WriteBytesPerSecond)
		}},
		{name: "time", header: "TIME", right: true, value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return formatSeconds(p.CPUSeconds())
		}},
		{name: "age", header: "AGE", right: true, value: func(s *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return formatDuration(p.Age(s.Time))
		}},
		{name: "comm", header: "COMM", value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return printable(p.Comm)
		}},
		{name: "command", header: "COMMAND", value: func(_ *procwalk.Snapshot, p *procwalk.Process, _ *procwalk.Users) string {
			return commandLine(p)
		}},
	}
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

// tableColumns resolves --columns, or the default set for the other flags.
func (c *psCommand) tableColumns() ([]psColumn, error) {
	all := psColumns()
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
		i := slices.IndexFunc(all, func(col psColumn) bool { return col.name == name })
		if i < 0 {
			var known []string
			for _, col := range all {
				known = append(known, col.name)
			}
			return nil, usageErrorf("--columns: unknown column %q: want some of %s", name, strings.Join(known, ","))
		}
		if all[i].needsRates && c.noRates {
			return nil, usageErrorf("--columns %s needs rates, which --no-rates turns off: drop one of them", name)
		}
		cols = append(cols, all[i])
	}
	return cols, nil
}
