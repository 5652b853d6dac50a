//go:build linux

package render

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// tree.go is procwalk tree's drawing: each process with the sums of its
// subtree, as a table or nested JSON.

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

// subtreeTotals sums every subtree below roots (post-order), a process
// and its shown descendants, by pid.
func subtreeTotals(snap *procwalk.Snapshot, roots []*procwalk.Process, shown func(*procwalk.Process) bool) map[int]*subtree {
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

	return totals
}

// TreeTable draws the processes of snap below roots as a tree, each with
// its subtree's sums; shown says which descendants are drawn (and summed);
// pss adds PSS columns.
func TreeTable(snap *procwalk.Snapshot, roots []*procwalk.Process, shown func(*procwalk.Process) bool, pss bool) *Table {
	totals := subtreeTotals(snap, roots, shown)
	t := &Table{Cols: []Column{{Header: "PID", Right: true}, {Header: "RSS", Right: true}}}
	if pss {
		t.Cols = append(t.Cols, Column{Header: "PSS", Right: true})
	}
	t.Cols = append(t.Cols, Column{Header: "PROCS", Right: true}, Column{Header: "TREE-RSS", Right: true})
	if pss {
		t.Cols = append(t.Cols, Column{Header: "TREE-PSS", Right: true})
	}
	t.Cols = append(t.Cols, Column{Header: "COMMAND"})

	var draw func(p *procwalk.Process, branch, indent string)
	draw = func(p *procwalk.Process, branch, indent string) {
		st := totals[p.ID.PID]
		row := []string{strconv.Itoa(p.ID.PID), Bytes(p.RSSBytes)}
		if pss {
			row = append(row, OwnPSS(p))
		}
		row = append(row, strconv.Itoa(st.Procs), Bytes(st.RSSBytes))
		if pss {
			row = append(row, treePSS(st))
		}
		name := procwalk.Printable(p.Comm)
		if p.Zombie() {
			name += " <defunct>"
		}
		t.Add(append(row, branch+name)...)

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

	return t
}

// treePSS is a subtree's PSS sum, "+" marking a lower bound, "-" when no
// member's PSS could be read (not "0 B+", which says nothing).
func treePSS(t *subtree) string {
	if t.SmapsRead == 0 {
		return NotMeasured
	}
	s := Bytes(t.PSSBytes)
	if t.pssMissing > 0 {
		s += "+"
	}
	return s
}

// jsonTreeNode is one process of tree --json: the process as ps --json
// has it, its subtree's totals, and its shown children.
type jsonTreeNode struct {
	Process  JSONProcess     `json:"process"`
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

// WriteJSONTree writes the tree below roots (shown: the descendants
// drawn) as nested JSON; users names the owners.
func WriteJSONTree(w io.Writer, snap *procwalk.Snapshot, roots []*procwalk.Process, shown func(*procwalk.Process) bool, users *procwalk.Users) error {
	totals := subtreeTotals(snap, roots, shown)
	metrics := metric.Processes()
	var node func(p *procwalk.Process) *jsonTreeNode
	node = func(p *procwalk.Process) *jsonTreeNode {
		st := totals[p.ID.PID]
		n := &jsonTreeNode{
			Process:  NewJSONProcess(snap, p, users, metrics),
			Subtree:  jsonTreeTotals{Procs: st.Procs, RSSBytes: st.RSSBytes, PSSPartial: st.SmapsRead > 0 && st.pssMissing > 0},
			Children: []*jsonTreeNode{},
		}
		if st.SmapsRead > 0 {
			n.Subtree.PSSBytes = Ptr(st.PSSBytes)
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
		Visibility JSONVisibility  `json:"visibility"`
		Roots      []*jsonTreeNode `json:"roots"`
	}{snap.Time.UTC(), NewJSONVisibility(snap.Visibility), make([]*jsonTreeNode, 0, len(roots))}
	for _, r := range roots {
		doc.Roots = append(doc.Roots, node(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
