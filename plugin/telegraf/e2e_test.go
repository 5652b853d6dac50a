//go:build linux

package procwalkinput

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/procwalk/procwalk/plugin"
)

// e2e_test.go runs a real Telegraf (built by build-telegraf.sh: exec,
// execd, procstat, procwalk compiled in, file and influxdb outputs) with the
// example configs against a tmux session the test starts on its own socket,
// and a real InfluxDB 1.x on 127.0.0.1. Gated: PROCWALK_INTEGRATION=1 and
// PROCWALK_TELEGRAF=<telegraf binary>; .ci/run sets both.

const sleepers = 8 // sleep processes in the test's tmux session

// sleeperSeconds is how long the test's sleepers sleep: longer than go
// test's default 10 min timeout, and short enough that they and their tmux
// server end on their own when a killed test never ran its cleanup.
const sleeperSeconds = 900

// runTimeout bounds how long a Telegraf run may take to write what a test
// waits for: a gather a second, but Telegraf and procwalk start slowly on a
// loaded CI machine.
const runTimeout = 60 * time.Second

type e2e struct {
	t        *testing.T
	telegraf string
	binDir   string // holds the procwalk binary; put first on Telegraf's PATH
	socket   string // the test's tmux socket name (-L)
	sleep    string // the sleepers' argument, seconds: marks this test's processes
}

func setup(t *testing.T) *e2e {
	t.Helper()
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("set PROCWALK_INTEGRATION=1 and PROCWALK_TELEGRAF to run Telegraf end to end")
	}
	tg := os.Getenv("PROCWALK_TELEGRAF")
	if tg == "" {
		t.Fatal("PROCWALK_TELEGRAF is not set: build one with plugin/telegraf/build-telegraf.sh")
	}
	e := &e2e{t: t, telegraf: tg, binDir: t.TempDir(), socket: fmt.Sprintf("pw-e2e-%d", os.Getpid()),
		sleep: fmt.Sprintf("%d.%06d", sleeperSeconds, time.Now().UnixNano()%1e6)}
	build := exec.Command("go", "build", "-o", filepath.Join(e.binDir, "procwalk"), "./cmd/procwalk")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as the README installs it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building procwalk: %v\n%s", err, out)
	}
	// The session's shell and its sleepers are the processes we assert on.
	script := fmt.Sprintf("for i in $(seq %d); do sleep %s & done; wait", sleepers, e.sleep)
	if out, err := exec.Command("tmux", "-L", e.socket, "new-session", "-d", "-s", "e2e", script).CombinedOutput(); err != nil {
		t.Fatalf("starting tmux: %v\n%s", err, out)
	}
	socketPath, err := exec.Command("tmux", "-L", e.socket, "display-message", "-p", "#{socket_path}").Output()
	if err != nil {
		t.Fatalf("asking tmux for its socket path: %v", err)
	}
	t.Cleanup(func() {
		exec.Command("tmux", "-L", e.socket, "kill-server").Run()
		// tmux leaves the socket file; later discovery would dial it.
		os.Remove(strings.TrimSpace(string(socketPath)))
	})
	e.waitSleepers(sleepers)
	return e
}

// waitSleepers waits until n of the test's sleepers run: the assertions
// count them, and a loaded machine may take a while to fork them all.
func (e *e2e) waitSleepers(n int) {
	t := e.t
	t.Helper()
	want := []byte("sleep\x00" + e.sleep + "\x00")
	count := func() int {
		pids, _ := filepath.Glob("/proc/[0-9]*")
		found := 0
		for _, dir := range pids {
			if b, err := os.ReadFile(dir + "/cmdline"); err == nil && bytes.Equal(b, want) {
				found++
			}
		}
		return found
	}
	deadline := time.Now().Add(60 * time.Second)
	for got := count(); got < n; got = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the test's %d sleepers run after 60 s", got, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// common is the agent and output part of every Telegraf run: gather and
// flush each second, write line protocol to outFile and, when influxURL is
// set, to InfluxDB.
func common(outFile, influxURL string) string {
	c := fmt.Sprintf(`
[agent]
  interval = "1s"
  flush_interval = "1s"
  omit_hostname = true
[[outputs.file]]
  files = [%q]
  data_format = "influx"
`, outFile)
	if influxURL != "" {
		c += fmt.Sprintf(`
[[outputs.influxdb]]
  urls = [%q]
  database = "procwalk_e2e"
`, influxURL)
	}
	return c
}

// run starts Telegraf with the configs (the agent's first: Telegraf sets an
// input's host tag from the agent settings loaded before it), waits until done(output) holds or
// runTimeout passes, stops it with SIGTERM and returns its output and log.
func (e *e2e) run(configs []string, done func(out []byte) bool) (out []byte, log string) {
	t := e.t
	t.Helper()
	dir := t.TempDir()
	outFile := filepath.Join(dir, "metrics.out")
	var args []string
	for i, c := range configs {
		if !strings.HasSuffix(c, ".conf") { // inline config text
			path := filepath.Join(dir, fmt.Sprintf("c%d.conf", i))
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(c, "OUTFILE", outFile)), 0o644); err != nil {
				t.Fatal(err)
			}
			c = path
		}
		args = append(args, "--config", c)
	}
	var logBuf bytes.Buffer
	cmd := exec.Command(e.telegraf, args...)
	cmd.Env = append(os.Environ(), "PATH="+e.binDir+":"+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for time.Since(start) < runTimeout {
		out, _ = os.ReadFile(outFile)
		if done(out) {
			t.Logf("Telegraf wrote the expected metrics after %.1f s", time.Since(start).Seconds())
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	select {
	case <-waitDone:
	case <-time.After(time.Minute): // it stops at once; a minute only bounds a hang
		cmd.Process.Kill()
		<-waitDone
		t.Errorf("telegraf did not stop within a minute of SIGTERM")
	}
	out, _ = os.ReadFile(outFile)
	if !done(out) {
		t.Fatalf("Telegraf never produced the expected metrics in %v; output:\n%s\nlog:\n%s", runTimeout, out, logBuf.String())
	}
	return out, logBuf.String()
}

type metric struct {
	name   string
	tags   map[string]string
	fields map[string]any
}

// parse decodes Telegraf's output strictly. Lines of one measurement, tag
// set and timestamp whose fields are apart are one metric, as InfluxDB
// stores them: the compiled-in input adds a line's counters, gauges and
// strings as three Telegraf metrics (AddCounter, AddGauge, AddFields).
// Lines with a field in common stay apart (procstat's lines of two pids
// differ only in their fields).
func parse(t *testing.T, b []byte) []metric {
	t.Helper()
	var out []metric
	seen := map[string]int{} // series and time -> index in out
	dec := lineprotocol.NewDecoderWithBytes(b)
	for dec.Next() {
		name, err := dec.Measurement()
		if err != nil {
			t.Fatalf("Telegraf wrote bad line protocol: %v", err)
		}
		m := metric{name: string(name), tags: map[string]string{}, fields: map[string]any{}}
		key := string(name)
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			m.tags[string(k)] = string(v)
			key += "," + string(k) + "=" + string(v)
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			m.fields[string(k)] = v.Interface()
		}
		ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		key += " " + strconv.FormatInt(ts.UnixNano(), 10)
		if i, ok := seen[key]; ok && apart(out[i].fields, m.fields) {
			for k, v := range m.fields {
				out[i].fields[k] = v
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, m)
	}
	if err := dec.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// apart reports whether a and b have no key in common.
func apart(a, b map[string]any) bool {
	for k := range b {
		if _, ok := a[k]; ok {
			return false
		}
	}
	return true
}

func find(ms []metric, name string, tags map[string]string) []metric {
	var out []metric
next:
	for _, m := range ms {
		if m.name != name {
			continue
		}
		for k, v := range tags {
			if m.tags[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// sessionRates matches the test session's line once it has rates: from the
// second sample on, which execd and the compiled-in input keep.
var sessionRates = regexp.MustCompile(`(?m)^procwalk_session,kind=tmux,session=e2e [^\n]*\bcpu_percent=`)

func hasSessionRates(out []byte) bool { return sessionRates.Match(out) }

// checkSessionRates checks the test session's CPU rate where it was
// written: its shell and sleepers sleep.
func checkSessionRates(t *testing.T, ms []metric) {
	t.Helper()
	for _, m := range find(ms, "procwalk_session", map[string]string{"kind": "tmux", "session": "e2e"}) {
		if cpu, ok := m.fields["cpu_percent"].(float64); ok && (cpu < 0 || cpu > 5) {
			t.Errorf("sleeping session at %v%% CPU", cpu)
		}
	}
}

// checkLog fails on every error Telegraf logged: a parse error, a procwalk
// stderr line without a level marker (execd logs those as `[inputs.execd]
// stderr: "..."`), a procwalk that exited or could not run, an output that
// failed. One error is Telegraf's own and is let through: "read |0: file
// already closed", from execd's pipe readers racing its cmd.Wait when
// procwalk exits (internal/process, v1.37). procwalk makes it rare by
// closing its pipes before it exits (plugin.ReleasePipes, in
// execd_stdio.go), but on a loaded machine Telegraf's readers may still be
// late.
func checkLog(t *testing.T, log string) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, " E! ") && !strings.HasSuffix(line, "read |0: file already closed") ||
			strings.Contains(line, `] stderr: "`) {
			t.Errorf("Telegraf logged: %s", line)
		}
	}
}

func checkTmuxSession(t *testing.T, ms []metric) {
	t.Helper()
	s := find(ms, "procwalk_session", map[string]string{"kind": "tmux", "session": "e2e"})
	if len(s) == 0 {
		t.Fatal("no procwalk_session for the test's tmux session")
	}
	want := int64(sleepers + 1) // the pane's shell and its sleepers
	for _, m := range s {
		if m.fields["procs"] != want || m.fields["zombies"] != int64(0) {
			t.Errorf("session e2e: procs=%v zombies=%v, want %d and 0", m.fields["procs"], m.fields["zombies"], want)
		}
		if rss, _ := m.fields["rss_bytes"].(int64); rss < want*100<<10 {
			t.Errorf("session e2e: rss_bytes=%v, implausibly small for %d processes", m.fields["rss_bytes"], want)
		}
	}
	if len(find(ms, "procwalk", nil)) == 0 {
		t.Error("no procwalk self-metrics line")
	}
}

func TestExecExample(t *testing.T) {
	e := setup(t)
	influx := startInflux(t)
	out, log := e.run([]string{common("OUTFILE", influx), "../../examples/telegraf-exec.conf"}, func(out []byte) bool {
		return bytes.Count(out, []byte("procwalk_session,kind=tmux,session=e2e ")) >= 2
	})
	checkLog(t, log)
	ms := parse(t, out)
	checkTmuxSession(t, ms)
	top := find(ms, "procwalk_process", map[string]string{"kind": "tmux", "session": "e2e", "rank": "1"})
	if len(top) == 0 || top[0].fields["comm"] == nil || top[0].fields["cmdline"] == nil {
		t.Errorf("example asks for --process-top 3: no rank 1 process line with comm and cmdline: %v", top)
	}
	// The same series, queried back from InfluxDB over HTTP.
	got := influxQuery(t, influx, `SELECT last("procs") FROM "procwalk_session" WHERE "kind"='tmux' AND "session"='e2e'`)
	if got != float64(sleepers+1) {
		t.Errorf("InfluxDB has procs=%v for tmux:e2e, want %d", got, sleepers+1)
	}
}

func TestExecdExample(t *testing.T) {
	e := setup(t)
	out, log := e.run([]string{common("OUTFILE", ""), "../../examples/telegraf-execd.conf"}, hasSessionRates)
	checkLog(t, log)
	ms := parse(t, out)
	checkTmuxSession(t, ms)
	checkSessionRates(t, ms)
}

func TestCompiledInInput(t *testing.T) {
	e := setup(t)
	conf := fmt.Sprintf(`
[[inputs.procwalk]]
  session_kinds = ["tmux"]
  tmux_sockets = [%q]
  process_top = 2
`, e.socket)
	// Waiting for rates checks that the input keeps its samples between
	// gathers, as plugin/telegraf/README.md says.
	out, log := e.run([]string{common("OUTFILE", ""), conf}, hasSessionRates)
	checkLog(t, log)
	ms := parse(t, out)
	checkTmuxSession(t, ms)
	checkSessionRates(t, ms)
	if n := len(find(ms, "procwalk_process", map[string]string{"session": "e2e"})); n < 2 {
		t.Errorf("%d process lines for process_top = 2", n)
	}
}

// TestProcstatSchemaMatchesProcstat runs Telegraf's procstat (its default
// properties: cpu, memory, mmap) and procwalk's procstat schema (with --pss,
// for the mmap fields it has) side by side on the test's sleepers and
// compares them field by field.
func TestProcstatSchemaMatchesProcstat(t *testing.T) {
	e := setup(t)
	// Anchored, so that only the sleepers match, not the pane's shell whose
	// command line starts them. (pgrep and procwalk leave themselves out.)
	pattern := "^sleep " + e.sleep + "$"
	conf := fmt.Sprintf(`
[[inputs.procstat]]
  pattern = %q
  [inputs.procstat.tags]
    source = "telegraf"
[[inputs.exec]]
  commands = ["procwalk telegraf --schema procstat --procstat-pattern '%s' --pss --skip-self-metrics"]
  data_format = "influx"
  [inputs.exec.tags]
    source = "procwalk"
`, pattern, pattern)
	out, log := e.run([]string{common("OUTFILE", ""), conf}, func(out []byte) bool {
		return bytes.Count(out, []byte("source=procwalk")) >= 2*(sleepers+1) && bytes.Count(out, []byte("source=telegraf")) >= 2*(sleepers+1)
	})
	checkLog(t, log)
	ms := parse(t, out)
	theirs, ours := map[int64]metric{}, map[int64]metric{}
	for _, m := range find(ms, "procstat", nil) {
		pid, _ := m.fields["pid"].(int64)
		if m.tags["source"] == "telegraf" {
			theirs[pid] = m
		} else {
			ours[pid] = m
		}
	}
	if len(ours) != sleepers || len(theirs) != sleepers {
		t.Fatalf("procstat lines for %d (procwalk) and %d (telegraf) pids, want %d each", len(ours), len(theirs), sleepers)
	}
	for pid, o := range ours {
		th, ok := theirs[pid]
		if !ok {
			t.Errorf("pid %d: procwalk reports it, procstat does not", pid)
			continue
		}
		for k, v := range o.tags {
			if k != "source" && th.tags[k] != v {
				t.Errorf("pid %d tag %s: procwalk %q, procstat %q", pid, k, v, th.tags[k])
			}
		}
		for k, v := range o.fields {
			tv, ok := th.fields[k]
			if !ok {
				t.Errorf("pid %d: field %s is not procstat's", pid, k)
				continue
			}
			if fmt.Sprintf("%T", v) != fmt.Sprintf("%T", tv) {
				t.Errorf("pid %d field %s: procwalk %T, procstat %T", pid, k, v, tv)
			}
			switch k {
			case "pid", "ppid", "num_threads", "memory_vms", "memory_rss", "cmdline", "user", "status":
				if v != tv {
					t.Errorf("pid %d field %s: procwalk %v, procstat %v", pid, k, v, tv)
				}
			case "created_at":
				// In a container gopsutil derives the boot time from
				// /proc/uptime, which jitters by up to a second; procwalk
				// uses btime from /proc/stat.
				const slack = int64(time.Second + 20*time.Millisecond)
				if d := v.(int64) - tv.(int64); d < -slack || d > slack {
					t.Errorf("pid %d created_at: procwalk %v, procstat %v", pid, v, tv)
				}
			}
		}
	}
	// Every procstat field is procwalk's too, but those plugin/README.md
	// lists as not covered, and cpu_usage, which needs a previous sample:
	// procstat keeps one, an exec run does not.
	notCovered := []string{"cpu_time_iowait", "minor_faults", "major_faults", "child_minor_faults", "child_major_faults",
		"memory_size", "memory_shared_clean", "memory_shared_dirty", "memory_private_clean", "memory_private_dirty",
		"memory_referenced", "memory_anonymous", "cpu_usage"}
	o, th := ours[firstKey(ours)], theirs[firstKey(theirs)]
	var missing []string
	for k := range th.fields {
		if _, ok := o.fields[k]; !ok {
			missing = append(missing, k)
			if !slices.Contains(notCovered, k) {
				t.Errorf("procstat writes %s, procwalk's procstat schema does not", k)
			}
		}
	}
	slices.Sort(missing)
	t.Logf("procwalk writes %d of procstat's %d fields per process; not: %s", len(o.fields), len(th.fields), strings.Join(missing, " "))
}

func firstKey(m map[int64]metric) int64 {
	for k := range m {
		return k
	}
	return 0
}

// startInflux runs influxd on free 127.0.0.1 ports with a temporary data
// directory and returns its HTTP URL.
func startInflux(t *testing.T) string {
	t.Helper()
	influxd, err := exec.LookPath("influxd")
	if err != nil {
		t.Fatal("influxd is not installed (apt-get install -y influxdb)")
	}
	dir := t.TempDir()
	httpAddr, rpcAddr := freeAddr(t), freeAddr(t)
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = %q
  log-enabled = false
[ifql]
  enabled = false
`, rpcAddr, dir+"/meta", dir+"/data", dir+"/wal", httpAddr)
	if err := os.WriteFile(dir+"/influxdb.conf", []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(influxd, "-config", dir+"/influxdb.conf")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	// A loaded machine (CI's two cores, other tests' fork storms) can take
	// influxd many seconds to start; one that exits says why at once.
	base := "http://" + httpAddr
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			exited <- err // for the clean-up
			t.Fatalf("influxd exited (%v) before it answered /ping:\n%s", err, log.String())
		default:
		}
		if resp, err := http.Get(base + "/ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return base
			}
		}
	}
	t.Fatalf("influxd did not answer /ping in 90 s:\n%s", log.String())
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// influxQuery runs one InfluxQL query and returns the first value of the
// first series as a float.
func influxQuery(t *testing.T, base, q string) float64 {
	t.Helper()
	series := influxSeries(t, base, q)
	if len(series) == 0 || len(series[0].Values) == 0 {
		t.Fatalf("query %q: no data", q)
	}
	v, _ := series[0].Values[0][1].(float64)
	return v
}

// cpuSeconds is the CPU pid has used, itself and its reaped children
// (procstat's pgrep, procwalk's tmux client): utime + stime + cutime +
// cstime from /proc/<pid>/stat, in seconds.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after "(comm) ": state is index 0, utime (field 14) index 11.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	sum := 0.0
	for _, v := range f[11:15] {
		ticks, _ := strconv.ParseFloat(v, 64)
		sum += ticks
	}
	return sum / 100 // USER_HZ
}

// TestCPUAgainstProcstat prints what one gather costs in CPU on this host,
// all processes of the host in scope: Telegraf's procstat (pattern ".",
// cpu and memory), procwalk in exec mode (a whole process per gather, with
// its tmux client), per session kind (user sessions read every status;
// cgroup sessions walk cgroupfs; agents read the cmdline of interpreters and
// their cwd), procwalk in execd mode (steady state, and its resident
// memory), and a raw loop that only reads every stat and statm, run in this
// test's thread and as a process of its own (procwalk/testdata/rawloop), which like
// exec mode pays for starting a Go process.
//
// procstat's figure is the whole Telegraf process (and its reaped pgrep
// children) per gather: an idle Telegraf with the same agent and output
// used no measurable CPU (0 ticks in 20 s), so all of it is procstat's
// gathering and the 2,000-odd metrics it makes per gather. Timing is
// reported, not asserted: speed claims are the benchmarks'
// (plugin/bench_test.go).
func TestCPUAgainstProcstat(t *testing.T) {
	e := setup(t)
	e.addLoad(loadProcesses(t))
	// procstat takes its interval (2 s) per gather and costs a second of CPU
	// each, steady from gather to gather: 5 are enough. procwalk's gathers
	// cost tens of ms, where a scheduler tick or another process's burst
	// shows: 20 each, averaged, keep the ratios steady from run to run.
	const procstatGathers, gathers = 5, 20
	procstat := e.procstatCPU(procstatGathers)
	raw := rawLoopCPU(t, gathers)
	rawProcess := e.rawProcessCPU(gathers)
	procs := countProcs(t)
	t.Logf("CPU per gather over %d processes (seconds):", procs)
	t.Logf("  telegraf procstat pattern=\".\" cpu+memory   %.4f", procstat)
	t.Logf("  raw stat+statm read loop                   %.4f", raw)
	t.Logf("  the same loop as a process of its own      %.4f", rawProcess)
	row := func(what string, cpu float64) {
		t.Logf("  %-42s %.4f  (%.0fx less than procstat, %.2fx the raw loop, %.2fx its process)", what, cpu, procstat/cpu, cpu/raw, cpu/rawProcess)
	}
	row("procwalk exec, no sessions", e.execCPU(gathers, "--session-kinds", "group")) // no group rules: no sessions
	execTmux := e.execCPU(gathers, "--session-kinds", "tmux")
	row("procwalk exec, tmux sessions", execTmux)
	for _, kind := range []string{"user", "cgroup", "agent"} {
		row("procwalk exec, "+kind+" sessions", e.execCPU(gathers, "--session-kinds", kind))
	}
	row("procwalk exec, default sessions", e.execCPU(gathers))
	for _, kinds := range [][2]string{{"tmux", "tmux"}, {"default", strings.Join(plugin.DefaultKinds(), ",")}} {
		cpu, rss, peak := e.execdCPU(gathers, "--session-kinds", kinds[1])
		row("procwalk execd, "+kinds[0]+" sessions", cpu)
		t.Logf("  %42s RSS %.1f MiB between gathers, %.1f MiB peak", "", float64(rss)/(1<<20), float64(peak)/(1<<20))
	}
	if execTmux >= procstat {
		t.Errorf("procwalk exec (%.4f s) costs as much as procstat (%.4f s) per gather", execTmux, procstat)
	}
}

// loadProcesses is how many sleepers the CPU comparison adds, so that the
// figures measure per-process work rather than start-up costs on a quiet
// CI machine: PROCWALK_E2E_LOAD, default 2000.
func loadProcesses(t *testing.T) int {
	n := 2000
	if v := os.Getenv("PROCWALK_E2E_LOAD"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			t.Fatalf("PROCWALK_E2E_LOAD=%q: want a number of processes", v)
		}
	}
	return n
}

// addLoad starts n more sleepers in a second session of the test's tmux
// server and waits until they run.
func (e *e2e) addLoad(n int) {
	t := e.t
	if n == 0 {
		return
	}
	script := fmt.Sprintf("for i in $(seq %d); do sleep %s & done; wait", n, e.sleep)
	if out, err := exec.Command("tmux", "-L", e.socket, "new-session", "-d", "-s", "load", script).CombinedOutput(); err != nil {
		t.Fatalf("starting the load: %v\n%s", err, out)
	}
	// Our own sleepers are counted, not the host's processes, which other
	// programs start and end meanwhile.
	e.waitSleepers(sleepers + n)
}

// procstatCPU runs Telegraf with only procstat and returns its CPU (its own
// and its reaped pgrep children's) per gather, after two warm-up gathers.
func (e *e2e) procstatCPU(gathers int) float64 {
	t := e.t
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	conf := filepath.Join(dir, "procstat.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`
[agent]
  interval = "2s"
  flush_interval = "1s"
  omit_hostname = true
[[inputs.procstat]]
  pattern = "."
  properties = ["cpu", "memory"]
[[outputs.file]]
  files = [%q]
  data_format = "influx"
`, out)), 0o644)
	cmd := exec.Command(e.telegraf, "--config", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	lookups := func() int {
		b, _ := os.ReadFile(out)
		return bytes.Count(b, []byte("procstat_lookup,"))
	}
	waitFor := func(n int) {
		deadline := time.Now().Add(time.Duration(n)*10*time.Second + 30*time.Second)
		for lookups() < n {
			if time.Now().After(deadline) {
				t.Fatalf("procstat gathered %d times, want %d", lookups(), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(2)
	n1, c1 := lookups(), cpuSeconds(t, cmd.Process.Pid)
	waitFor(n1 + gathers)
	n2, c2 := lookups(), cpuSeconds(t, cmd.Process.Pid)
	return (c2 - c1) / float64(n2-n1)
}

// execCPU runs `procwalk telegraf` gathers times, as inputs.exec does, and
// returns the CPU of each whole run (with its tmux client), on average.
func (e *e2e) execCPU(gathers int, args ...string) float64 {
	t := e.t
	total := 0.0
	for i := 0; i < gathers; i++ {
		cmd := exec.Command(filepath.Join(e.binDir, "procwalk"), append([]string{"telegraf"}, args...)...)
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			t.Fatalf("procwalk telegraf: %v", err)
		}
		total += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	return total / float64(gathers)
}

// execdCPU runs `procwalk telegraf --execd`, feeds it gathers lines after its
// first batch, and returns its CPU per gather, its resident memory between
// gathers and its peak resident memory.
func (e *e2e) execdCPU(gathers int, args ...string) (cpu float64, rss, peak uint64) {
	t := e.t
	cmd := exec.Command(filepath.Join(e.binDir, "procwalk"), append([]string{"telegraf", "--execd"}, args...)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := bufio.NewReader(stdout)
	batch := func() { // one line in, one batch out, ending in the self line
		stdin.Write([]byte("\n"))
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading execd output: %v", err)
			}
			if bytes.HasPrefix(line, []byte("procwalk,schema=")) {
				return
			}
		}
	}
	batch() // warm: buffers grown, samples taken
	c1 := cpuSeconds(t, cmd.Process.Pid)
	for i := 0; i < gathers; i++ {
		batch()
	}
	c2 := cpuSeconds(t, cmd.Process.Pid)
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	kB := func(key string) uint64 {
		m := regexp.MustCompile(key + `:\s+(\d+) kB`).FindSubmatch(status)
		if m == nil {
			t.Fatalf("no %s in /proc/<pid>/status", key)
		}
		v, _ := strconv.ParseUint(string(m[1]), 10, 64)
		return v << 10
	}
	return (c2 - c1) / float64(gathers), kB("VmRSS"), kB("VmHWM")
}

// rawProcessCPU builds the root module's procwalk/testdata/rawloop and
// runs it gathers times, returning the CPU of each whole run on average, as
// execCPU does for procwalk.
func (e *e2e) rawProcessCPU(gathers int) float64 {
	t := e.t
	bin := filepath.Join(e.binDir, "rawloop")
	build := exec.Command("go", "build", "-o", bin, "./procwalk/testdata/rawloop")
	build.Dir = "../.." // the root module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building procwalk/testdata/rawloop: %v\n%s", err, out)
	}
	total := 0.0
	for i := 0; i < gathers; i++ {
		cmd := exec.Command(bin)
		if err := cmd.Run(); err != nil {
			t.Fatalf("rawloop: %v", err)
		}
		total += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	return total / float64(gathers)
}

// rawLoopCPU reads every pid's stat and statm gathers times on one locked
// thread and returns that thread's CPU per pass.
func rawLoopCPU(t *testing.T, gathers int) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const rusageThread = 1 // RUSAGE_THREAD
	var before, after syscall.Rusage
	syscall.Getrusage(rusageThread, &before)
	buf := make([]byte, 4096)
	for i := 0; i < gathers; i++ {
		dir, err := os.Open("/proc")
		if err != nil {
			t.Fatal(err)
		}
		names, _ := dir.Readdirnames(-1)
		dir.Close()
		for _, name := range names {
			if name[0] < '0' || name[0] > '9' {
				continue
			}
			for _, f := range [...]string{"/stat", "/statm"} {
				fd, err := syscall.Open("/proc/"+name+f, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				for {
					if n, err := syscall.Read(fd, buf); n <= 0 || err != nil {
						break
					}
				}
				syscall.Close(fd)
			}
		}
	}
	syscall.Getrusage(rusageThread, &after)
	tv := func(r syscall.Rusage) float64 {
		return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
	}
	return (tv(after) - tv(before)) / float64(gathers)
}

func countProcs(t *testing.T) int {
	names, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// longLinesScript prints and logs a line of 100 KB on every gather, and
// fails every other gather with an error message of 200,000 characters;
// the gathers in between emit a metric numbering them.
const longLinesScript = `
local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
print(("p"):rep(100000))
pw.log(("l"):rep(100000))
if pw.state.n % 2 == 1 then error(("e"):rep(200000)) end
pw.emit("e2e_long", {}, {n = pw.state.n})
`

// TestExecdLongLogLines runs a script whose print, log and error lines are
// each longer than the 64 KiB Telegraf's execd reads a stderr line with:
// one such line used to make execd stop reading procwalk's stderr for good,
// after which procwalk blocked on the full pipe and its metrics stopped.
// With every stderr line cut at 4 KiB, gathers go on (6 script runs at
// least, 3 of them failing with the long error) and Telegraf logs the cut
// lines, stops on SIGTERM, and never says "token too long".
func TestExecdLongLogLines(t *testing.T) {
	e := setup(t)
	script := filepath.Join(t.TempDir(), "long.lua")
	if err := os.WriteFile(script, []byte(longLinesScript), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`
[[inputs.execd]]
  command = ["procwalk", "telegraf", "--execd", "--signal", "STDIN", "--session-kinds", "user", "--skip-self-metrics", "--script", %q]
  signal = "STDIN"
  data_format = "influx"
  restart_delay = "10s"
`, script)
	runs := regexp.MustCompile(`(?m)^e2e_long n=(\d+)`)
	out, log := e.run([]string{common("OUTFILE", ""), conf}, func(out []byte) bool {
		m := runs.FindAllSubmatch(out, -1)
		if len(m) == 0 {
			return false
		}
		n, _ := strconv.Atoi(string(m[len(m)-1][1]))
		return n >= 6
	})
	if strings.Contains(log, "token too long") || strings.Contains(log, "error reading stderr") {
		t.Errorf("Telegraf stopped reading procwalk's stderr:\n%.4000s", log)
	}
	for _, want := range []string{"I! [inputs.execd] pppp", "I! [inputs.execd] l", "W! [inputs.execd] "} {
		if !strings.Contains(log, want) {
			t.Errorf("Telegraf's log lacks %q", want)
		}
	}
	if n := strings.Count(log, " ... [line cut at 4 KiB]"); n < 6+6 {
		t.Errorf("%d cut lines in Telegraf's log, want at least 12 (print and log of 6 runs)", n)
	}
	// A run's error keeps 2 KiB of its message, so that the traceback fits.
	if n := strings.Count(log, "eee... (error message of 195.3 KiB cut at 2.0 KiB)"); n < 3 {
		t.Errorf("%d errors cut at 2 KiB in Telegraf's log, want 3 or more", n)
	}
	for _, line := range strings.Split(log, "\n") {
		if len(line) > 8<<10 {
			t.Errorf("Telegraf logged a line of %d bytes: %.100s...", len(line), line)
		}
	}
	if n := len(runs.FindAll(out, -1)); n < 3 {
		t.Errorf("%d gathers with the script's metric, want 3 or more", n)
	}
}
