//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/procwalk/procwalk/plugin"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
	"github.com/procwalk/procwalk/scripting"
)

// catalogue_walk_test.go walks every output of one gather and checks that
// each number in it is a metric of the catalogue (procwalk/metric) under
// its name, with the catalogue's value for the same process or session:
// a name the catalogue lacks, or one name with two values, fails. The
// gather is a Collector's over the session fixture (every kind, tmux
// answered from a file, an agent with a transcript the test writes, every
// optional file read, two samples for rates), caught by its hook; the
// outputs are its Telegraf lines and accumulator, and ps's and sessions'
// JSON and table cells, and Lua's fields, of the gather the hook saw.

// walk holds one gather and checks what outputs say of it.
type walk struct {
	t        *testing.T
	g        frame.Frame
	cat      *metric.Catalogue
	sessions map[string]*session.Session // by KIND:NAME
	seen     map[string]bool             // "output name": names each output showed
}

func newWalk(t *testing.T, g frame.Frame) *walk {
	w := &walk{t: t, g: g, cat: metric.NewCatalogue(), sessions: map[string]*session.Session{}, seen: map[string]bool{}}
	for i := range g.Sessions {
		s := &g.Sessions[i]
		w.sessions[s.Ref()] = s
	}
	return w
}

// want is the catalogue's value of metric name for subject (a process or
// a session), and the metric; false when name is no metric of that scope.
func (w *walk) want(subject any, name string) (*metric.Desc, float64, bool, bool) {
	d, ok := w.cat.Lookup(name)
	if !ok {
		return nil, 0, false, false
	}
	switch x := subject.(type) {
	case *procwalk.Process:
		if !d.OfProcess() {
			return nil, 0, false, false
		}
		v, ok := d.Process(w.g.Snapshot, x)
		return d, v, ok, true
	case *session.Session:
		if !d.OfSession() {
			return nil, 0, false, false
		}
		v, ok := d.Session(x, w.g.Snapshot.Fields, w.g.Snapshot.Time)
		return d, v, ok, true
	}
	panic("walk: no subject")
}

// check checks that output's value got, under name, of subject is the
// catalogue's: exact for bools and integers; for a float, as written by
// round (nil: exact).
func (w *walk) check(output string, subject any, name string, got any, round func(d *metric.Desc, v float64) any) {
	w.t.Helper()
	w.seen[output+" "+name] = true
	d, v, ok, known := w.want(subject, name)
	if !known {
		w.t.Errorf("%s: %q (of %s) is no metric of the catalogue", output, name, describe(subject))
		return
	}
	if !ok {
		w.t.Errorf("%s: %s of %s = %v, but the catalogue has none (not read or not measured)", output, name, describe(subject), got)
		return
	}
	var want any
	switch {
	case round != nil:
		want = round(d, v)
	case d.Flag:
		want = v != 0
	default:
		want = v
	}
	if asFloat(got) != asFloat(want) {
		w.t.Errorf("%s: %s of %s = %v, the catalogue's is %v", output, name, describe(subject), got, want)
	}
}

// complete checks that output showed every metric subject has a value
// for, but those in skip.
func (w *walk) complete(output string, subject any, shown map[string]bool, skip ...string) {
	w.t.Helper()
	all := metric.Processes()
	if _, ok := subject.(*session.Session); ok {
		all = metric.Sessions()
	}
	for _, d := range all {
		if _, _, ok, _ := w.want(subject, d.Name); ok && !shown[d.Name] && !slices.Contains(skip, d.Name) {
			w.t.Errorf("%s: %s of %s has a value but is not shown", output, d.Name, describe(subject))
		}
	}
}

func describe(subject any) string {
	switch x := subject.(type) {
	case *procwalk.Process:
		return "pid " + strconv.Itoa(x.ID.PID)
	case *session.Session:
		return x.Ref()
	}
	return "?"
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	}
	return -1e300 // a string where a number belongs: never equal
}

func TestEveryOutputSpeaksTheCatalogue(t *testing.T) {
	clearEnv(t)
	users, err := procwalk.ReadUsers(sessionsPasswd)
	if err != nil {
		t.Fatal(err)
	}
	// The agent in ~/work/app (pid 105) gets a transcript: its numbers too.
	transcripts := t.TempDir()
	folder := filepath.Join(transcripts, "-home-dev-work-app")
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	line := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":%q,"sessionId":"5f2c9a1e","cwd":"/home/dev/work/app","timestamp":%q,"message":%s}`, typ, now, msg)
	}
	transcript := line("user", `{"role":"user","content":"build it"}`) + "\n" +
		line("assistant", `{"id":"m1","model":"claude-opus-4-1","stop_reason":"tool_use","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":7,"output_tokens":11,"cache_read_input_tokens":1300,"cache_creation_input_tokens":170}}`) + "\n"
	if err := os.WriteFile(filepath.Join(folder, "5f2c9a1e.jsonl"), []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	groups := filepath.Join(transcripts, "groups")
	if err := os.WriteFile(groups, []byte("web-$1 comm ^(nginx)$\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := session.Options{Kinds: session.Kinds(), CgroupRoot: sessionsCgroups, Trees: []string{"server=100"}, DangerPercent: session.DefaultDangerPercent,
		GroupsFile:       groups,
		AgentTranscripts: []string{"claude=claude:" + transcripts + "/{project}"}, Users: users}
	cfg, err := opts.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tmux = session.TmuxConfig{Sockets: []string{"/tmp/tmux-1000/default"}, ListPanes: func(string) ([]byte, error) {
		return os.ReadFile("../../procwalk/session/testdata/sessions/tmux/default.txt")
	}}
	// A copy of the fixture /proc, which changes between the two gathers:
	// python3 (pid 111) uses CPU, reads and grows, and sleep 121 exits, so
	// that rates are not 0 and a session's cumulative counters are not its
	// members' (tmux:web keeps 121's CPU time).
	proc := filepath.Join(t.TempDir(), "proc")
	if out, err := exec.Command("cp", "-a", sessionsProc, proc).CombinedOutput(); err != nil {
		t.Fatalf("copying the fixture: %v\n%s", err, out)
	}
	fsys, err := procwalk.NewFS(proc)
	if err != nil {
		t.Fatal(err)
	}
	var g frame.Frame
	c, err := plugin.NewCollector(fsys, plugin.Config{Group: cfg, Fields: procwalk.AllFields | procwalk.FieldSmaps, Users: users,
		Processes: plugin.ProcessConfig{Top: plugin.MaxTop}, NoSelfMetrics: true,
		Hook: func(f frame.Frame, _ *plugin.Batch) error { g = f; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Prime(); err != nil { // the second gather has rates
		t.Fatal(err)
	}
	for file, edit := range map[string][2]string{
		"111/stat":  {" 100 50 0 0 20 ", " 300 50 0 0 20 "},
		"111/statm": {"", ""},
		"111/io":    {"read_bytes: 0\n", "read_bytes: 1048576\n"},
	} {
		b, err := os.ReadFile(filepath.Join(proc, file))
		if err != nil {
			t.Fatal(err)
		}
		if file == "111/statm" { // 1000 more resident pages
			f := strings.Fields(string(b))
			n, _ := strconv.Atoi(f[1])
			f[1] = strconv.Itoa(n + 1000)
			b = []byte(strings.Join(f, " ") + "\n")
		} else if !bytes.Contains(b, []byte(edit[0])) {
			t.Fatalf("%s lacks %q: %s", file, edit[0], b)
		}
		b = bytes.Replace(b, []byte(edit[0]), []byte(edit[1]), 1)
		if err := os.WriteFile(filepath.Join(proc, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(proc, "121")); err != nil {
		t.Fatal(err)
	}

	// Telegraf line protocol (exec, execd).
	var lines bytes.Buffer
	if err := c.WriteBatch(&lines, nil); err != nil {
		t.Fatal(err)
	}
	w := newWalk(t, g)
	w.telegraf("line protocol", decodeLines(t, lines.Bytes()))
	// The changes are there: a rate above 0, a cumulative counter above the
	// members' own.
	cpu, _ := metric.Lookup("cpu_percent")
	if v, ok := cpu.Process(g.Snapshot, g.Snapshot.Process(111)); !ok || v <= 0 {
		t.Errorf("pid 111's cpu_percent = %v, %v: the fixture did not change between the gathers", v, ok)
	}
	if web := w.sessions["tmux:web"]; web == nil || web.Totals.CumulativeCPUSeconds <= web.Totals.CPUSeconds {
		t.Errorf("tmux:web: cumulative CPU not above the members' own after pid 121 exited: %+v", web)
	}
	if agent := w.sessions["agent:claude/work/app"]; agent == nil || agent.Agent == nil || agent.Agent.Transcript == nil {
		t.Fatalf("the agent with a transcript is not in the gather: %v", agent)
	}
	// Every kind is there, so that every kind's numbers are walked.
	for _, k := range session.Kinds() {
		if !slices.ContainsFunc(g.Sessions, func(s session.Session) bool { return s.Kind == k }) {
			t.Errorf("no %s session in the gather", k)
		}
	}
	w.json()
	w.tables()
	w.lua()

	// The compiled-in input: its own gather, typed.
	acc := &mergingAcc{}
	if err := c.Accumulate(acc, nil); err != nil {
		t.Fatal(err)
	}
	newWalk(t, g).telegraf("accumulator", acc.points)
}

// lpPoint is a line of line protocol, or the metrics of one series and time
// an accumulator got.
type lpPoint struct {
	measurement string
	tags        map[string]string
	fields      map[string]any
}

func decodeLines(t *testing.T, b []byte) []lpPoint {
	t.Helper()
	var out []lpPoint
	dec := lineprotocol.NewDecoderWithBytes(b)
	for dec.Next() {
		m, err := dec.Measurement()
		if err != nil {
			t.Fatal(err)
		}
		p := lpPoint{measurement: string(m), tags: map[string]string{}, fields: map[string]any{}}
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			p.tags[string(k)] = string(v)
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			p.fields[string(k)] = v.Interface()
		}
		out = append(out, p)
	}
	if err := dec.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mergingAcc is a Telegraf accumulator that merges the metrics of one
// series and time, as InfluxDB does.
type mergingAcc struct{ points []lpPoint }

func (a *mergingAcc) add(m string, f map[string]any, tags map[string]string) {
	if n := len(a.points); n > 0 && a.points[n-1].measurement == m && maps.Equal(a.points[n-1].tags, tags) {
		maps.Copy(a.points[n-1].fields, f)
		return
	}
	a.points = append(a.points, lpPoint{m, tags, maps.Clone(f)})
}
func (a *mergingAcc) AddFields(m string, f map[string]any, tags map[string]string, _ ...time.Time) {
	a.add(m, f, tags)
}
func (a *mergingAcc) AddGauge(m string, f map[string]any, tags map[string]string, _ ...time.Time) {
	a.add(m, f, tags)
}
func (a *mergingAcc) AddCounter(m string, f map[string]any, tags map[string]string, _ ...time.Time) {
	a.add(m, f, tags)
}
func (a *mergingAcc) AddSummary(m string, f map[string]any, tags map[string]string, _ ...time.Time) {
	a.add(m, f, tags)
}
func (a *mergingAcc) AddHistogram(m string, f map[string]any, tags map[string]string, _ ...time.Time) {
	a.add(m, f, tags)
}
func (a *mergingAcc) SetPrecision(time.Duration) {}
func (a *mergingAcc) AddError(error)             {}

// telegraf checks procwalk_session, procwalk_process and
// procwalk_agent_status: every number is a catalogue metric of its session
// or process, with its value; every string a documented string field.
func (w *walk) telegraf(output string, points []lpPoint) {
	t := w.t
	t.Helper()
	strs := func(fs []plugin.StringField) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	sessions, processes := 0, 0
	for _, p := range points {
		s := w.sessions[p.tags["kind"]+":"+p.tags["session"]]
		if s == nil {
			t.Errorf("%s: %s of no session of the gather: %v", output, p.measurement, p.tags)
			continue
		}
		switch p.measurement {
		case plugin.MeasurementSession:
			sessions++
			shown := map[string]bool{}
			for k, v := range p.fields {
				if _, isString := v.(string); isString {
					if !slices.Contains(strs(plugin.SessionStrings()), k) {
						t.Errorf("%s: procwalk_session string field %q is not documented", output, k)
					}
					continue
				}
				w.check(output, s, k, v, nil)
				shown[k] = true
			}
			w.complete(output+" procwalk_session", s, shown, "age_seconds")
			if s.Agent != nil && p.fields["status"] != s.Agent.Status {
				t.Errorf("%s: %s status %v, want %s", output, s.Ref(), p.fields["status"], s.Agent.Status)
			}
		case plugin.MeasurementProcess:
			processes++
			pid, _ := p.fields["pid"].(int64)
			proc := w.g.Snapshot.Process(int(pid))
			if proc == nil {
				t.Errorf("%s: procwalk_process of pid %d, not in the gather", output, pid)
				continue
			}
			shown := map[string]bool{}
			for k, v := range p.fields {
				if _, isString := v.(string); isString {
					if !slices.Contains(strs(plugin.ProcessStrings()), k) {
						t.Errorf("%s: procwalk_process string field %q is not documented", output, k)
					}
					continue
				}
				w.check(output, proc, k, v, nil)
				shown[k] = true
			}
			w.complete(output+" procwalk_process", proc, shown, "age_seconds")
		case plugin.MeasurementAgent:
			want := int64(0)
			if s.Agent != nil && s.Agent.Status == p.tags["status"] {
				want = 1
			}
			if !maps.Equal(p.fields, map[string]any{"value": want}) {
				t.Errorf("%s: %s status %s: %v, want value=%d", output, s.Ref(), p.tags["status"], p.fields, want)
			}
		default:
			t.Errorf("%s: measurement %s", output, p.measurement)
		}
		if _, ok := p.tags["status"]; ok && p.measurement != plugin.MeasurementAgent {
			t.Errorf("%s: %s has a status tag", output, p.measurement)
		}
	}
	if sessions != len(w.g.Sessions) || processes < len(w.g.Snapshot.Procs)/2 {
		t.Errorf("%s: %d session and %d process lines for %d sessions and %d processes", output, sessions, processes, len(w.g.Sessions), len(w.g.Snapshot.Procs))
	}
}

// json checks ps's JSON of every process and sessions' JSON of every
// session: their numbers are the catalogue's, as JSON rounds them; a
// number outside "metrics" is an id or a count of the kind's, never a
// metric's name with another value.
func (w *walk) json() {
	t := w.t
	snap := w.g.Snapshot
	for i := range snap.Procs {
		p := &snap.Procs[i]
		var m map[string]any
		unmarshal(t, render.NewJSONProcess(snap, p, nil, metric.Processes()), &m)
		shown := map[string]bool{}
		for k, v := range m {
			switch k {
			case "start_ticks", "user", "state", "kernel_thread", "comm", "cmdline", "cmdline_truncated", "start_time", "denied", "malformed":
				if _, isNumber := v.(float64); isNumber && k != "start_ticks" {
					t.Errorf("ps JSON: %s of pid %d is a number: %v", k, p.ID.PID, v)
				}
				continue
			}
			w.check("ps JSON", p, k, v, func(d *metric.Desc, v float64) any { return render.JSONNumber(d, v) })
			shown[k] = true
		}
		w.complete("ps JSON", p, shown)
	}
	for _, s := range w.g.Sessions {
		s := w.sessions[s.Ref()]
		var m map[string]any
		unmarshal(t, render.NewJSONSession(snap.Time, snap.Fields, s), &m)
		metrics, _ := m["metrics"].(map[string]any)
		shown := map[string]bool{}
		for k, v := range metrics {
			w.check("sessions JSON", s, k, v, func(d *metric.Desc, v float64) any {
				if d.Integer || d.Flag {
					return v
				}
				return render.Round(v, 3)
			})
			shown[k] = true
		}
		w.complete("sessions JSON", s, shown)
		delete(m, "metrics")
		w.jsonNumbers(s, "", m)
	}
}

// jsonNumbers fails on a number of a session's JSON, outside its
// metrics, that is no id or count of its kind, and on a catalogue name
// there (a value said twice).
func (w *walk) jsonNumbers(s *session.Session, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := path + "." + k
			if d, isMetric := w.cat.Lookup(k); isMetric && k != "pid" {
				w.attrMetric(s, p, d, e)
			}
			w.jsonNumbers(s, p, e)
		}
	case []any:
		for _, e := range x {
			w.jsonNumbers(s, path+"[]", e)
		}
	case float64:
		allowed := []string{".cgroup.version", ".roots[].pid", ".roots[].start_ticks", ".members[].pid", ".members[].start_ticks", ".panes[].pid"}
		for _, a := range s.NumberAttrs() {
			allowed = append(allowed, ".attrs."+a)
		}
		if !slices.Contains(allowed, path) {
			w.t.Errorf("sessions JSON: %s of %s = %v: a number the catalogue lacks", path, s.Ref(), x)
		}
	}
}

// attrMetric checks a catalogue name outside a session's metrics: only an
// attribute may have one (a user session's uid), and then it is the
// metric's value of every member, as a number.
func (w *walk) attrMetric(s *session.Session, path string, d *metric.Desc, v any) {
	n, isNumber := v.(float64)
	if !isNumber || path != ".attrs."+d.Name || !d.OfProcess() {
		w.t.Errorf("sessions JSON: %s of %s = %v: a metric's name outside metrics, with another meaning", path, s.Ref(), v)
		return
	}
	for _, id := range s.Members {
		p := w.g.Snapshot.Lookup(id)
		if want, ok := d.Process(w.g.Snapshot, p); p != nil && (!ok || want != n) {
			w.t.Errorf("sessions JSON: %s of %s = %v, but member %d's %s is %v (%v)", path, s.Ref(), n, id.PID, d.Name, want, ok)
		}
	}
}

func unmarshal(t *testing.T, v any, into any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// tables checks ps's columns and the sessions table's cells: a metric's
// column has its label and shows its value in the table's units, or "-".
func (w *walk) tables() {
	t := w.t
	snap := w.g.Snapshot
	for _, d := range metric.Processes() {
		for _, name := range append([]string{d.Name}, d.Aliases...) {
			col, ok := render.FindProcessColumn(name)
			if !ok || col.Header != d.Label {
				t.Errorf("ps --columns %s: %v, header %q, want the label %q", name, ok, col.Header, d.Label)
				continue
			}
			for i := range snap.Procs {
				p := &snap.Procs[i]
				want := render.NotMeasured
				if v, ok := d.Process(snap, p); ok {
					want = render.Metric(&d, v)
				}
				if got := col.Value(snap, p, nil); got != want {
					t.Errorf("ps column %s of pid %d: %q, want %q", name, p.ID.PID, got, want)
				}
			}
		}
	}
	for _, d := range metric.Sessions() {
		for _, s := range w.sessions {
			cell := render.SessionCell(&d, s, snap.Fields, snap.Time)
			v, ok := d.Session(s, snap.Fields, snap.Time)
			if !ok && cell != render.NotMeasured || ok && strings.TrimSuffix(cell, "+") != render.Metric(&d, v) {
				t.Errorf("sessions cell %s of %s: %q, the catalogue's %v (%v)", d.Name, s.Ref(), cell, v, ok)
			}
		}
	}
}

// luaEmitter keeps what a script emits.
type luaEmitter struct{ points []lpPoint }

func (e *luaEmitter) Emit(m string, tags map[string]string, fields map[string]any, _ time.Time) error {
	e.points = append(e.points, lpPoint{m, tags, fields})
	return nil
}

// luaWalk reads, of every process and session, every name and short name
// of the catalogue and the names Lua had before it, and a session's totals,
// cgroup and agent tables, and emits what it found.
const luaWalk = `local pw = require "procwalk"
local names = {...}
local function read(o)
  local f = {}
  for _, n in ipairs(names) do
    local ok, v = pcall(function() return o[n] end)
    if ok and v ~= nil then f[n] = v end
  end
  return f
end
local function emit(m, tags, f)
  if next(f) then assert(pw.emit(m, tags, f)) end
end
for _, p in ipairs(pw.processes()) do
  local f = read(p)
  f.pid = p.pid
  emit("lua_process", {pid = p.pid}, f)
end
for _, s in ipairs(pw.sessions()) do
  emit("lua_session", {ref = s.ref}, read(s))
  emit("lua_totals", {ref = s.ref}, s.totals)
  for _, t in ipairs({"cgroup", "agent"}) do
    local x, f = s[t], {}
    if x then for k, v in pairs(x) do if type(v) == "number" then f[k] = v end end end
    emit("lua_" .. t, {ref = s.ref}, f)
  end
end`

// lua checks Lua's process and session fields by every name, and the
// numbers of a session's tables.
func (w *walk) lua() {
	t := w.t
	names := []string{
		// Lua's names before the catalogue: none may come back.
		"cumulative_cpu_time", "cumulative_read_bytes", "cumulative_write_bytes", "smaps_read", "io_read", "start_time",
		"memory_percent", "memory_usage", "memory_limit", "cpu_quota", "cpu_used", "growth_bytes_per_minute", "oldest_start_unix_seconds",
	}
	for _, d := range metric.All() {
		names = append(names, d.Name)
		names = append(names, d.Aliases...)
	}
	script, err := scripting.Compile("walk.lua", []byte(luaWalk))
	if err != nil {
		t.Fatal(err)
	}
	em := &luaEmitter{}
	// The walk reads every name of every process: on a loaded CI machine
	// that outlasts the default 2 s, so the limit is a hang guard only.
	rt := scripting.New(scripting.Config{Emitter: em, Args: names, Limits: scripting.Limits{Timeout: time.Minute}})
	defer rt.Close()
	in := scripting.Input{Snapshot: w.g.Snapshot, Sessions: func() ([]session.Session, error) { return w.g.Sessions, nil }}
	if err := rt.Run(context.Background(), script, in); err != nil {
		t.Fatal(err)
	}
	legacy := regexp.MustCompile(`^(cumulative_.*|smaps_read|io_read|start_time|memory_percent|memory_usage|memory_limit|cpu_quota|cpu_used|growth_bytes_per_minute|oldest_start_unix_seconds)$`)
	processes := 0
	for _, p := range em.points {
		var subject any
		if ref, ok := p.tags["ref"]; ok {
			subject = w.sessions[ref]
		} else {
			pid, _ := strconv.Atoi(p.tags["pid"])
			subject = w.g.Snapshot.Process(pid)
			processes++
		}
		if subject == nil || subject == (*session.Session)(nil) || subject == (*procwalk.Process)(nil) {
			t.Errorf("Lua %s: %v is in no session or process of the gather", p.measurement, p.tags)
			continue
		}
		switch p.measurement {
		case "lua_cgroup", "lua_agent":
			for k := range p.fields {
				if k != "version" {
					t.Errorf("Lua s.%s.%s of %s: a number the catalogue lacks (or has elsewhere)", strings.TrimPrefix(p.measurement, "lua_"), k, describe(subject))
				}
			}
			continue
		}
		shown := map[string]bool{}
		for k, v := range p.fields {
			if legacy.MatchString(k) {
				t.Errorf("Lua %s: %s of %s is there: a name from before the catalogue", p.measurement, k, describe(subject))
				continue
			}
			w.check("Lua "+p.measurement, subject, k, v, nil)
			if d, ok := w.cat.Lookup(k); ok {
				shown[d.Name] = true
			}
		}
		w.complete("Lua "+p.measurement, subject, shown)
	}
	if processes != len(w.g.Snapshot.Procs) {
		t.Errorf("Lua walked %d processes of %d", processes, len(w.g.Snapshot.Procs))
	}
}
