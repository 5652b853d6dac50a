//go:build linux

package plugin

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/bpfsource"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// fakeAcc records what Gather adds, as InfluxDB would store it: the
// metrics of one measurement, tag set and time that Telegraf gets in turn
// (a line's gauges, counters and strings) are one point. kinds records how
// each field was added: "gauge", "counter" or "untyped".
type fakeAcc struct {
	points []point
	kinds  map[string]string // "measurement field" -> kind
	errs   []error
}

func (a *fakeAcc) add(kind, m string, f map[string]interface{}, tags map[string]string, t []time.Time) {
	if a.kinds == nil {
		a.kinds = map[string]string{}
	}
	for k := range f {
		a.kinds[m+" "+k] = kind
	}
	if n := len(a.points); n > 0 {
		last := &a.points[n-1]
		if last.measurement == m && last.time.Equal(t[0]) && maps.Equal(last.tags, tags) {
			for k, v := range f {
				last.fields[k] = v
			}
			return
		}
	}
	a.points = append(a.points, point{measurement: m, tags: tags, fields: maps.Clone(f), time: t[0]})
}

func (a *fakeAcc) AddFields(m string, f map[string]interface{}, tags map[string]string, t ...time.Time) {
	a.add("untyped", m, f, tags, t)
}
func (a *fakeAcc) AddGauge(m string, f map[string]interface{}, tags map[string]string, t ...time.Time) {
	a.add("gauge", m, f, tags, t)
}
func (a *fakeAcc) AddCounter(m string, f map[string]interface{}, tags map[string]string, t ...time.Time) {
	a.add("counter", m, f, tags, t)
}
func (a *fakeAcc) AddSummary(m string, f map[string]interface{}, tags map[string]string, t ...time.Time) {
	a.add("summary", m, f, tags, t)
}
func (a *fakeAcc) AddHistogram(m string, f map[string]interface{}, tags map[string]string, t ...time.Time) {
	a.add("histogram", m, f, tags, t)
}
func (a *fakeAcc) SetPrecision(time.Duration) {}
func (a *fakeAcc) AddError(err error)         { a.errs = append(a.errs, err) }

// The compiled-in input types its fields by the catalogue: counters with
// AddCounter, gauges and rates with AddGauge, strings untyped; procstat's
// schema is untyped, as procstat is.
func TestGatherTypesFields(t *testing.T) {
	in := &Input{Proc: fixtureProc, Passwd: "testdata/passwd", Options: session.Options{Kinds: []string{"user"}}, ProcessTop: 1}
	if err := in.Init(); err != nil {
		t.Fatal(err)
	}
	var acc fakeAcc
	for range 2 { // the second has rates
		if err := in.Gather(&acc); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{
		"procwalk_session cpu_time_seconds": "counter", "procwalk_session rss_bytes": "gauge", "procwalk_session cpu_percent": "gauge",
		"procwalk_session partial": "gauge", "procwalk_process cpu_time_seconds": "counter", "procwalk_process read_bytes_per_second": "",
		"procwalk_process comm": "untyped", "procwalk_process cmdline": "untyped", "procwalk_process pid": "gauge",
		"procwalk cpu_time_seconds": "counter", "procwalk gathers_skipped": "counter", "procwalk processes": "gauge", "procwalk source": "untyped",
	} {
		if got := acc.kinds[key]; got != want {
			t.Errorf("%s added as %q, want %q", key, got, want)
		}
	}
	ps := &Input{Proc: fixtureProc, Passwd: "testdata/passwd", Schema: SchemaProcstat, SkipSelfMetrics: true}
	if err := ps.Init(); err != nil {
		t.Fatal(err)
	}
	acc = fakeAcc{}
	if err := ps.Gather(&acc); err != nil {
		t.Fatal(err)
	}
	for key, kind := range acc.kinds {
		if kind != "untyped" {
			t.Errorf("procstat schema: %s added as %s, want untyped as procstat", key, kind)
		}
	}
}

func TestInitNamesTheBadOption(t *testing.T) {
	tests := []struct {
		in   Input
		want string // the option the error must name
	}{
		{Input{Proc: "/nonexistent"}, "proc"},
		{Input{Proc: fixtureProc, Schema: "influx"}, "schema"},
		{Input{Proc: fixtureProc, Options: session.Options{Kinds: []string{"tmux", "podz"}}}, "session_kinds"},
		{Input{Proc: fixtureProc, ProcessTop: MaxTop + 1}, "process_top"},
		{Input{Proc: fixtureProc, ProcessTop: -1}, "process_top"},
		{Input{Proc: fixtureProc, ProcessTop: 3, ProcessTopBy: "memory"}, "process_top_by"},
		{Input{Proc: fixtureProc, ProcessTop: 3, ProcessTopBy: "pss_bytes"}, "pss"},
		{Input{Proc: fixtureProc, ProcessTop: 3, ProcessMatch: "(unclosed"}, "process_match"},
		{Input{Proc: fixtureProc, ProcessMatch: "bash"}, "process_top"},
		{Input{Proc: fixtureProc, Schema: SchemaProcstat, ProcstatPattern: "a", ProcstatUser: "root"}, "procstat_user"},
		{Input{Proc: fixtureProc, Schema: SchemaProcstat, ProcstatExe: "*"}, "procstat_exe"},
		{Input{Proc: fixtureProc, Schema: SchemaProcstat, ProcstatTagWith: []string{"cpu"}}, "procstat_tag_with"},
		{Input{Proc: fixtureProc, ProcstatPattern: "x"}, "schema"},
		{Input{Proc: fixtureProc, Schema: SchemaProcstat, ProcessTop: 2}, "process_top"},
		{Input{Proc: fixtureProc, Options: session.Options{TmuxSockets: []string{"main", " "}}}, "tmux_sockets"},
		{Input{Proc: fixtureProc, Options: session.Options{CgroupRoot: "testdata/passwd"}}, "cgroup_root"},
		{Input{Proc: fixtureProc, Passwd: "testdata/missing-passwd"}, "passwd"},
		{Input{Proc: fixtureProc, Options: session.Options{DangerPercent: 120}}, "danger_percent"},
		{Input{Proc: fixtureProc, SourceMode: "ebpf"}, "source"},
		{Input{Proc: fixtureProc, Options: session.Options{DangerPercent: math.NaN()}}, "danger_percent"},
		{Input{Proc: fixtureProc, Options: session.Options{Trees: []string{"build=("}}}, "trees"},
		{Input{Proc: fixtureProc, Options: session.Options{GroupsFile: "testdata/no-such-rules"}}, "groups"},
		{Input{Proc: fixtureProc, Options: session.Options{Agents: []string{"no-regex"}}}, "agents"},
		{Input{Proc: fixtureProc, Options: session.Options{AgentTurnTimeout: "soon"}}, "agent_turn_timeout"},
		{Input{Proc: fixtureProc, Options: session.Options{AgentTurnTimeout: "-1m"}}, "agent_turn_timeout"},
		{Input{Proc: fixtureProc, Options: session.Options{AgentBusyCPU: -5}}, "agent_busy_cpu"},
		{Input{Proc: fixtureProc, Options: session.Options{AgentFirstRead: "1k"}}, "agent_first_read"},
	}
	for _, tt := range tests {
		err := tt.in.Init()
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: Init() = %v, want ErrConfig", tt.in, err)
			continue
		}
		if !strings.Contains(err.Error(), opt(tt.want)) {
			t.Errorf("Init() = %q, want it to name %s and its flag", err, tt.want)
		}
	}
}

func TestGatherMatchesLineOutput(t *testing.T) {
	newInput := func() *Input {
		in := &Input{Proc: fixtureProc, Passwd: "testdata/passwd", Options: session.Options{Kinds: []string{"user"}}, ProcessTop: 2, SkipSelfMetrics: true}
		if err := in.Init(); err != nil {
			t.Fatal(err)
		}
		return in
	}
	var acc fakeAcc
	if err := newInput().Gather(&acc); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	if err := newInput().Collector().WriteBatch(&lines, nil); err != nil {
		t.Fatal(err)
	}
	want := decode(t, lines.Bytes())
	if len(acc.points) != len(want) || len(want) != 2+3 {
		t.Fatalf("Gather added %d metrics, line output has %d, want 5 (2 sessions, 3 processes)", len(acc.points), len(want))
	}
	for i := range want {
		got := acc.points[i]
		got.time, want[i].time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("metric %d:\nGather: %+v\nlines:  %+v", i, got, want[i])
		}
	}
	if len(acc.errs) != 0 {
		t.Errorf("AddError called on a complete gather: %v", acc.errs)
	}
}

// selfMetrics is the procwalk self-metrics point of a gather.
func selfMetrics(t *testing.T, in *Input) map[string]interface{} {
	t.Helper()
	var acc fakeAcc
	if err := in.Gather(&acc); err != nil {
		t.Fatal(err)
	}
	for _, p := range acc.points {
		if p.measurement == "procwalk" {
			return p.fields
		}
	}
	t.Fatal("no procwalk self-metrics point")
	return nil
}

// The source option picks the snapshot source as --source does; a BPF
// source that cannot be used is one warning, and the gather reads /proc.
func TestInputSource(t *testing.T) {
	for _, c := range []struct {
		mode, note, warning string
	}{
		{"proc", "asked for proc", ""},
		{"", "auto: bpf --proc is " + fixtureProc, ""},
		{"bpf", "bpf source not used: --proc is " + fixtureProc, "W! bpf source not used"},
	} {
		var log bytes.Buffer
		in := &Input{Proc: fixtureProc, SourceMode: c.mode, Log: NewLineLogger(&log, false)}
		if err := in.Init(); err != nil {
			t.Fatalf("source %q: %v", c.mode, err)
		}
		f := selfMetrics(t, in)
		if f["source"] != "proc" || !strings.HasPrefix(f["source_note"].(string), c.note) {
			t.Errorf("source %q: self-metrics source %v, note %q; want proc, %q", c.mode, f["source"], f["source_note"], c.note)
		}
		if got := log.String(); strings.Count(got, "\n") != min(1, len(c.warning)) || !strings.HasPrefix(got, c.warning) {
			t.Errorf("source %q: log %q, want %q", c.mode, got, c.warning)
		}
		in.Close()
	}
}

// TestInputSourceLive: on the host, as root, auto loads the BPF source.
func TestInputSourceLive(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("loads a BPF program: set PROCWALK_INTEGRATION=1")
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := bpfsource.Allowed(fs); err != nil {
		t.Skipf("the BPF source is not allowed here: %v", err)
	}
	in := &Input{Options: session.Options{Kinds: []string{"user"}}}
	if err := in.Init(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f := selfMetrics(t, in)
	if f["source"] != bpfsource.Name && os.Getenv("CI") == "true" {
		t.Errorf("self-metrics source %v (%v), want bpf", f["source"], f["source_note"])
	}
	t.Logf("source %v: %v", f["source"], f["source_note"])
}

func TestGatherBeforeInit(t *testing.T) {
	var in Input
	if err := in.Gather(&fakeAcc{}); !errors.Is(err, ErrConfig) {
		t.Errorf("Gather before Init = %v, want ErrConfig", err)
	}
}

func TestSampleConfigDocumentsEveryOption(t *testing.T) {
	sample := (&Input{}).SampleConfig()
	var check func(typ reflect.Type)
	check = func(typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous { // session.Options: its options are the input's
				check(f.Type)
				continue
			}
			key := f.Tag.Get("toml")
			if key == "" || key == "-" {
				continue
			}
			if !strings.Contains(sample, "# "+key+" = ") {
				t.Errorf("sample.conf lacks a commented default for %q", key)
			}
		}
	}
	check(reflect.TypeOf(Input{}))
	if !strings.HasPrefix(strings.SplitN(sample, "\n", 3)[1], "[[inputs.procwalk]]") {
		t.Errorf("sample.conf must start with a comment then [[inputs.procwalk]]:\n%s", sample)
	}
}

// A partial failure (here a hook's error) goes to AddError and the metrics
// are still added; Gather itself succeeds.
func TestGatherReportsPartialFailuresWithAddError(t *testing.T) {
	in := &Input{Proc: fixtureProc, Passwd: "testdata/passwd", Options: session.Options{Kinds: []string{"user"}},
		Hook: func(frame.Frame, *Batch) error { return errors.New("rule r2 failed") }}
	if err := in.Init(); err != nil {
		t.Fatal(err)
	}
	var acc fakeAcc
	if err := in.Gather(&acc); err != nil {
		t.Fatalf("Gather = %v, want nil: partial data is not an error", err)
	}
	if len(acc.errs) != 1 || !strings.Contains(acc.errs[0].Error(), "rule r2 failed") {
		t.Errorf("AddError got %v, want the hook's error once", acc.errs)
	}
	sessions, self := 0, 0
	for _, p := range acc.points {
		switch p.measurement {
		case MeasurementSession:
			sessions++
		case MeasurementSelf:
			self++
			if p.fields["errors"] != int64(1) {
				t.Errorf("self metrics errors = %v, want 1", p.fields["errors"])
			}
		}
	}
	if sessions != 2 || self != 1 {
		t.Errorf("%d sessions and %d self lines, want 2 and 1", sessions, self)
	}
}

// Gather fails only when nothing could be gathered, and then adds nothing.
func TestGatherFailsWhenNothingGathered(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/stat", []byte("cpu  1 0 0 0\nbtime 1700000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := &Input{Proc: dir, Schema: SchemaProcstat}
	if err := in.Init(); err != nil {
		t.Fatal(err)
	}
	os.Remove(dir + "/stat") // the host facts can no longer be read
	var acc fakeAcc
	if err := in.Gather(&acc); !errors.Is(err, ErrNothingGathered) {
		t.Errorf("Gather = %v, want ErrNothingGathered", err)
	}
	if len(acc.points) != 0 || len(acc.errs) != 0 {
		t.Errorf("a failed gather added %d metrics and %d errors, want none", len(acc.points), len(acc.errs))
	}
}

// TestSwapOption: swap = true adds sessions' swap_bytes (the fixture's
// host has swap in use, so status is read: VmSwap of alice's bash and
// evil); without it the field is absent, never 0.
func TestSwapOption(t *testing.T) {
	for _, swap := range []bool{false, true} {
		in := &Input{Proc: fixtureProc, Passwd: "testdata/passwd", Options: session.Options{Kinds: []string{"user"}}, Swap: swap, SkipSelfMetrics: true}
		if err := in.Init(); err != nil {
			t.Fatal(err)
		}
		var acc fakeAcc
		if err := in.Gather(&acc); err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, p := range acc.points {
			if p.measurement != MeasurementSession || p.tags["session"] != "alice" {
				continue
			}
			seen = true
			got, ok := p.fields["swap_bytes"]
			if ok != swap || swap && got != int64((64+128)<<10) {
				t.Errorf("swap = %v: swap_bytes %v (present %v); want %v", swap, got, ok, swap)
			}
		}
		if !seen {
			t.Errorf("swap = %v: no session alice", swap)
		}
	}
}
