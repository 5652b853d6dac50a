//go:build linux

package top

import (
	"strings"

	"github.com/procwalk/procwalk/cmd/procwalk/top/table"
	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// glyphs are the characters the view draws with besides text: Unicode on
// a UTF-8 terminal, ASCII where the locale says the terminal is not one
// (LANG=C), as top(1) and htop do.
type glyphs struct {
	down, up                 string // the sorted column's arrow
	full, empty, mark        string // gauge cells and its danger threshold
	tee, elbow, pipe, indent string // tree connectors, 2 cells each but indent
	folded, unfolded         string // a tree node with children
	cursor                   string // the filter's and the search's cursor
	cut                      string // marks cut text
	selected                 string // the selected row, where no reverse video shows
	spark                    []string
}

func glyphSet(ascii bool) glyphs {
	if ascii {
		return glyphs{down: "v", up: "^", full: "#", empty: ".", mark: "|",
			tee: "|-", elbow: "`-", pipe: "| ", indent: "  ", folded: "+", unfolded: "-",
			cursor: "_", cut: "~", selected: ">", spark: []string{"_", ".", "-", "~", "=", "*", "#", "@"}}
	}
	return glyphs{down: "↓", up: "↑", full: "█", empty: "·", mark: "│",
		tee: "├─", elbow: "└─", pipe: "│ ", indent: "  ", folded: "▸", unfolded: "▾",
		cursor: "▏", cut: textwidth.Ellipsis, selected: "▶", spark: []string{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}}
}

// treePrefix is the connectors before a tree row's name: a line down
// through each ancestor that has later siblings, then the row's own tee or
// elbow.
func (g glyphs) treePrefix(r *table.Row) string {
	if r.Depth == 0 {
		return ""
	}
	var b strings.Builder
	for d := 1; d < int(r.Depth); d++ {
		if d <= 64 && r.Lines&(1<<(d-1)) != 0 {
			b.WriteString(g.pipe)
		} else {
			b.WriteString(g.indent)
		}
	}
	if r.Last {
		b.WriteString(g.elbow)
	} else {
		b.WriteString(g.tee)
	}
	return b.String()
}

// sparkline draws values (oldest first) as one cell each, scaled between
// 0 and top (0: the largest of values).
func (g glyphs) sparkline(values []float64, top float64) string {
	if top <= 0 {
		for _, v := range values {
			top = max(top, v)
		}
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if top > 0 {
			i = min(int(max(v, 0)/top*float64(len(g.spark)-1)+0.5), len(g.spark)-1)
		}
		b.WriteString(g.spark[max(i, 0)])
	}
	return b.String()
}

// ASCIILocale reports whether the locale (LC_ALL, else LC_CTYPE, else LANG,
// as the C library reads them) names no UTF-8 character set: the view then
// draws in ASCII.
func ASCIILocale(getenv func(string) string) bool {
	for _, name := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(name); v != "" {
			v = strings.ToLower(v)
			return !strings.Contains(v, "utf-8") && !strings.Contains(v, "utf8")
		}
	}
	return true // the C locale
}
