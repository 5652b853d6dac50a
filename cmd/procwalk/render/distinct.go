//go:build linux

package render

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/procwalk/procwalk/procwalk/textwidth"
)

// distinct.go keeps the cut names of one column apart. CutMiddle keeps a
// long name's start and end; two cgroup paths of one pod's containers, or
// two paths that differ only in their middle, can keep the same start and
// end and then read alike, so that nobody could tell the sessions apart
// nor copy a name. The rule: long cells whose cuts read alike (or like a
// cell that fits) are cut again, all with one layout, the first of these
// under which each reads like no other cell of the column:
//
//  1. one "…", its split moved from CutMiddle's: the tail one rune wider,
//     the head one rune wider, then two, and so on ("/kubepo…a11.scope");
//  2. two "…": a quarter of the runes from the start, a quarter from the
//     end, and between them a window over the first rune where the cells
//     differ ("/us…-1001.sli…ice"), slid off it one rune at a time.
//
// When no layout tells them all apart, the first that parts the most is
// kept for those it parts, and the rest are cut again the same way. A
// cell that fits, and a long cell whose cut reads like no other, print as
// CutMiddle cuts them; cells no cut of the width tells apart (runs of one
// rune that differ only in length) keep CutMiddle's cut. The last column,
// cut at its end, holds text (INFO, a command line) beside a NAME or PID
// that tells its row apart: it is left as CutEnd cuts it.

// distinctCuts returns, for the long cells of one column whose CutMiddle
// cut to n cells reads like another cell, a cut that does not; nil when
// there are none, the common case.
func distinctCuts(cells []string, n int) map[string]string {
	if n < 1 || !cutsMayClash(cells, n) {
		return nil
	}
	for _, c := range cells {
		if textwidth.Width(c) != utf8.RuneCountInString(c) {
			// The layouts count runes, a cell here is no rune a cell (CJK,
			// emoji, combining marks): cutMiddle's cuts, which count cells.
			return nil
		}
	}
	fitting := map[string]bool{} // cells that fit and could read as a cut
	byCut := map[string][]string{}
	var order []string // cut texts in the order of their first cell
	for _, c := range cells {
		if utf8.RuneCountInString(c) <= n {
			if strings.Contains(c, "…") {
				fitting[c] = true
			}
			continue
		}
		cut := CutMiddle(c, n)
		group, seen := byCut[cut]
		if !seen {
			order = append(order, cut)
		}
		if !slices.Contains(group, c) {
			byCut[cut] = append(group, c)
		}
	}
	clash := func(cut string) bool { return len(byCut[cut]) > 1 || fitting[cut] }
	taken := maps.Clone(fitting) // printed already: no new cut may read like it
	for _, cut := range order {
		if !clash(cut) {
			taken[cut] = true
		}
	}
	var out map[string]string
	for _, cut := range order {
		if !clash(cut) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		keepApart(byCut[cut], n, taken, out)
	}
	return out
}

// cutsMayClash reports whether two different long cells of a column cut to
// n runes alike, or a cell that fits holds "…": with one sorted slice, so
// that the common case builds no maps.
func cutsMayClash(cells []string, n int) bool {
	type cut struct{ text, cell string }
	var cuts []cut
	for _, c := range cells {
		switch {
		case utf8.RuneCountInString(c) > n:
			cuts = append(cuts, cut{CutMiddle(c, n), c})
		case strings.Contains(c, "…"):
			return true
		}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return strings.Compare(a.text, b.text) })
	for i := 1; i < len(cuts); i++ {
		if cuts[i].text == cuts[i-1].text && cuts[i].cell != cuts[i-1].cell {
			return true
		}
	}
	return false
}

// keepApart cuts each of group (long cells, all different) to n runes
// under the first layout of cutLayouts that prints each unlike the others
// and unlike taken; else under the one that parts the most of them, those
// still alike cut again. It records the cuts in out and taken.
func keepApart(group []string, n int, taken map[string]bool, out map[string]string) {
	runes := make([][]rune, len(group))
	for i, s := range group {
		runes[i] = []rune(s)
	}
	var best []string
	bestParts := 1
	for _, l := range cutLayouts(runes, n) {
		cuts := make([]string, len(group))
		parts := 0
		ok := true
		for i, r := range runes {
			cuts[i] = l.cut(r)
			if taken[cuts[i]] {
				ok = false
				break
			}
			if !slices.Contains(cuts[:i], cuts[i]) {
				parts++
			}
		}
		if !ok {
			continue
		}
		if parts == len(group) {
			best = cuts
			break
		}
		if parts > bestParts {
			best, bestParts = cuts, parts
		}
	}
	if best == nil {
		// No cut of n runes parts any of them.
		for _, s := range group {
			out[s] = CutMiddle(s, n)
			taken[out[s]] = true
		}
		return
	}
	alike := map[string][]string{}
	for i, s := range group {
		alike[best[i]] = append(alike[best[i]], s)
	}
	for i, s := range group { // the parted ones first: the others avoid them
		if len(alike[best[i]]) == 1 {
			out[s] = best[i]
			taken[best[i]] = true
		}
	}
	for i, s := range group {
		if rest := alike[best[i]]; len(rest) > 1 && rest[0] == s {
			keepApart(rest, n, taken, out)
		}
	}
}

// cutLayout is which runes of a long cell a cut keeps: head runes from
// its start and tail from its end, and when win > 0 also the win runes
// from rune off; "…" stands for each part left out.
type cutLayout struct{ head, off, win, tail int }

// fits reports whether l leaves at least one rune out of each gap in a
// cell of length runes.
func (l cutLayout) fits(length int) bool {
	if l.win == 0 {
		return l.head+l.tail < length
	}
	return l.head < l.off && l.off+l.win < length-l.tail
}

func (l cutLayout) cut(r []rune) string {
	s := string(r[:l.head]) + "…"
	if l.win > 0 {
		s += string(r[l.off:l.off+l.win]) + "…"
	}
	return s + string(r[len(r)-l.tail:])
}

// cutLayouts lists, in the order the rule at the top of this file gives,
// the layouts of n runes that fit every cell of group.
func cutLayouts(group [][]rune, n int) []cutLayout {
	shortest := len(group[0])
	for _, r := range group {
		shortest = min(shortest, len(r))
	}
	var ls []cutLayout
	add := func(l cutLayout) {
		if l.fits(shortest) {
			ls = append(ls, l)
		}
	}
	// 1. One "…": CutMiddle's split, then the tail and the head widened
	// in turn.
	tail := (n - 1) / 2
	for d := 0; d < n; d++ {
		if t := tail + d; t <= n-1 {
			add(cutLayout{head: n - 1 - t, tail: t})
		}
		if t := tail - d; d > 0 && t >= 0 {
			add(cutLayout{head: n - 1 - t, tail: t})
		}
	}
	// 2. Two "…" around a window centred on the first rune where the
	// cells differ, then slid from it right and left in turn.
	edge := (n - 2) / 4
	win := n - 2 - 2*edge
	if win < 1 {
		return ls
	}
	differ := shortest
	for i := range shortest {
		if slices.ContainsFunc(group, func(r []rune) bool { return r[i] != group[0][i] }) {
			differ = i
			break
		}
	}
	centre := differ - (win-1)/2
	for d := 0; d < shortest; d++ {
		add(cutLayout{head: edge, off: centre + d, win: win, tail: edge})
		if d > 0 {
			add(cutLayout{head: edge, off: centre - d, win: win, tail: edge})
		}
	}
	return ls
}
