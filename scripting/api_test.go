//go:build linux

package scripting

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// world is a configured runtime's surroundings: fixture snapshot, sessions,
// and recording fakes for kills, emits and logs.
type world struct {
	snap    *procwalk.Snapshot
	users   *procwalk.Users
	killer  *fakeKiller
	emitter *recordingEmitter
	logs    bytes.Buffer
	cfg     Config
	in      Input
}

func newWorld(t testing.TB) *world {
	w := &world{snap: loadSnapshot(t), users: loadUsers(t), emitter: &recordingEmitter{}}
	w.killer = &fakeKiller{snap: w.snap}
	w.cfg = Config{Killer: w.killer, Emitter: w.emitter, Logger: logTo(&w.logs), Users: w.users, Args: []string{"first", "limit=2GiB", "--ticks=3"}}
	w.in = Input{Snapshot: w.snap, Sessions: grouper(t, w.users)(w.snap)}
	return w
}

// eval runs src and returns what it printed; a run error fails the test.
func (w *world) eval(t *testing.T, src string) string {
	t.Helper()
	out, err := run(t, w.cfg, "api.lua", "local pw = require 'procwalk'\n"+src, w.in)
	if err != nil {
		t.Fatalf("%v\nscript:\n%s", err, src)
	}
	return strings.TrimSuffix(out, "\n")
}

// check runs each case in a fresh world and compares what it printed.
func check(t *testing.T, cases []struct{ src, want string }) {
	t.Helper()
	for _, c := range cases {
		w := newWorld(t)
		if got := w.eval(t, c.src); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

func TestProcessFields(t *testing.T) {
	check(t, []struct{ src, want string }{
		{`local p = pw.process(112)
print(p.pid, p.ppid, p.pgrp, p.sid, p.tty_nr, p.id, p.comm, p.name, p.cmdline)`,
			"112\t111\t111\t101\t34816\t112@170100\tnode\tnode\tnode /home/dev/myproj/node_modules/.bin/jest"},
		{`local p = pw.process(112)
print(p.argv[1], p.argv[2], #p.argv, p.exe, p.cwd, p.uid, p.euid, p.user, p.state, p.threads, p.kernel, p.zombie)`,
			"node\t/home/dev/myproj/node_modules/.bin/jest\t2\t/usr/bin/node\t/home/dev/myproj\t1000\t1000\tdev\tR\t8\tfalse\tfalse"},
		{`local p = pw.process(110)
print(p.rss, p.vsize, p.shared, p.pss, p.uss, p.swap, p.fds, p.oom_score)`,
			"1610612736\t4831838208\t402653184\t1207959552\t805306368\t0\t3\t96"},
		{`local p = pw.process(110)
print(p.cpu_time, p.user_time, p.system_time, p.read_bytes, p.write_bytes, p.age, p.start, p.cgroup)`,
			"590\t500\t90\t110000000\t55000000\t862400\t1700001600\t/user.slice/user-1000.slice/session-1.scope"},
		// Rates are nil until a second snapshot measured them.
		{`local p = pw.process(110)
print(p.cpu, p.read_rate, p.write_rate, p.growth, p.pss_growth, p.uss_growth)`,
			"nil\tnil\tnil\tnil\tnil\tnil"},
		// Kernel threads and zombies: what does not apply is nil.
		{`local k, z = pw.process(2), pw.process(122)
print(k.kernel, k.exe, k.pss, z.zombie, z.state, z.exe, z.pss, z.rss)`,
			"true\tnil\tnil\ttrue\tZ\tnil\tnil\t0"},
		{`print(pw.process("110@160000").comm, pw.process("110@160001"))`, "claude\tnil\tprocess 110@160001 has exited"},
		{`print(tostring(pw.process(1)), pw.process(1) == pw.process(1), pw.process(1) == pw.process(2))`,
			"process 1 (systemd)\ttrue\tfalse"},
	})
}

func TestProcessRates(t *testing.T) {
	w := newWorld(t)
	p := w.snap.Process(110)
	p.Rates = procwalk.Rates{Measured: true, IntervalSeconds: 10, CPUPercent: 150, HaveIO: true,
		ReadBytesPerSecond: 2048, WriteBytesPerSecond: 1024, RSSGrowthBytesPerMinute: 600 << 20,
		HaveSmaps: true, PSSGrowthBytesPerMinute: 500 << 20, USSGrowthBytesPerMinute: 400 << 20}
	got := w.eval(t, `local p = pw.process(110)
print(p.cpu, p.read_rate, p.write_rate, pw.bytes(p.growth), pw.bytes(p.pss_growth), pw.bytes(p.uss_growth))`)
	if want := "150\t2048\t1024\t600.0 MiB\t500.0 MiB\t400.0 MiB"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestProcessMethods(t *testing.T) {
	check(t, []struct{ src, want string }{
		{`print(pw.process(112):parent().pid, pw.process(1):parent())`, "111\tnil"},
		{`local c = {} for _, p in ipairs(pw.process(120):children()) do c[#c+1] = p.pid end print(table.concat(c, ","))`, "121,122"},
		{`local c = {} for _, p in ipairs(pw.process(100):descendants()) do c[#c+1] = p.pid end print(table.concat(c, ","))`,
			"101,110,111,112,102,120,121,122"},
		{`for _, e in ipairs(pw.process(110):tree()) do print(e.depth, e.process.comm) end`, "0\tclaude\n1\tbash\n2\tnode"},
		{`print(pw.process(112):session("tmux").name, pw.process(112):session("agent").name, pw.process(1):session("tmux"))`,
			"work\tclaude/myproj\tnil"},
	})
}

func TestProcessObjectsAreReadOnly(t *testing.T) {
	w := newWorld(t)
	cases := []struct{ src, want string }{
		{`pw.process(1).pid = 5`, `read-only (field "pid")`},
		{`print(pw.process(1).rsss)`, `process has no field "rsss"; fields are pid, ppid`},
		{`print(getmetatable(pw.process(1)))`, ""},
		{`setmetatable(pw.process(1), {})`, "cannot change a protected metatable"},
		{`pw.process(1):session("nope")`, `unknown session kind "nope"; kinds are tmux, sid`},
		{`pw.process(1.5)`, "integer expected, got 1.5"},
		{`pw.process(0)`, "pid must be positive"},
		{`pw.process("110")`, `want a pid or an id "PID@STARTTICKS", got "110"`},
		{`pw.process(1).parent({})`, "process expected, got table"},
	}
	for _, c := range cases {
		out, err := run(t, w.cfg, "ro.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
		if c.want == "" { // getmetatable gives the type name, not the table
			if err != nil || out != "procwalk.process\n" {
				t.Errorf("%s: got %q, %v", c.src, out, err)
			}
			continue
		}
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ro.lua:2:") {
			t.Errorf("%s: got %v, want ErrScript at ro.lua:2 with %q", c.src, err, c.want)
		}
	}
}

func TestProcessesAndFilters(t *testing.T) {
	pids := `local function pids(list) local o = {} for _, p in ipairs(list) do o[#o+1] = p.pid end return table.concat(o, ",") end
`
	check(t, []struct{ src, want string }{
		{pids + `print(#pw.processes(), pids(pw.processes({kernel = false})))`, "16\t1,100,101,102,110,111,112,120,121,122,200,201,202,300"},
		{pids + `print(pids(pw.processes{comm = "bash"}), pids(pw.processes{name = "cc1"}), pids(pw.processes{state = "Z"}))`, "101,102,111\t121,122\t122,202"},
		{pids + `print(pids(pw.processes{user = "app"}), pids(pw.processes{uid = 0, kernel = false}), pids(pw.processes{ppid = 120}))`, "201,202\t1,200,300\t121,122"},
		{pids + `print(pids(pw.processes{cmdline = "-jar app"}), pids(pw.processes{session = "tmux:build"}))`, "201\t102,120,121,122"},
		{pids + `print(pids(pw.processes(function(p) return p.rss > pw.GiB end)))`, "110,201"},
		{pids + `print(pids(pw.top("rss", 3)), pids(pw.top("rss", 2, {user = "dev"})), pids(pw.top("cpu")))`, "201,110,112\t110,112\t"},
		{pids + `print(pids(pw.top("pss")), pids(pw.top("age", 1)))`, "201,110,112,121,200\t1"},
		// Every numeric field is a metric; without a value, a process is left out.
		{pids + `print(pids(pw.top("oom_score", 3)), #pw.top("uss_growth"))`, "201,110,112\t0"},
	})
}

func TestSessions(t *testing.T) {
	check(t, []struct{ src, want string }{
		// Every kind's sessions without a kind (counted per kind: a kind
		// added later leaves these as they are).
		{`local n = {} for _, s in ipairs(pw.sessions("tmux")) do n[#n+1] = s.ref end
local by = {} for _, s in ipairs(pw.sessions()) do by[s.kind] = (by[s.kind] or 0) + 1 end
print(table.concat(n, " "), by.tmux, by.sid, by.pgrp, by.tty, by.tree, by.cgroup, by.user, by.agent, by.group)`,
			"tmux:build tmux:work\t2\t7\t10\t2\tnil\t5\t3\t1\tnil"}, // 30 in all
		{`local s = pw.session("tmux:work")
print(s.kind, s.name, s.attrs.tmux_target, s.attrs.socket, s.procs, s.threads, s.zombies, pw.bytes(s.rss), pw.bytes(s.pss), pw.bytes(s.uss))`,
			"tmux\twork\twork:0.0\t/tmp/tmux-1000/default\t4\t22\t0\t2.1 GiB\t1.6 GiB\t1.0 GiB"},
		{`local s = pw.session("tmux:build")
print(s.cpu, s.growth, s.read_rate, string.format("%.2f", s.cpu_time), s.read_bytes, s.age, pw.duration(s.age), s.smaps_read_procs, s.io_read_procs, s.cgroup)`,
			"nil\tnil\tnil\t1052.92\t465000000\t862499.25\t9 days 23 hr\t3\t4\tnil"},
		// The catalogue's names (metric.Sessions), as Telegraf writes them;
		// a short name is the same metric.
		{`local s = pw.session("tmux:build")
print(s.rss_bytes == s.rss, s.cpu_time_seconds == s.cpu_time, s.cpu_time == s.time, s.read_bytes_per_second, s.smaps_read_procs, s.partial, s.danger, s.age_seconds == s.age, s.start_unix_seconds == s.start)`,
			"true\ttrue\ttrue\tnil\t3\tfalse\tnil\ttrue\ttrue"},
		{`local s = pw.session("agent:claude/myproj")
print(s.attrs.project, s.attrs.tmux_target, s.attrs.agent, s.totals.procs, s.totals.rss_bytes == s.rss, s.totals.rss)`,
			"myproj\twork:0.0\tclaude\t3\ttrue\tnil"},
		{`local s = pw.session("cgroup:pod/1234abcd-5678-90ef-1234-567890abcdef")
print(s.cgroup.version, pw.bytes(s.memory_usage_bytes), pw.bytes(s.memory_limit_bytes), string.format("%.1f", s.memory_usage_percent), s.cpu_quota_cores, s.cpu_quota_percent, s.danger, s.cgroup.memory_percent)`,
			"1\t1.8 GiB\t2.0 GiB\t90.0\t1\tnil\ttrue\tnil"},
		{`local o = {} for _, p in ipairs(pw.session("tmux:build"):processes()) do o[#o+1] = p.pid end
local r = {} for _, p in ipairs(pw.session("tmux:build"):roots()) do r[#r+1] = p.pid end
print(table.concat(o, ","), table.concat(r, ","))`, "102,120,121,122\t102"},
		{`local o = {} for _, p in ipairs(pw.session("tmux:work"):top("rss", 2)) do o[#o+1] = p.comm end print(table.concat(o, ","))`, "claude,node"},
		{`for _, e in ipairs(pw.session("agent:claude/myproj"):tree()) do print(e.depth .. " " .. e.process.comm) end`, "0 claude\n1 bash\n2 node"},
		{`print(pw.session("tmux:nope"))`, "nil\tno such session tmux:nope: tmux sessions are build, work"},
		{`print(pw.session("bogus"))`, `nil	bad session reference "bogus": want KIND:NAME, e.g. tmux:build (kinds: ` + strings.Join(session.Kinds(), ", ") + ")"},
		{`print(tostring(pw.session("user:dev")), pw.session("user:dev") == pw.session("user:dev"), pw.session("user:dev") == pw.session("user:app"))`,
			"session user:dev\ttrue\tfalse"},
	})
}

// Totals of files the scan did not read are nil, not 0.
func TestSessionTotalsNotReadAreNil(t *testing.T) {
	w := newWorld(t)
	w.snap.Fields &^= procwalk.FieldStatus | procwalk.FieldSwap | procwalk.FieldSmaps | procwalk.FieldIO
	for i := range w.snap.Procs {
		w.snap.Procs[i].Read &^= procwalk.FieldSmaps | procwalk.FieldIO
	}
	w.in.Sessions = grouper(t, w.users)(w.snap)
	got := w.eval(t, `local s = pw.session("tmux:build")
print(s.procs, s.swap, s.pss, s.read_bytes, s.write_bytes, s.io_read_procs)`)
	if want := "4\tnil\tnil\tnil\tnil\tnil"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSessionsWithoutGrouper(t *testing.T) {
	w := newWorld(t)
	w.in.Sessions = nil
	if got := w.eval(t, `print(#pw.sessions(), pw.process(1):session("tmux"))`); got != "0\tnil" {
		t.Errorf("got %q", got)
	}
	w.in.Sessions = func() ([]session.Session, error) { return nil, errors.New("tmux is wedged") }
	if got := w.eval(t, `print(pw.sessions()) print(pw.process(1):session("tmux"))`); got != "nil\ttmux is wedged\nnil\ttmux is wedged" {
		t.Errorf("got %q", got)
	}
}

func TestKill(t *testing.T) {
	cases := []struct{ src, want, calls string }{
		{`local r = pw.process(121):kill() print(r.ok, r.scope, r.dry_run, r.outcomes[1].pid, r.outcomes[1].result, r.outcomes[1].signals[1], r.outcomes[1].done)`,
			"true\tprocess 121@180100\tfalse\t121\texited\tTERM\ttrue",
			"process 121@180100 sig=0 grace=5s dry=false by=rule:api.lua"},
		{`local r = pw.kill(pw.process(120), {scope = "tree", signal = "INT", grace = 2.5}) print(#r.outcomes, r.outcomes[1].comm)`,
			"3\tmake", "tree 120@180000 sig=2 grace=2.5s dry=false by=rule:api.lua"},
		{`local r = pw.kill(121, {scope = "group", signal = 9, dry_run = true}) print(r.dry_run, r.outcomes[1].result, r.outcomes[1].planned[2])`,
			"true\tdry_run\tKILL", "pgrp 120 sig=9 grace=0s dry=true by=rule:api.lua"},
		{`local r = pw.session("tmux:build"):kill{signal = "TERM"} print(r.ok, #r.outcomes)`,
			"true\t4", "session tmux:build sig=15 grace=5s dry=false by=rule:api.lua"},
		{`local r = pw.kill("agent:claude/myproj") print(r.scope)`, "session agent:claude/myproj", "session agent:claude/myproj sig=0 grace=5s dry=false by=rule:api.lua"},
		{`print(pw.kill(99999))`, "nil\tno process 99999", ""},
		{`print(pw.kill("tmux:gone"))`, "nil\tno such session tmux:gone: tmux sessions are build, work", ""},
	}
	for _, c := range cases {
		w := newWorld(t)
		if got := w.eval(t, c.src); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, got, c.want)
		}
		if got := strings.Join(w.killer.calls, "\n"); got != c.calls {
			t.Errorf("%s: killer calls\n got %q\nwant %q", c.src, got, c.calls)
		}
	}
}

func TestKillRefusedAndFailed(t *testing.T) {
	w := newWorld(t)
	w.killer.results = map[int]kill.Result{300: kill.ResultProtected}
	got := w.eval(t, `local r, err = pw.process(300):kill() print(r.ok, r.outcomes[1].result, r.outcomes[1].refused, r.outcomes[1].error) print(err)`)
	want := "false\trefused_protected\ttrue\tpid 300 (sshd) is protected: protected process\n1 of 1 targets not terminated"
	if !strings.HasPrefix(got, want) || !strings.Contains(got[len(want):], "protected") {
		t.Errorf("got %q\nwant %q and the engine's reason", got, want)
	}
	w = newWorld(t)
	w.killer.err = errors.New("cannot read /proc")
	if got := w.eval(t, `print(pw.process(121):kill())`); got != "nil\tkill process 121@180100: cannot read /proc" {
		t.Errorf("got %q", got)
	}
	w = newWorld(t)
	w.cfg.Killer = nil
	if got := w.eval(t, `print(pw.process(121):kill())`); got != "nil\tkilling is not available here" {
		t.Errorf("got %q", got)
	}
}

// --dry-run wins over whatever the script asks.
func TestKillDryRunIsGlobal(t *testing.T) {
	w := newWorld(t)
	w.cfg.DryRun = true
	if got := w.eval(t, `print(pw.dry_run, pw.process(121):kill{dry_run = false}.dry_run)`); got != "true\ttrue" {
		t.Errorf("got %q", got)
	}
	if want := "process 121@180100 sig=0 grace=0s dry=true by=rule:api.lua"; w.killer.calls[0] != want {
		t.Errorf("got %q, want %q", w.killer.calls[0], want)
	}
}

func TestKillMisuse(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{`pw.process(1):kill{signal = "NOPE"}`, `bad signal "NOPE"`},
		{`pw.process(1):kill{grace = -1}`, "grace must be seconds, more than 0"},
		{`pw.process(1):kill{grace = 3600}`, "at most 5m0s"},
		{`pw.process(1):kill{scope = "world"}`, "scope must be process, tree or group"},
		{`pw.process(1):kill{force = true}`, "unknown kill option force; options are signal, grace, scope, dry_run"},
		{`pw.kill({})`, `process, session, pid or "KIND:NAME" expected, got table`},
		{`pw.kill(1.5)`, "integer expected, got 1.5"},
		{`pw.process(1):kill("now")`, "table expected, got string"},
		{`pw.session("tmux:build"):kill{scope = "tree"}`, `scope "tree" applies to processes; a session kill takes its members`},
		{`pw.kill("tmux:build", {scope = "group"})`, `scope "group" applies to processes`},
		{`pw.kill(99999, {force = true})`, "unknown kill option force"},
		{`pw.kill("tmux:gone", {grace = 0})`, "grace must be seconds"},
	} {
		_, err := run(t, w.cfg, "kill.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "kill.lua:2:") {
			t.Errorf("%s: got %v, want an error at kill.lua:2 with %q", c.src, err, c.want)
		}
	}
	if len(w.killer.calls) != 0 {
		t.Errorf("misused kills reached the killer: %q", w.killer.calls)
	}
}

func TestEmit(t *testing.T) {
	w := newWorld(t)
	got := w.eval(t, `print(pw.emit("agent_mem", {session = "claude/myproj", pid = 110, big = true}, {rss = 1.5, ok = false, note = "x y"}))
print(pw.emit("bare", nil, {n = 1}))`)
	if got != "true\ntrue" {
		t.Errorf("got %q", got)
	}
	want := "agent_mem big=true,pid=110,session=claude/myproj | note=x y,ok=false,rss=1.5 @1700864000\n" +
		"bare  | n=1 @1700864000"
	if got := strings.Join(w.emitter.lines, "\n"); got != want {
		t.Errorf("emitted\n%s\nwant\n%s", got, want)
	}

	w = newWorld(t)
	w.emitter.err = errors.New("encoder: bad tag")
	if got := w.eval(t, `print(pw.emit("m", {}, {v = 1}))`); got != "nil\temit m: encoder: bad tag" {
		t.Errorf("got %q", got)
	}
	w = newWorld(t)
	w.cfg.Emitter = nil
	if got := w.eval(t, `print(pw.emit("m", {}, {v = 1}))`); !strings.HasPrefix(got, "nil\tno output stream") {
		t.Errorf("got %q", got)
	}
}

func TestEmitMisuse(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{`pw.emit("", {}, {v = 1})`, "measurement must not be empty"},
		{`pw.emit("m", {}, {})`, "at least one field is needed"},
		{`pw.emit("procwalk_action", {}, {v = 1})`, "measurement procwalk_action is reserved"},
		{`pw.emit("procwalk_alert", {rule = "x"}, {message = "forged"})`, "measurement procwalk_alert is reserved"},
		{`pw.emit("procwalk", {}, {v = 1})`, "measurement procwalk is reserved"},
		{`pw.emit("procwalk_session", {}, {v = 1})`, "measurement procwalk_session is reserved"},
		{`pw.emit("#comment", {}, {v = 1})`, "must not start with #"},
		{`pw.emit("m", {}, {v = 0/0})`, "line protocol has no NaN or infinity"},
		{`pw.emit("m", {}, {v = {}})`, "field v must be a number, boolean or string, got table"},
		{`pw.emit("m", {t = {}}, {v = 1})`, "tag t must be a string, got table"},
		{`pw.emit("m", {[1] = "x"}, {v = 1})`, "tag names must be non-empty strings"},
		{`pw.emit("m", {}, {v = pw.process(1)})`, "got process"},
	} {
		_, err := run(t, w.cfg, "emit.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "emit.lua:2:") {
			t.Errorf("%s: got %v, want an error at emit.lua:2 with %q", c.src, err, c.want)
		}
	}
	if len(w.emitter.lines) != 0 {
		t.Errorf("bad emits reached the stream: %q", w.emitter.lines)
	}
}

func TestLogAlertAndPrint(t *testing.T) {
	w := newWorld(t)
	var printed bytes.Buffer
	w.cfg.Print = &printed
	w.eval(t, `pw.log("checked", 3, "sessions", nil)
print("to", "print", 1)
pw.alert{message = "agent grows", session = pw.session("agent:claude/myproj"), process = pw.process(110), value = 600, threshold = 500, unit = "MiB/min"}
pw.alert{message = "pod near its limit", level = "critical", session = "cgroup:pod/x"}`)
	if got, want := printed.String(), "to\tprint\t1\n"; got != want {
		t.Errorf("print wrote %q, want %q", got, want)
	}
	wantLogs := `level=INFO msg="checked 3 sessions nil" script=api.lua
level=WARN msg="agent grows" script=api.lua alert=true kind=agent session=claude/myproj severity=warning comm=claude pid=110 threshold=500 unit=MiB/min value=600
level=ERROR msg="pod near its limit" script=api.lua alert=true kind=cgroup session=pod/x severity=critical
`
	if got := w.logs.String(); got != wantLogs {
		t.Errorf("logs\n%s\nwant\n%s", got, wantLogs)
	}
	wantLines := "procwalk_alert kind=agent,rule=api.lua,session=claude/myproj,severity=warning | comm=claude,message=agent grows,pid=110,threshold=500,unit=MiB/min,value=600 @1700864000\n" +
		"procwalk_alert kind=cgroup,rule=api.lua,session=pod/x,severity=critical | message=pod near its limit @1700864000"
	if got := strings.Join(w.emitter.lines, "\n"); got != wantLines {
		t.Errorf("emitted\n%s\nwant\n%s", got, wantLines)
	}
}

func TestAlertMisuse(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{`pw.alert{}`, "alert needs a message string"},
		{`pw.alert{message = "m", level = "panic"}`, "alert level must be info, warning or critical"},
		{`pw.alert{message = "m", session = 3}`, `alert session must be a session or "KIND:NAME"`},
		{`pw.alert{message = "m", process = 1}`, "alert process must be a process, got number"},
		{`pw.alert{message = "m", rule = "x"}`, "alert key rule is reserved"},
		{`pw.alert{message = "m", kind = "tmux"}`, "alert key kind is reserved"},
		{`pw.alert{message = "m", extra = {}}`, "alert extra must be a number, boolean or string"},
		{`pw.alert{message = "m", value = 0/0}`, "alert value is NaN: line protocol has no NaN or infinity"},
		{`pw.alert("m")`, "table expected, got string"},
	} {
		_, err := run(t, w.cfg, "alert.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "alert.lua:2:") {
			t.Errorf("%s: got %v, want an error at alert.lua:2 with %q", c.src, err, c.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	check(t, []struct{ src, want string }{
		{`print(pw.bytes(0), pw.bytes(1023), pw.bytes(1536), pw.bytes(1.5 * pw.GiB), pw.bytes(-200 * pw.MiB), pw.bytes(pw.TiB))`,
			"0 B\t1023 B\t1.5 KiB\t1.5 GiB\t-200.0 MiB\t1.0 TiB"},
		{`print(pw.parse_bytes("2GiB"), pw.parse_bytes("512M"), pw.parse_bytes("1.5 GB"), pw.parse_bytes(42))`,
			"2147483648\t536870912\t1500000000\t42"},
		{`print(pw.parse_bytes("lots"))`, `nil	bad size "lots": want a number with an optional unit, e.g. 512MiB, 2G, 1.5GiB`},
		{`print(pw.duration(0), pw.duration(42.9), pw.duration(125), pw.duration(7500), pw.duration(90000), pw.duration(-60))`,
			"0 s\t42 s\t2 min\t2 hr 5 min\t1 day 1 hr\t-1 min"},
		{`print(pw.KiB, pw.MiB, pw.GiB)`, "1024\t1048576\t1073741824"},
		{`print(pw.printable("a\tb\27[31m\nc"), pw.printable("plain"))`, `a\tb\x1b[31m\nc` + "\tplain"},
		{`print(pw.wrap("one two three", 7, "  "), pw.wrap(string.rep("ab ", 30)) == string.rep("ab ", 26) .. "ab\nab ab ab ")`,
			"one two\n  three\ttrue"},
		{`print(pw.now(), pw.hostname(), pw.script, pw.dry_run)`, "1700864000\ttesthost\tapi.lua\tfalse"},
		{`print(#pw.args, pw.args[1], pw.args[2], pw.args.limit, pw.args.ticks, pw.parse_bytes(pw.args.limit))`,
			"3\tfirst\tlimit=2GiB\t2GiB\t3\t2147483648"},
		{`local s = pw.snapshot() print(s.time, s.procs, s.listed, s.gone, s.partial, s.cpus, pw.bytes(s.mem_total), s.page_size, s.boot_time, s.clock_ticks)`,
			"1700864000\t16\t16\t0\tfalse\t4\t16.0 GiB\t4096\t1700000000\t100"},
		{`local s = pw.snapshot() print(s.source, s.source_note == "")`, "proc\ttrue"},
		{`print(...)`, "first\tlimit=2GiB\t--ticks=3"},
	})
}

func TestHelperMisuse(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ src, want string }{
		{`pw.bytes("x")`, "number expected, got string"},
		{`pw.printable({})`, "string expected, got table"},
		{`pw.parse_bytes({})`, "size string expected, got table"},
		{`pw.duration()`, "number expected, got nil"},
		{`pw.wrap("a b", 2, "  ")`, "bad argument #3 to wrap (the indent must be narrower than the width)"},
		{`pw.wrap("a b", 0)`, "bad argument #2 to wrap (the width must be at least 1)"},
		{`pw.debounce("k", true, 0)`, "n must be at least 1"},
		{`pw.debounce("k", true, 1.5)`, "integer expected"},
		{`pw.debounce("k", true, "5 minutes")`, `a number of runs or a duration such as "5m" expected, got "5 minutes"`},
		{`pw.debounce("k", true, "-5m")`, `a number of runs or a duration such as "5m" expected, got "-5m"`},
		{`pw.top("memory")`, `unknown metric "memory"; metrics are pid, ppid`},
		{`pw.top("rss", 0)`, "count must be positive"},
		{`pw.processes{color = "red"}`, "unknown filter key color; keys are comm"},
		{`pw.processes{uid = "root"}`, "filter uid must be an integer"},
		{`pw.processes{session = "tmux:none"}`, "no such session tmux:none"},
		{`pw.processes(5)`, "filter must be a table or a function, got number"},
		{`pw.sessions("pods")`, `unknown session kind "pods"`},
	} {
		_, err := run(t, w.cfg, "helper.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
		if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "helper.lua:2:") {
			t.Errorf("%s: got %v, want an error at helper.lua:2 with %q", c.src, err, c.want)
		}
	}
}

// TestUserNamesFollowPasswd: a runtime that runs at every gather (watch,
// telegraf --execd --script) names users after the passwd file as it is
// at each run: usermod renames dev by writing a new file over the old.
func TestUserNamesFollowPasswd(t *testing.T) {
	b, err := os.ReadFile("testdata/passwd")
	if err != nil {
		t.Fatal(err)
	}
	passwd := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(passwd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	if w.cfg.Users, err = procwalk.ReadUsers(passwd); err != nil {
		t.Fatal(err)
	}
	s, err := Compile("user.lua", []byte("print(require('procwalk').process(112).user)"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w.cfg.Print = &out
	r := New(w.cfg)
	defer r.Close()
	runOnce := func() string {
		t.Helper()
		out.Reset()
		if err := r.Run(context.Background(), s, w.in); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out.String())
	}
	if got := runOnce(); got != "dev" {
		t.Fatalf("first run: p.user = %q, want dev", got)
	}
	renamed := passwd + "+"
	if err := os.WriteFile(renamed, bytes.Replace(b, []byte("dev:"), []byte("developer:"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(renamed, passwd); err != nil {
		t.Fatal(err)
	}
	if got := runOnce(); got != "developer" {
		t.Errorf("after usermod: p.user = %q, want developer", got)
	}
}
