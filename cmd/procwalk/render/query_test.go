//go:build linux

package render

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

func order(t *testing.T, name string) metric.ProcessOrder {
	t.Helper()
	o, ok := metric.ParseProcessOrder(name)
	if !ok {
		t.Fatalf("sort key %q unknown", name)
	}
	return o
}

// The files read are the union of what is shown, sorted and filtered.
func TestProcessQueryReadsOnlyWhatIsAsked(t *testing.T) {
	for _, tt := range []struct {
		columns, sort, filter string
		byUID                 bool // a filter on the owner (uid 0)
		noRates, json         bool
		want, later           procwalk.Fields
	}{
		{columns: "pid,ppid,rss,comm", sort: "rss", noRates: true, want: 0},
		{columns: "pid,user,comm", sort: "pid", noRates: true, want: procwalk.FieldOwner},
		{columns: "pid,rss,command", sort: "rss", noRates: true, want: procwalk.FieldCmdline},
		{columns: "pid,comm", sort: "rss", filter: "make", noRates: true, want: procwalk.FieldCmdline},
		{columns: "pid,comm", sort: "rss", byUID: true, noRates: true, want: procwalk.FieldOwner},
		{columns: "pid,cpu,comm", sort: "rss", want: 0},
		{columns: "pid,read", sort: "rss", want: procwalk.FieldIO},
		{columns: "pid,comm", sort: "io", want: procwalk.FieldIO},
		{columns: "pid,fds,oom_score", sort: "swap", noRates: true, want: procwalk.FieldFDs | procwalk.FieldOOMScore | procwalk.FieldSwap},
		// smaps_rollup takes each target's mmap lock: read after the
		// scan for the rows shown, unless a PSS or USS growth rate is
		// shown, which needs it in both samples.
		{columns: "pid,comm", sort: "pss", noRates: true, later: procwalk.FieldSmaps},
		{columns: "pid,pss,comm", sort: "rss", filter: "make", want: procwalk.FieldCmdline, later: procwalk.FieldSmaps},
		{columns: "pid,pss_growth,comm", sort: "rss", want: procwalk.FieldSmaps},
		{columns: "pid,comm", sort: "uss_growth", want: procwalk.FieldSmaps},
		// JSON's status holds the owner: no FieldOwner for a uid filter.
		{sort: "pss", json: true, byUID: true, noRates: true, want: procwalk.FieldStatus | procwalk.FieldCmdline, later: procwalk.FieldSmaps},
		{sort: "pss", json: true, want: procwalk.FieldStatus | procwalk.FieldCmdline | procwalk.FieldIO | procwalk.FieldSmaps},
	} {
		q, err := NewProcessQuery(order(t, tt.sort), tt.columns, tt.json, false, tt.noRates)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		q.Filter.Contains = tt.filter
		if tt.byUID {
			q.Filter.UID = 0
		}
		if scan, later := q.Fields(); scan != tt.want || later != tt.later {
			t.Errorf("columns %s, sort %s, filter %q, by uid %v, json %v: reads %q then %q, want %q then %q",
				tt.columns, tt.sort, tt.filter, tt.byUID, tt.json, scan, later, tt.want, tt.later)
		}
	}
}

// What a query asks for follows from its names: PSS from a sort or column
// that needs it (and the default columns then show it), rates from JSON
// or a rate shown, none when turned off.
func TestNewProcessQuery(t *testing.T) {
	names := func(cols []ProcessColumn) string {
		var s []string
		for _, c := range cols {
			s = append(s, c.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tt := range []struct {
		sort, columns      string
		json, pss, noRates bool
		wantCols           string
		wantPSS, wantRates bool
		wantUsers          bool
	}{
		{sort: "rss", wantCols: "pid,ppid,user,state,threads,rss,cpu,read,write,time,age,command", wantRates: true, wantUsers: true},
		{sort: "rss", noRates: true, wantCols: "pid,ppid,user,state,threads,rss,time,age,command", wantUsers: true},
		{sort: "pss", noRates: true, wantCols: "pid,ppid,user,state,threads,rss,pss,uss,time,age,command", wantPSS: true, wantUsers: true},
		{sort: "rss", pss: true, noRates: true, wantCols: "pid,ppid,user,state,threads,rss,pss,uss,time,age,command", wantPSS: true, wantUsers: true},
		{sort: "rss", columns: " PID, Uss ,comm", noRates: true, wantCols: "pid,uss,comm", wantPSS: true},
		{sort: "cpu", columns: "pid,comm", wantCols: "pid,comm", wantRates: true},
		{sort: "rss", columns: "pid,comm", wantCols: "pid,comm"},
		{sort: "rss", columns: "pid,comm", json: true, wantCols: "pid,comm", wantRates: true, wantUsers: true},
		{sort: "rss", columns: "pid,comm", json: true, noRates: true, wantCols: "pid,comm", wantUsers: true},
	} {
		q, err := NewProcessQuery(order(t, tt.sort), tt.columns, tt.json, tt.pss, tt.noRates)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if got := names(q.Columns); got != tt.wantCols || q.PSS != tt.wantPSS || q.Rates != tt.wantRates || q.ShowsUsers() != tt.wantUsers {
			t.Errorf("%+v: columns %s, pss %v, rates %v, users %v; want %s, %v, %v, %v", tt, got, q.PSS, q.Rates, q.ShowsUsers(),
				tt.wantCols, tt.wantPSS, tt.wantRates, tt.wantUsers)
		}
	}
}

func TestNewProcessQueryRefuses(t *testing.T) {
	for _, tt := range []struct {
		sort, columns string
		noRates       bool
		want          QueryError
	}{
		{sort: "rss", columns: "pid,bogus", want: QueryError{Option: "columns", Name: "bogus", Err: ErrUnknownColumn}},
		{sort: "rss", columns: "pid,CPU", noRates: true, want: QueryError{Option: "columns", Name: "cpu", Err: ErrNeedsRates}},
		{sort: "io", columns: "pid", noRates: true, want: QueryError{Option: "sort", Name: "io", Err: ErrNeedsRates}},
	} {
		_, err := NewProcessQuery(order(t, tt.sort), tt.columns, false, false, tt.noRates)
		var qe *QueryError
		if !errors.As(err, &qe) || *qe != tt.want || !errors.Is(err, tt.want.Err) {
			t.Errorf("sort %s columns %s no rates %v: error %v, want %v", tt.sort, tt.columns, tt.noRates, err, &tt.want)
		}
	}
}

// Rows filters, sorts and cuts, and reads smaps_rollup of the rows shown
// alone.
func TestProcessQueryRows(t *testing.T) {
	fsys, err := procwalk.NewFS("../../../procwalk/testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewProcessQuery(order(t, "rss"), "pid,pss,comm", false, false, true)
	if err != nil {
		t.Fatal(err)
	}
	q.Limit = 2
	scan, _ := q.Fields()
	f, err := frame.New(fsys, frame.Config{Fields: scan, NoRates: true}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := q.Rows(f)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.ID.PID)
		if p.Read&procwalk.FieldSmaps == 0 {
			t.Errorf("pid %d shown without its smaps_rollup read", p.ID.PID)
		}
	}
	if !slices.Equal(pids, []int{111, 120}) {
		t.Errorf("rows %v, want [111 120] (largest RSS first, two)", pids)
	}
	for i := range f.Snapshot.Procs {
		if p := &f.Snapshot.Procs[i]; !slices.Contains(pids, p.ID.PID) && p.Read&procwalk.FieldSmaps != 0 {
			t.Errorf("pid %d, not shown, had its smaps_rollup read", p.ID.PID)
		}
	}

	// Sorted by PSS, every match is read before sorting; the filter
	// leaves bash alone.
	if q, err = NewProcessQuery(order(t, "pss"), "pid,comm", false, false, true); err != nil {
		t.Fatal(err)
	}
	q.Filter.Contains = "bash"
	if f, err = frame.New(fsys, frame.Config{NoRates: true}).Gather(); err != nil {
		t.Fatal(err)
	}
	if procs, err = q.Rows(f); err != nil {
		t.Fatal(err)
	}
	pids = pids[:0]
	for _, p := range procs {
		pids = append(pids, p.ID.PID)
	}
	if !slices.Equal(pids, []int{102, 101}) {
		t.Errorf("bash by pss: rows %v, want [102 101]", pids)
	}
}

// A tree is drawn from PID's subtree or every root, kernel threads on
// request or below a kernel PID, and what is read later is read of the
// processes drawn alone.
func TestTreeQueryRead(t *testing.T) {
	fsys, err := procwalk.NewFS("../../../procwalk/testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	gather := func() frame.Frame {
		t.Helper()
		f, err := frame.New(fsys, frame.Config{NoRates: true}).Gather()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	pidsOf := func(procs []*procwalk.Process) []int {
		var pids []int
		for _, p := range procs {
			pids = append(pids, p.ID.PID)
		}
		return pids
	}
	readOf := func(f frame.Frame, field procwalk.Fields) []int {
		var pids []int
		for i := range f.Snapshot.Procs {
			if p := &f.Snapshot.Procs[i]; p.Read&field != 0 {
				pids = append(pids, p.ID.PID)
			}
		}
		slices.Sort(pids)
		return pids
	}
	kthread := func(f frame.Frame) *procwalk.Process { return f.Snapshot.Process(3) }

	f := gather()
	roots, shown, err := TreeQuery{}.Read(f)
	if err != nil || !slices.Equal(pidsOf(roots), []int{1, 400}) || shown(kthread(f)) || !shown(f.Snapshot.Process(111)) {
		t.Errorf("every root: %v, %v, kernel thread shown %v; want [1 400] without kernel threads", pidsOf(roots), err, shown(kthread(f)))
	}
	roots, shown, _ = TreeQuery{Kernel: true}.Read(f)
	if !slices.Equal(pidsOf(roots), []int{1, 2, 400}) || !shown(kthread(f)) {
		t.Errorf("--kernel: roots %v, kernel thread shown %v", pidsOf(roots), shown(kthread(f)))
	}
	roots, shown, _ = TreeQuery{PID: 2}.Read(f)
	if !slices.Equal(pidsOf(roots), []int{2}) || !shown(kthread(f)) {
		t.Errorf("a kernel PID: roots %v, its threads shown %v; want them shown", pidsOf(roots), shown(kthread(f)))
	}
	if _, _, err := (TreeQuery{PID: 999999}).Read(f); !errors.Is(err, ErrNoProcess) {
		t.Errorf("pid 999999: %v, want ErrNoProcess", err)
	}
	if got := readOf(f, procwalk.FieldSmaps|procwalk.FieldCmdline); got != nil {
		t.Errorf("nothing asked, yet %v read later", got)
	}

	f = gather()
	if _, _, err := (TreeQuery{PID: 110, PSS: true}).Read(f); err != nil {
		t.Fatal(err)
	}
	if got := readOf(f, procwalk.FieldSmaps); !slices.Equal(got, []int{110, 111}) {
		t.Errorf("--pss 110: smaps_rollup read of %v, want [110 111]", got)
	}
	f = gather()
	if _, _, err := (TreeQuery{PID: 102, JSON: true}).Read(f); err != nil {
		t.Fatal(err)
	}
	if got := readOf(f, procwalk.FieldCmdline); !slices.Equal(got, []int{102, 120, 121}) || readOf(f, procwalk.FieldSmaps) != nil {
		t.Errorf("--json 102: command lines read of %v, want [102 120 121] and no smaps_rollup", got)
	}
}
