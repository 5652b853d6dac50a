//go:build linux

package render

import "strings"

// Part is a piece of a one-line summary (the live view's header) that
// goes whole or not at all: a number is never cut in half.
type Part struct {
	Text  string // as printed, styles included
	Width int    // the cells Text takes on a terminal, styles not counted
	Rank  int    // how much it matters: the lowest ranked go first
}

// JoinParts joins parts two spaces apart, leaving out the lowest ranked
// (the first of equal ranks) until the line is at most width cells. The
// first part always stays: when even it alone is wider, the line is, and
// the caller cuts it.
func JoinParts(parts []Part, width int) string {
	keep := make([]bool, len(parts))
	total := -2
	for i, p := range parts {
		keep[i] = true
		total += p.Width + 2
	}
	for total > width {
		drop := -1
		for i, p := range parts {
			if keep[i] && i > 0 && (drop < 0 || p.Rank < parts[drop].Rank) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		keep[drop] = false
		total -= parts[drop].Width + 2
	}
	var b strings.Builder
	for i, p := range parts {
		if !keep[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
