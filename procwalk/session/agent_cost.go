//go:build linux

package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// agent_cost.go prices an agent's tokens with a table its user supplies:
// procwalk carries no prices, which would go stale without a word. A line
// of the table names a model family (a prefix of model names: the longest
// that matches wins) and its prices in USD per million tokens:
//
//	# FAMILY            INPUT  OUTPUT  CACHE-READ  CACHE-WRITE-5M  CACHE-WRITE-1H
//	claude-opus-4-5     5      25      0.50        6.25            10
//	gpt-5               1.25   10      0.125       0               0
//
// CACHE-WRITE-1H may be left out when the family has no one-hour cache.

// Price is a model family's price, USD per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite5m, CacheWrite1h float64
	// Has1h says whether the table gave a one-hour cache write price.
	Has1h bool
}

// PriceTable maps model families to their prices.
type PriceTable struct {
	// Source names where the table came from, for messages.
	Source   string
	Families map[string]Price
}

// maxPriceFile bounds the price table file.
const maxPriceFile = 1 << 20

// ErrBadPrices is wrapped by the errors of a price table.
var ErrBadPrices = errors.New("bad price table")

// LoadPriceTable reads a price table file (the operator's: read as a file
// of any owner, but never a FIFO or a link).
func LoadPriceTable(path string) (*PriceTable, error) {
	b, err := fsio.ReadUserFile(path, fsio.AnyOwner, maxPriceFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPrices, err)
	}
	return ParsePriceTable(path, b)
}

// ParsePriceTable reads a price table: one family a line, '#' comments.
func ParsePriceTable(source string, b []byte) (*PriceTable, error) {
	p := &PriceTable{Source: source, Families: map[string]Price{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxPriceFile)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(why string) error {
			return fmt.Errorf("%w: %s line %d %q: %s; want FAMILY INPUT OUTPUT CACHE-READ CACHE-WRITE-5M [CACHE-WRITE-1H], USD per million tokens", ErrBadPrices, source, n, strings.TrimSpace(line), why)
		}
		if len(f) != 5 && len(f) != 6 {
			return nil, bad(fmt.Sprintf("%d fields", len(f)))
		}
		var v [5]float64
		for i, s := range f[1:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, bad(fmt.Sprintf("%q is not a price", s))
			}
			v[i] = x
		}
		if _, dup := p.Families[f[0]]; dup {
			return nil, bad("the family is listed twice")
		}
		p.Families[f[0]] = Price{v[0], v[1], v[2], v[3], v[4], len(f) == 6}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadPrices, source, err)
	}
	if len(p.Families) == 0 {
		return nil, fmt.Errorf("%w: %s lists no model family", ErrBadPrices, source)
	}
	return p, nil
}

// price is model's: the longest family prefix's.
func (p *PriceTable) price(model string) (Price, bool) {
	best, found := "", false
	for fam := range p.Families {
		if strings.HasPrefix(model, fam) && (!found || len(fam) > len(best)) {
			best, found = fam, true
		}
	}
	return p.Families[best], found
}

// Cost prices the counts of each model, USD; unpriced lists the models with
// tokens the table has no price for (then the cost is not known).
func (p *PriceTable) Cost(by []ModelTokens) (usd float64, unpriced []string) {
	for _, m := range by {
		c := m.TokenCounts
		if c.InputTokens == 0 && c.OutputTokens == 0 && c.CacheReadTokens == 0 && c.CacheCreationTokens == 0 {
			continue
		}
		pr, ok := p.price(m.Model)
		oneHour := c.CacheCreation1hTokens
		if ok && oneHour > 0 && !pr.Has1h {
			ok = false // one-hour cache writes, no price for them
		}
		if !ok {
			name := m.Model
			if name == "" {
				name = "(unnamed)"
			}
			unpriced = append(unpriced, name)
			continue
		}
		// Cache writes the usage does not split are five-minute ones, the
		// default lifetime.
		fiveMin := c.CacheCreationTokens - oneHour
		usd += (float64(c.InputTokens)*pr.Input + float64(c.OutputTokens)*pr.Output + float64(c.CacheReadTokens)*pr.CacheRead +
			float64(fiveMin)*pr.CacheWrite5m + float64(oneHour)*pr.CacheWrite1h) / 1e6
	}
	slices.Sort(unpriced)
	return usd, slices.Compact(unpriced)
}

// mergeModels adds the counts of each list by model.
func mergeModels(lists ...[]ModelTokens) []ModelTokens {
	sum := map[string]TokenCounts{}
	for _, l := range lists {
		for _, m := range l {
			c := sum[m.Model]
			c.Add(m.TokenCounts)
			sum[m.Model] = c
		}
	}
	out := make([]ModelTokens, 0, len(sum))
	for _, model := range slices.Sorted(maps.Keys(sum)) {
		out = append(out, ModelTokens{model, sum[model]})
	}
	return out
}
