//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// tree.go is `procwalk tree [PID]`: the process tree from one scan, each
// line with its own RSS and the totals of its subtree.

type treeCommand struct {
	g      *globals
	e      *env
	kernel bool
	wide   bool
	json   bool
}

const treeHelp = `Draws the process tree below PID (default: every root) from one scan.

Each line shows a process's own RSS (and PSS with --pss), then the totals
of its subtree, the process included: PROCS processes, TREE-RSS and
TREE-PSS. Summing RSS counts pages shared between processes once per
sharer; TREE-PSS (--pss) does not.

A PSS total ending in "+" is a lower bound: the kernel refused
smaps_rollup for some processes in the subtree (run as root). "-" marks
a value that does not exist (PSS of a zombie or kernel thread) or could
not be read.

Kernel threads are hidden unless --kernel, or PID is one. Flags go before
or after PID: procwalk tree --pss 1, procwalk tree 1 --pss.

EXAMPLES
  procwalk tree                     every tree, from each root
  procwalk tree --pss 1             init's tree, with shared memory counted once
  procwalk tree $(pgrep -o tmux)    a tmux server: its sessions' shells and jobs
  procwalk tree --json 1 | jq '.roots[0].subtree'

` + exitCodesHelp

func newTreeCommand(g *globals, e *env) *ffcli.Command {
	c := &treeCommand{g: g, e: e}
	fs := newFlagSet("tree", g, e.stderr)
	fs.BoolVar(&c.kernel, "kernel", false, "include kernel threads")
	fs.BoolVar(&c.wide, "wide", false, "never cut lines to the terminal's width (or COLUMNS)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object: the tree as nested processes, each with its subtree's totals")
	return &ffcli.Command{
		Name:       "tree",
		ShortUsage: "procwalk tree [flags] [PID]",
		ShortHelp:  "draw the process tree with per-subtree totals",
		LongHelp:   treeHelp,
		FlagSet:    fs,
		Options:    ffOptions(),
		Exec:       c.exec,
	}
}

// subtree sums a process and its shown descendants.
type subtree struct {
	procwalk.Totals
	pssMissing int // members whose smaps_rollup was denied or malformed
}

// merge adds the sums the tree shows of a child's subtree.
func (t *subtree) merge(c *subtree) {
	t.Procs += c.Procs
	t.RSSBytes += c.RSSBytes
	t.PSSBytes += c.PSSBytes
	t.SmapsRead += c.SmapsRead
	t.pssMissing += c.pssMissing
}

func (c *treeCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usageErrorf("tree takes at most one PID, got %q", args)
	}
	pid := 0
	if len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return usageErrorf("tree: %q is not a PID (a positive number)", args[0])
		}
		pid = n
	}
	// smaps_rollup takes each target's mmap lock: with --pss it is read
	// after the scan, for the processes drawn alone.
	oneShotGC()
	p, err := c.g.pipeline(frame.Config{NoRates: true})
	if err != nil {
		return err
	}
	f, err := c.g.gather(ctx, p, false)
	if err != nil {
		return err
	}
	snap := f.Snapshot

	var roots []*procwalk.Process
	showKernel := c.kernel
	if pid != 0 {
		p := snap.Process(pid)
		if p == nil {
			return fmt.Errorf("pid %d is not in %s: it may have exited; procwalk ps lists the pids", pid, c.g.proc)
		}
		roots = []*procwalk.Process{p}
		showKernel = showKernel || p.Kernel
	} else {
		for _, p := range snap.Roots() {
			if showKernel || !p.Kernel {
				roots = append(roots, p)
			}
		}
	}
	shown := func(p *procwalk.Process) bool { return showKernel || !p.Kernel }
	// Read of the processes drawn alone: PSS (--pss), and for JSON the
	// owner and the command line, as ps --json has them.
	var more procwalk.Fields
	if c.g.pss {
		more |= procwalk.FieldSmaps
	}
	if c.json {
		more |= procwalk.FieldStatus | procwalk.FieldCmdline
	}
	if more != 0 {
		var drawn []*procwalk.Process
		var walk func(p *procwalk.Process)
		walk = func(p *procwalk.Process) {
			drawn = append(drawn, p)
			for _, child := range snap.Children(p.ID.PID) {
				if shown(child) {
					walk(child)
				}
			}
		}
		for _, r := range roots {
			walk(r)
		}
		if err := f.ReadMore(drawn, more); err != nil {
			return err
		}
	}

	// Sum every subtree first (post-order), then draw top-down.
	totals := make(map[int]*subtree)
	var sum func(p *procwalk.Process) *subtree
	sum = func(p *procwalk.Process) *subtree {
		t := &subtree{}
		t.Add(p)
		if (p.Denied|p.Malformed)&procwalk.FieldSmaps != 0 {
			t.pssMissing++
		}
		for _, child := range snap.Children(p.ID.PID) {
			if !shown(child) {
				continue
			}
			t.merge(sum(child))
		}
		totals[p.ID.PID] = t
		return t
	}
	for _, r := range roots {
		sum(r)
	}

	if c.json {
		return c.writeJSON(snap, roots, totals, shown)
	}

	t := &table{cols: []column{{header: "PID", right: true}, {header: "RSS", right: true}}}
	if c.g.pss {
		t.cols = append(t.cols, column{header: "PSS", right: true})
	}
	t.cols = append(t.cols, column{header: "PROCS", right: true}, column{header: "TREE-RSS", right: true})
	if c.g.pss {
		t.cols = append(t.cols, column{header: "TREE-PSS", right: true})
	}
	t.cols = append(t.cols, column{header: "COMMAND"})

	var draw func(p *procwalk.Process, branch, indent string)
	draw = func(p *procwalk.Process, branch, indent string) {
		st := totals[p.ID.PID]
		row := []string{strconv.Itoa(p.ID.PID), formatBytes(p.RSSBytes)}
		if c.g.pss {
			row = append(row, ownPSS(p))
		}
		row = append(row, strconv.Itoa(st.Procs), formatBytes(st.RSSBytes))
		if c.g.pss {
			row = append(row, treePSS(st))
		}
		name := printable(p.Comm)
		if p.Zombie() {
			name += " <defunct>"
		}
		t.add(append(row, branch+name)...)

		var children []*procwalk.Process
		for _, child := range snap.Children(p.ID.PID) {
			if shown(child) {
				children = append(children, child)
			}
		}
		for i, child := range children {
			if i == len(children)-1 {
				draw(child, indent+"└─ ", indent+"   ")
			} else {
				draw(child, indent+"├─ ", indent+"│  ")
			}
		}
	}
	for _, r := range roots {
		draw(r, "", "")
	}

	if err := t.print(c.e, c.e.stdout, c.wide); err != nil {
		return err
	}
	writeVisibilityNote(c.e.stderr, snap)
	return nil
}

// ownPSS is a process's PSS, or "-" when it has none or it was not read.
func ownPSS(p *procwalk.Process) string {
	if p.Read&procwalk.FieldSmaps == 0 {
		return notMeasured
	}
	return formatBytes(p.Smaps.PSSBytes)
}

// treePSS is a subtree's PSS sum, "+" marking a lower bound, "-" when no
// member's PSS could be read (not "0 B+", which says nothing).
func treePSS(t *subtree) string {
	if t.SmapsRead == 0 {
		return notMeasured
	}
	s := formatBytes(t.PSSBytes)
	if t.pssMissing > 0 {
		s += "+"
	}
	return s
}

// jsonTreeNode is one process of tree --json: the process as ps --json
// has it, its subtree's totals, and its shown children.
type jsonTreeNode struct {
	Process  jsonProcess     `json:"process"`
	Subtree  jsonTreeTotals  `json:"subtree"`
	Children []*jsonTreeNode `json:"children"`
}

// jsonTreeTotals sums a subtree, the process included. pss_bytes is
// present when some member's PSS was read; pss_partial says that a member's
// was refused (a lower bound).
type jsonTreeTotals struct {
	Procs      int     `json:"procs"`
	RSSBytes   uint64  `json:"rss_bytes"`
	PSSBytes   *uint64 `json:"pss_bytes,omitempty"`
	PSSPartial bool    `json:"pss_partial,omitempty"`
}

// writeJSON prints the tree below roots as nested JSON.
func (c *treeCommand) writeJSON(snap *procwalk.Snapshot, roots []*procwalk.Process, totals map[int]*subtree, shown func(*procwalk.Process) bool) error {
	users, _ := c.g.users()
	metrics := metric.Processes()
	var node func(p *procwalk.Process) *jsonTreeNode
	node = func(p *procwalk.Process) *jsonTreeNode {
		st := totals[p.ID.PID]
		n := &jsonTreeNode{
			Process:  newJSONProcess(snap, p, users, metrics),
			Subtree:  jsonTreeTotals{Procs: st.Procs, RSSBytes: st.RSSBytes, PSSPartial: st.SmapsRead > 0 && st.pssMissing > 0},
			Children: []*jsonTreeNode{},
		}
		if st.SmapsRead > 0 {
			n.Subtree.PSSBytes = ptr(st.PSSBytes)
		}
		for _, child := range snap.Children(p.ID.PID) {
			if shown(child) {
				n.Children = append(n.Children, node(child))
			}
		}
		return n
	}
	doc := struct {
		Time       time.Time       `json:"time"`
		Visibility jsonVisibility  `json:"visibility"`
		Roots      []*jsonTreeNode `json:"roots"`
	}{snap.Time.UTC(), newJSONVisibility(snap.Visibility), make([]*jsonTreeNode, 0, len(roots))}
	for _, r := range roots {
		doc.Roots = append(doc.Roots, node(r))
	}
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
