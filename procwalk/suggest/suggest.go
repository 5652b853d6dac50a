// Package suggest finds, among the names that exist, those closest to one
// that does not: the "did you mean" of an unknown session, flag or
// command.
package suggest

import (
	"cmp"
	"slices"
	"strings"
)

// Closest returns at most n of candidates close to name, closest first:
// the same name in another case or after a "server/" qualifier (a tmux
// session that several servers have), then names that start with or hold
// name (or that name starts with), then names within a few edits (one per
// three characters, at least one). A name without "/" is also held against
// what follows a candidate's last "/", so a typo of a bare tmux name that
// several servers share finds each server's. Ties keep the candidates'
// order.
func Closest(name string, candidates []string, n int) []string {
	lower := strings.ToLower(name)
	type scored struct {
		name  string
		score int
		at    int
	}
	var found []scored
	for i, c := range candidates {
		lc := strings.ToLower(c)
		score := closeness(lower, lc)
		if base := lc[strings.LastIndexByte(lc, '/')+1:]; base != "" && base != lc && !strings.Contains(lower, "/") {
			if s := closeness(lower, base); s >= 0 && (score < 0 || s < score) {
				score = s
			}
		}
		if score >= 0 {
			found = append(found, scored{c, score, i})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(a.score, b.score) })
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}

// closeness scores candidate c against name (both lower case): 0 the same,
// 1 a prefix either way, 2 holds name, 2+d within d edits; -1 not close.
func closeness(name, c string) int {
	switch {
	case c == name:
		return 0
	case name != "" && (strings.HasPrefix(c, name) || strings.HasPrefix(name, c)):
		return 1
	case len(name) >= 3 && strings.Contains(c, name):
		return 2
	}
	if d := distance(name, c); d <= max(1, len([]rune(name))/3) {
		return 2 + d
	}
	return -1
}

// distance is the Damerau-Levenshtein distance (adjacent swaps count one)
// between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: two back, one back, this one.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
