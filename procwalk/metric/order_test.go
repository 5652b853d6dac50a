//go:build linux

package metric

import (
	"slices"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

func TestParseProcessOrder(t *testing.T) {
	for _, tt := range []struct {
		name, want, by string // by: the metric, "" pid
		ok             bool
		needs          procwalk.Fields
		rates          bool
	}{
		{" RSS ", "rss", "rss_bytes", true, 0, false},
		{"pid", "pid", "", true, 0, false},
		{"cpu", "cpu", "cpu_percent", true, 0, true},
		{"pss", "pss", "pss_bytes", true, procwalk.FieldSmaps, false},
		{"bogus", "bogus", "", false, 0, false},
		{"procs", "procs", "", false, 0, false}, // a session metric
	} {
		o, ok := ParseProcessOrder(tt.name)
		by := ""
		if o.By != nil {
			by = o.By.Name
		}
		if ok != tt.ok || o.Name != tt.want || by != tt.by || o.Needs()&tt.needs != tt.needs || o.NeedsRates() != tt.rates {
			t.Errorf("%q: %q by %q ok %v needs %v rates %v; want %q by %q ok %v needs %v rates %v",
				tt.name, o.Name, by, ok, o.Needs(), o.NeedsRates(), tt.want, tt.by, tt.ok, tt.needs, tt.rates)
		}
	}
	if names := ProcessSortNames(); names[len(names)-1] != "pid" || !slices.Contains(names, "rss") || slices.Contains(names, "tty") {
		t.Errorf("sort names %v: want the short names (no ids), then pid", names)
	}
}

func TestProcessOrderSort(t *testing.T) {
	procs := []*procwalk.Process{{ID: procwalk.ProcID{PID: 9}, RSSBytes: 1}, {ID: procwalk.ProcID{PID: 3}, RSSBytes: 3}, {ID: procwalk.ProcID{PID: 5}, RSSBytes: 2}}
	pids := func() (got []int) {
		for _, p := range procs {
			got = append(got, p.ID.PID)
		}
		return got
	}
	s := procwalk.NewSnapshot(procwalk.Host{ClockTicks: 100}, 0, 0, nil, procwalk.Visibility{})
	o, _ := ParseProcessOrder("pid")
	o.Sort(s, procs)
	if got := pids(); !slices.Equal(got, []int{3, 5, 9}) {
		t.Errorf("by pid: %v", got)
	}
	o, _ = ParseProcessOrder("rss")
	o.Sort(s, procs)
	if got := pids(); !slices.Equal(got, []int{3, 5, 9}) {
		t.Errorf("by rss: %v", got)
	}
	procs[0].RSSBytes = 0
	o.Sort(s, procs)
	if got := pids(); !slices.Equal(got, []int{5, 9, 3}) {
		t.Errorf("by rss, 3 shrunk: %v", got)
	}
}

func TestSessionOrder(t *testing.T) {
	mk := func(name string, rss uint64, pids ...int) session.Session {
		s := session.Session{Kind: "tmux", Name: name}
		s.Totals.RSSBytes = rss
		for _, pid := range pids {
			s.Members = append(s.Members, procwalk.ProcID{PID: pid})
		}
		return s
	}
	for _, tt := range []struct {
		by   string
		want []string
	}{
		{"name", []string{"a", "b", "c", "d"}},
		{"pid", []string{"d", "c", "a", "b"}}, // d has no members
		{"rss", []string{"b", "c", "a", "d"}},
	} {
		sessions := []session.Session{mk("a", 1, 40), mk("b", 30, 50, 7), mk("c", 20, 8), mk("d", 0)}
		o, ok := ParseSessionOrder(tt.by)
		if !ok {
			t.Fatalf("%s: no order", tt.by)
		}
		o.Sort(sessions, 0, time.Time{})
		var got []string
		for _, s := range sessions {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("by %s: %v; want %v", tt.by, got, tt.want)
		}
	}
	for _, bad := range []string{"bogus", "ppid", "Name"} {
		if o, ok := ParseSessionOrder(bad); ok || o.Name != bad {
			t.Errorf("%q: ok %v, name %q", bad, ok, o.Name)
		}
	}
	if names := SessionSortNames(); !slices.Equal(names[len(names)-2:], []string{"name", "pid"}) || !slices.Contains(names, "rss") {
		t.Errorf("sort names %v", names)
	}
}

func TestDefaultSessionOrder(t *testing.T) {
	for _, tt := range []struct {
		kinds  []string
		pss    bool
		want   string
		metric string // By's name, "" for none
	}{
		{[]string{session.KindAgent}, false, "name", ""},
		{[]string{session.KindAgent}, true, "name", ""},
		{[]string{session.KindAgent, session.KindTmux}, false, "rss", "rss_bytes"},
		{[]string{session.KindTmux}, true, "pss", "pss_bytes"},
		{nil, false, "rss", "rss_bytes"},
	} {
		o := DefaultSessionOrder(tt.kinds, tt.pss)
		by := ""
		if o.By != nil {
			by = o.By.Name
		}
		if o.Name != tt.want || by != tt.metric || o.By == nil && o.cmp == nil {
			t.Errorf("DefaultSessionOrder(%q, %v) = %s by %q; want %s by %q", tt.kinds, tt.pss, o.Name, by, tt.want, tt.metric)
		}
	}
}
