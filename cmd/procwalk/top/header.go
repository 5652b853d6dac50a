//go:build linux

package top

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// header.go draws the three lines above the table: the host, memory and
// pressure, and the gauges of the home cgroup. Each line is made of parts
// that go whole or not at all: at 80 columns the least needed are left
// out, never a number cut in half.

// newPart is a part of a header line: text (styled) that goes whole or
// not at all, ranked (higher stays longer).
func newPart(text string, rank int) render.Part {
	return render.Part{Text: text, Width: width(text), Rank: rank}
}

// fitParts joins parts two spaces apart, leaving out the lowest ranked
// until the line is at most w cells; the first part is cut when even it
// alone does not fit.
func fitParts(parts []render.Part, w int) string { return fit(render.JoinParts(parts, w), w) }

// header is the host line, the memory line and the gauges' line.
func (m *Model) header(st styles) []string {
	f := m.frame
	sys := f.System
	host := m.cfg.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	host = procwalk.Printable(host)
	hostRank := 3
	procs := fmt.Sprintf("%d processes", len(f.Snapshot.Procs))
	if st, ok := m.src.(Stepper); ok {
		// Which frame matters, at the end of the position: a recording's
		// long path is cut at its start to leave the line room for it.
		room := m.width - width("procwalk top") - width(procs) - 2*2 - width("replay ")
		host, hostRank = "replay "+textwidth.CutStart(st.Position(), max(room, 1)), 9 // escaped by the Stepper
	}
	line1 := []render.Part{newPart(st.title.Render("procwalk top"), 10), newPart(host, hostRank), newPart(procs, 9)}
	if m.sessionCount >= 0 {
		// Every kind's count, as the sessions view lists them: a process
		// view groups the gauges' cgroups alone, whose count means nothing.
		line1 = append(line1, newPart(fmt.Sprintf("%d sessions", m.sessionCount), 5))
	}
	line1 = append(line1, newPart(fmt.Sprintf("%d CPUs", f.Snapshot.Host.CPUs), 4))
	if sys.HaveLoad {
		line1 = append(line1, newPart(fmt.Sprintf("load %.2f %.2f %.2f", sys.Load1, sys.Load5, sys.Load15), 7))
	}
	var line2 []render.Part
	if m.err != nil {
		line2 = []render.Part{newPart(st.alarm.Render("refresh failed: "+procwalk.Printable(m.err.Error())), 10)}
	} else {
		line2 = append(line2, newPart("mem ?", 10))
		if sys.HaveMemory {
			used := sys.MemTotalBytes - min(sys.MemAvailableBytes, sys.MemTotalBytes)
			line2[0] = newPart(fmt.Sprintf("mem %s used of %s", procwalk.FormatBytes(used), procwalk.FormatBytes(sys.MemTotalBytes)), 10)
			line2 = append(line2, newPart(fmt.Sprintf("(%s available)", procwalk.FormatBytes(sys.MemAvailableBytes)), 4),
				newPart(fmt.Sprintf("swap %s of %s", procwalk.FormatBytes(sys.SwapTotalBytes-min(sys.SwapFreeBytes, sys.SwapTotalBytes)), procwalk.FormatBytes(sys.SwapTotalBytes)), 6))
		}
		if len(sys.Pressure) > 0 {
			keys := make([]string, 0, len(sys.Pressure))
			for k := range sys.Pressure {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for i, k := range keys {
				label := k
				if i == 0 {
					label = "PSI " + k
				}
				line2 = append(line2, newPart(fmt.Sprintf("%s %.1f%%", label, sys.Pressure[k]), 5-i))
			}
		}
	}
	return []string{fitParts(line1, m.width), fitParts(line2, m.width), fitParts(m.gauges(st), m.width),
		fitParts(m.meters.line(m.glyphs, m.selected()), m.width)}
}

// gaugeCells is the width of the memory gauge's bar; gaugeNameCells the
// most its cgroup's name takes.
const (
	gaugeCells     = 20
	gaugeNameCells = 24
)

// gauges are the parts of the home cgroup's line: its memory against its
// limit with the danger threshold marked, its CPU against its quota, and
// DANGER when either is at or over the threshold.
func (m *Model) gauges(st styles) []render.Part {
	s := m.frame.Home
	if s == nil || s.Totals.Cgroup == nil {
		return []render.Part{newPart("cgroup: none with a limit (run inside a cgroup or pod with memory.max set)", 10)}
	}
	u := s.Totals.Cgroup
	// A long path (a pod's, a container's) is cut in its middle: the
	// figures beside it matter more than its every character.
	parts := []render.Part{newPart("cgroup "+textwidth.CutMiddle(procwalk.Printable(s.Name), gaugeNameCells), 8)}
	danger := false
	if u.MemoryLimitBytes > 0 && u.HaveMemoryUsage {
		parts = append(parts, newPart("mem "+m.gauge(st, u.MemoryPercent), 5),
			newPart(fmt.Sprintf("%.0f%% of %s", u.MemoryPercent, procwalk.FormatBytes(u.MemoryLimitBytes)), 9),
			newPart(fmt.Sprintf("(members RSS %s)", procwalk.FormatBytes(s.Totals.RSSBytes)), 2))
		danger = u.MemoryPercent >= m.cfg.DangerPercent
	} else {
		parts = append(parts, newPart(fmt.Sprintf("mem no limit (members RSS %s)", procwalk.FormatBytes(s.Totals.RSSBytes)), 6))
	}
	if u.CPUQuotaCores > 0 {
		cpu := fmt.Sprintf("cpu %.2f of %.2f cores", u.CPUCoresUsed, u.CPUQuotaCores)
		if u.CPUCoresUsed/u.CPUQuotaCores*100 >= m.cfg.DangerPercent {
			danger = true
			cpu = st.danger.Render(cpu)
		}
		parts = append(parts, newPart(cpu, 7))
	}
	if danger {
		parts = append(parts, newPart(st.alarm.Render("DANGER"), 11))
	}
	return parts
}

// gauge is a bar of gaugeCells cells filled to percent, in the danger
// colour from the threshold on, with the threshold's mark between two
// cells (it hides no cell).
func (m *Model) gauge(st styles, percent float64) string {
	g := m.glyphs
	fill := int(percent / 100 * gaugeCells)
	mark := int(m.cfg.DangerPercent / 100 * gaugeCells)
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i <= gaugeCells; i++ {
		if i == mark {
			b.WriteString(st.marker.Render(g.mark))
		}
		if i == gaugeCells {
			break
		}
		switch {
		case i < fill && i >= mark:
			b.WriteString(st.danger.Render(g.full))
		case i < fill:
			b.WriteString(st.gaugeUsed.Render(g.full))
		default:
			b.WriteString(g.empty)
		}
	}
	b.WriteString("]")
	return b.String()
}
