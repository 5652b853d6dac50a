//go:build linux

package top

import (
	"fmt"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk"
)

// meters.go is the header's fourth line: a meter per CPU (its busy share
// since the last refresh, one cell each, as btop's and htop's bars say
// it) and the selected row's recent CPU and RSS as sparklines.

// sparkLen is how many refreshes a sparkline shows.
const sparkLen = 20

// meters is what the fourth line draws, worked out at each frame.
type meters struct {
	prev  []procwalk.CPUTimes // the last frame's, to measure the next
	cores []float64           // each CPU's busy percent; nil before two frames
	// The selected row's history: what it is, its CPU % and RSS, oldest
	// first, sparkLen at most.
	id       table.ID
	cpu, rss []float64
}

// observe measures the CPUs between the last frame and f, and adds the
// selected row's values (r, nil when none) to its history, which starts
// again when the selection moved to another process or session.
func (mt *meters) observe(f Frame, r *table.Row) {
	mt.cores = mt.cores[:0]
	if cpus := f.System.CPUs; len(cpus) == len(mt.prev) {
		for i, c := range cpus {
			p, _ := c.BusyPercent(mt.prev[i])
			mt.cores = append(mt.cores, p)
		}
	}
	mt.prev = append(mt.prev[:0], f.System.CPUs...)
	if r == nil {
		mt.id, mt.cpu, mt.rss = table.ID{}, mt.cpu[:0], mt.rss[:0]
		return
	}
	if id := r.ID(); id != mt.id {
		mt.id, mt.cpu, mt.rss = id, mt.cpu[:0], mt.rss[:0]
	}
	cpu, _ := r.CPU()
	mt.cpu = push(mt.cpu, cpu)
	mt.rss = push(mt.rss, r.RSS())
}

func push(s []float64, v float64) []float64 {
	if len(s) == sparkLen {
		copy(s, s[1:])
		s = s[:sparkLen-1]
	}
	return append(s, v)
}

// line is the fourth header line's parts.
func (mt *meters) line(g glyphs, sel *table.Row) []render.Part {
	var parts []render.Part
	if len(mt.cores) > 0 {
		sum := 0.0
		for _, c := range mt.cores {
			sum += c
		}
		// One cell per CPU, as high as it is busy: 0 to 100 %.
		parts = append(parts, newPart(fmt.Sprintf("CPU %s %.0f%%", g.sparkline(mt.cores, 100), sum/float64(len(mt.cores))), 8))
	}
	if sel != nil && len(mt.cpu) > 0 {
		what := ""
		switch {
		case sel.Proc != nil:
			what = fmt.Sprintf("pid %d %s", sel.Proc.ID.PID, procwalk.Printable(sel.Proc.Name()))
		case sel.Session != nil:
			what = procwalk.Printable(sel.Session.Ref())
		}
		parts = append(parts, newPart(what, 3),
			newPart(fmt.Sprintf("cpu %s %.1f%%", g.sparkline(mt.cpu, 0), mt.cpu[len(mt.cpu)-1]), 6),
			newPart(fmt.Sprintf("rss %s %s", g.sparkline(mt.rss, 0), procwalk.FormatBytes(uint64(mt.rss[len(mt.rss)-1]))), 5))
	}
	return parts
}
