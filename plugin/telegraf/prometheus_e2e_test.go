//go:build linux

package procwalkinput

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/plugin"
	pwmetric "github.com/procwalk/procwalk/procwalk/metric"
)

// prometheus_e2e_test.go feeds a real Prometheus (Debian's prometheus
// package) and a real InfluxDB from procwalk in a real Telegraf: one
// Telegraf runs examples/telegraf-prometheus.conf (the compiled-in input,
// outputs.prometheus_client) for Prometheus to scrape, another the
// compiled-in input into InfluxDB. The host has what every panel shows: the
// test's tmux session, agents with transcripts, a memory cgroup under a
// limit. Then /metrics must be clean (no string labels, typed counters
// ending in _total) and every panel of both dashboards (dashPanels) must
// return data.

// startPrometheus runs prometheus on a free 127.0.0.1 port, scraping target
// (host:port) every second, and returns its URL.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed (apt-get install -y prometheus; .ci/run does)")
	}
	dir := t.TempDir()
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: telegraf
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var log bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatalf("prometheus was not ready in 60 s:\n%s", log.String())
	return ""
}

// promSample is one series of a PromQL answer.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"` // [time, "number"]
}

// number is the sample's value.
func (s promSample) number(t *testing.T) float64 {
	t.Helper()
	if len(s.Value) == 2 {
		if v, ok := s.Value[1].(string); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	t.Fatalf("PromQL sample %v has no number", s)
	return 0
}

// promQuery runs an instant PromQL query; none when there is no data.
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: a loaded machine answers late
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Status != "success" {
		t.Fatalf("PromQL %q: %s", q, body.Error)
	}
	return body.Data.Result
}

// startTelegraf starts a Telegraf on configs (text), stopped at cleanup,
// and returns a function reading its log so far.
func startTelegraf(t *testing.T, bin, binDir string, configs ...string) (log func() string) {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for i, c := range configs {
		path := filepath.Join(dir, fmt.Sprintf("c%d.conf", i))
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	logFile, err := os.Create(filepath.Join(dir, "telegraf.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return func() string {
		b, _ := os.ReadFile(logFile.Name())
		return string(b)
	}
}

// prometheusExample is examples/telegraf-prometheus.conf as the test runs
// it: listening on listen, gathering every second, on host pwe2e, with
// the procwalk options of opts.
func prometheusExample(t *testing.T, listen, opts string) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/telegraf-prometheus.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, r := range [][2]string{
		{`listen = "127.0.0.1:9273"`, fmt.Sprintf("listen = %q", listen)},
		{"\n  interval = \"10s\"", "\n  interval = \"1s\""},
		{`flush_interval = "10s"`, `flush_interval = "1s"` + "\n  hostname = \"pwe2e\""},
		{"[[inputs.procwalk]]\n", "[[inputs.procwalk]]\n" + opts},
	} {
		if strings.Count(conf, r[0]) != 1 {
			t.Fatalf("examples/telegraf-prometheus.conf: want one %q to replace", r[0])
		}
		conf = strings.Replace(conf, r[0], r[1], 1)
	}
	return conf
}

// dashboardData starts what the dashboards show besides the test's tmux
// session: an agent with a transcript, and a sleeper in a memory cgroup of
// its own under a 256 MiB limit (cgroup v1's memory controller, or v2). It
// returns the procwalk options that find them.
func dashboardData(t *testing.T, e *e2e) string {
	t.Helper()
	dir, home, agentBin := e2eAgentHome(t)
	a := startE2EAgent(t, agentBin, dir, home, fmt.Sprintf("pwdash-%d", os.Getpid()))
	waitExec(t, a.cmd.Process.Pid, agentBin)
	folder := regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(a.cwd, "-")
	a.transcript = filepath.Join(home, ".claude", "projects", folder, "0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d.jsonl")
	if err := os.MkdirAll(filepath.Dir(a.transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a.write(t, a.line(now, "user", `{"role":"user","content":"start"}`),
		a.line(now, "assistant", `{"id":"msg_1","model":"claude-opus-4-1","stop_reason":"end_turn","content":[{"type":"text","text":"Ready."}],`+e2eUsage+`}`))

	// A price table for the cost panel: the README's line for the model.
	prices := filepath.Join(dir, "prices.conf")
	if err := os.WriteFile(prices, []byte("claude-opus-4-1 15 75 1.50 18.75 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cgroupSleeper(t, e)
	return fmt.Sprintf(`  tmux_sockets = [%q]
  agents = ["e2eagent=^pwe2eagent$"]
  agent_transcripts = ["e2eagent=claude:{home}/.claude/projects/{project}"]
  agent_prices = %q
  pss = true
  io = true
`, e.socket, prices)
}

// cgroupSleeper moves one of the test's sleepers into a memory cgroup of
// its own under a limit, so that a cgroup session has one: v1's memory
// hierarchy where it is mounted, else v2's. Removed at cleanup.
func cgroupSleeper(t *testing.T, e *e2e) {
	t.Helper()
	name := fmt.Sprintf("pwdash-%d", os.Getpid()) // not procwalk-*: those are never sessions
	dir, limit := filepath.Join("/sys/fs/cgroup/memory", name), "memory.limit_in_bytes"
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		dir, limit = filepath.Join("/sys/fs/cgroup", name), "memory.max"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("making a memory cgroup for the cgroup panels: %v (needs root)", err)
	}
	cmd := exec.Command("sleep", e.sleep)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for deadline := time.Now().Add(30 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	})
	for file, value := range map[string]string{limit: fmt.Sprint(256 << 20), "cgroup.procs": fmt.Sprint(cmd.Process.Pid)} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			t.Fatalf("cgroup %s: %v", file, err)
		}
	}
}

// exposition lists what is wrong with a /metrics page of
// examples/telegraf-prometheus.conf: a label that is none of procwalk's tags
// (a string field made a label), a counter not ending in _total, a
// procwalk metric untyped or without a TYPE line, another exporter's
// metric, and any of want missing.
func exposition(page string, want ...string) []string {
	tags := map[string]bool{"host": true, "kind": true, "session": true, "pod": true, "namespace": true, "unit": true,
		"user": true, "agent": true, "rank": true, "by": true, "schema": true, "status": true}
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	types := map[string]string{}
	var bad []string
	for _, line := range strings.Split(page, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			types[f[2]] = f[3]
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		labels, _, _ := strings.Cut(rest, "}")
		for _, m := range label.FindAllStringSubmatch(labels, -1) {
			if !tags[m[1]] {
				bad = append(bad, fmt.Sprintf("label %q on %s: a string field became a label", m[1], name))
			}
		}
		if _, ok := types[name]; !ok {
			bad = append(bad, name+" has no TYPE line")
		}
	}
	for name, typ := range types {
		switch {
		case !strings.HasPrefix(name, "procwalk"):
			bad = append(bad, name+": not procwalk's (collectors_exclude)")
		case typ == "counter" && !strings.HasSuffix(name, "_total"):
			bad = append(bad, "counter "+name+" does not end in _total: add it to the example's processors.rename")
		case typ != "counter" && strings.HasSuffix(name, "_total"):
			bad = append(bad, name+" ends in _total but is a "+typ)
		case typ == "untyped":
			bad = append(bad, name+" is untyped: the compiled-in input adds every number as a counter or a gauge")
		}
	}
	for _, w := range want {
		if _, ok := types[w]; !ok {
			bad = append(bad, "no "+w)
		}
	}
	slices.Sort(bad)
	return bad
}

// TestExposition: exposition finds what it is for, on pages in the form
// prometheus_client writes.
func TestExposition(t *testing.T) {
	good := `# HELP procwalk_session_cpu_time_seconds_total Telegraf collected metric
# TYPE procwalk_session_cpu_time_seconds_total counter
procwalk_session_cpu_time_seconds_total{host="a",kind="tmux",session="build"} 1.5
# HELP procwalk_session_rss_bytes Telegraf collected metric
# TYPE procwalk_session_rss_bytes gauge
procwalk_session_rss_bytes{host="a",kind="tmux",session="build"} 4096
`
	if got := exposition(good, "procwalk_session_rss_bytes"); len(got) != 0 {
		t.Errorf("a clean page: %q", got)
	}
	bad := `# TYPE procwalk_session_cpu_time_seconds counter
procwalk_session_cpu_time_seconds{host="a",kind="tmux",session="build"} 1.5
# TYPE procwalk_process_rss_bytes untyped
procwalk_process_rss_bytes{cmdline="sleep 1",host="a",kind="tmux",rank="1",session="build"} 4096
# TYPE go_goroutines gauge
go_goroutines 7
procwalk_gather_seconds{host="a"} 0.1
`
	want := []string{
		"counter procwalk_session_cpu_time_seconds does not end in _total: add it to the example's processors.rename",
		"go_goroutines: not procwalk's (collectors_exclude)",
		`label "cmdline" on procwalk_process_rss_bytes: a string field became a label`,
		"no procwalk_session_rss_bytes",
		"procwalk_gather_seconds has no TYPE line",
		"procwalk_process_rss_bytes is untyped: the compiled-in input adds every number as a counter or a gauge",
	}
	if got := exposition(bad, "procwalk_session_rss_bytes"); !slices.Equal(got, want) {
		t.Errorf("a bad page:\n got %q\nwant %q", got, want)
	}
}

// idsButPID are the ids of a process line but its pid, sorted: the example
// keeps them out of Prometheus.
func idsButPID() []string {
	var ids []string
	for _, d := range plugin.ProcessFields() {
		if d.ID && d.Name != "pid" {
			ids = append(ids, d.Name)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestPrometheusExample: examples/telegraf-prometheus.conf renames every
// counter that procwalk_session, procwalk_process and the procwalk line
// carry to NAME_total,
// and excludes every id of a process but its pid, as the catalogue has
// them: a counter or an id added to the catalogue fails here until the
// example knows it.
func TestPrometheusExample(t *testing.T) {
	b, err := os.ReadFile("../../examples/telegraf-prometheus.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	renamed := map[string]bool{}
	for _, m := range regexp.MustCompile(`field = "([a-z0-9_]+)"\s+dest = "([a-z0-9_]+)"`).FindAllStringSubmatch(conf, -1) {
		if m[1] == "value" && m[2] == "status" {
			continue // procwalk_agent_status's state set
		}
		if m[2] != m[1]+"_total" {
			t.Errorf("the example renames %s to %s, want %s_total", m[1], m[2], m[1])
		}
		renamed[m[1]] = true
	}
	var excluded []string
	if m := regexp.MustCompile(`(?m)^  fieldexclude = \[(.*)\]$`).FindStringSubmatch(conf); m != nil {
		for _, f := range strings.Split(m[1], ",") {
			excluded = append(excluded, strings.Trim(strings.TrimSpace(f), `"`))
		}
	}
	for _, d := range slices.Concat(plugin.SessionFields(), plugin.ProcessFields()) {
		if d.Kind == pwmetric.Counter && !renamed[d.Name] {
			t.Errorf("counter %s: the example's processors.rename has no %s_total", d.Name, d.Name)
		}
	}
	for _, f := range plugin.SelfFields() {
		if f.Kind == pwmetric.Counter && !renamed[f.Name] {
			t.Errorf("counter %s of the procwalk line: the example's processors.rename has no %s_total", f.Name, f.Name)
		}
	}
	ids := idsButPID()
	slices.Sort(excluded)
	if !slices.Equal(excluded, ids) {
		t.Errorf("the example's fieldexclude is %q, want the ids of a process but its pid: %q", excluded, ids)
	}
}

// grafanaMacros replaces the dashboards' variables and Grafana's macros by
// what a person looking at the last minutes of every host would get.
func grafanaMacros(q string) string {
	return strings.NewReplacer("$timeFilter", "time > now() - 5m", "$__interval", "5s", "$__rate_interval", "30s",
		"$host", ".*", "$kind", ".*").Replace(q)
}

// TestDashboardQueries: Telegraf -> /metrics -> Prometheus and Telegraf ->
// InfluxDB, then every panel's query of both dashboards returns data.
func TestDashboardQueries(t *testing.T) {
	e := setup(t)
	opts := dashboardData(t, e)
	listen := freeAddr(t)
	prom := startPrometheus(t, listen)
	influx := startInflux(t)
	promLog := startTelegraf(t, e.telegraf, e.binDir, prometheusExample(t, listen, opts))
	influxLog := startTelegraf(t, e.telegraf, e.binDir, fmt.Sprintf(`
[agent]
  interval = "1s"
  flush_interval = "1s"
  hostname = "pwe2e"
[[outputs.influxdb]]
  urls = [%q]
  database = "procwalk_e2e"
[[inputs.procwalk]]
  process_top = 3
%s`, influx, opts))

	// Rates need a second gather, rate() two scrapes of a counter that
	// moved: wait until both backends have every panel's data.
	var missing []string
	for deadline := time.Now().Add(3 * runTimeout); ; time.Sleep(time.Second) {
		missing = missing[:0]
		for _, p := range dashPanels() {
			for i, q := range p.prom {
				if len(promQuery(t, prom, grafanaMacros(q))) == 0 {
					missing = append(missing, fmt.Sprintf("PromQL of %q (%c): %s", p.title, 'A'+i, q))
				}
			}
			for i, q := range p.influx {
				if len(influxSeries(t, influx, grafanaMacros(q))) == 0 {
					missing = append(missing, fmt.Sprintf("InfluxQL of %q (%c): %s", p.title, 'A'+i, q))
				}
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, m := range missing {
		t.Errorf("no data: %s", m)
	}
	if len(missing) > 0 {
		t.Logf("Telegraf (Prometheus) log:\n%s\nTelegraf (InfluxDB) log:\n%s", promLog(), influxLog())
	}

	resp, err := http.Get("http://" + listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, problem := range exposition(string(page), "procwalk_session_cpu_time_seconds_total", "procwalk_session_rss_bytes",
		"procwalk_gather_seconds", "procwalk_agent_status", "procwalk_session_danger") {
		t.Errorf("/metrics: %s", problem)
	}
	for _, id := range idsButPID() {
		if strings.Contains(string(page), "\nprocwalk_process_"+id+"{") {
			t.Errorf("/metrics has procwalk_process_%s: the example's fieldexclude should keep it out", id)
		}
	}
	if testing.Verbose() {
		t.Logf("/metrics, the test's tmux session:\n%s", grepLines(string(page), `session="e2e"`))
	}
	// The test's own tmux session is there, by its names.
	if got := promQuery(t, prom, `procwalk_session_procs{kind="tmux", session="e2e", host="pwe2e"}`); len(got) != 1 {
		t.Errorf("the test's tmux session in Prometheus: %v", got)
	}
	checkLog(t, promLog())
	checkLog(t, influxLog())
}

// grepLines are the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPrometheusExampleWithExecd: examples/telegraf-prometheus.conf with
// the [[inputs.execd]] its comment gives for a stock Telegraf in place of
// [[inputs.procwalk]] serves the same metric names with the same label
// names as the compiled-in input (so the dashboard's PromQL works on
// either), every one untyped.
func TestPrometheusExampleWithExecd(t *testing.T) {
	e := setup(t)
	compiled, viaExecd := freeAddr(t), freeAddr(t)
	startTelegraf(t, e.telegraf, e.binDir, prometheusExample(t, compiled, fmt.Sprintf("  session_kinds = [\"tmux\"]\n  tmux_sockets = [%q]\n", e.socket)))

	conf := prometheusExample(t, viaExecd, "")
	head, rest, ok := strings.Cut(conf, "[[inputs.procwalk]]\n")
	_, rest, ok2 := strings.Cut(rest, "\n# [[inputs.execd]]\n")
	block, tail, ok3 := strings.Cut(rest, "\n\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("examples/telegraf-prometheus.conf has no commented [[inputs.execd]] block after [[inputs.procwalk]]")
	}
	execd := "[[inputs.execd]]\n"
	for _, line := range strings.Split(block, "\n") {
		execd += strings.TrimPrefix(line, "# ") + "\n"
	}
	const top = `"--process-top", "3"]`
	if !strings.Contains(execd, top) {
		t.Fatalf("the example's execd command has no %s for the test to extend:\n%s", top, execd)
	}
	execd = strings.Replace(execd, top, fmt.Sprintf(`"--process-top", "3", "--kind", "tmux", "--tmux-socket", %q]`, e.socket), 1)
	log := startTelegraf(t, e.telegraf, e.binDir, head+execd+"\n"+tail)

	// Rates come at the compiled-in input's second gather: wait until both
	// pages have the test's session and the same names and labels.
	var a, b map[string]string
	for deadline := time.Now().Add(2 * runTimeout); ; time.Sleep(time.Second) {
		a, b = metricShapes(t, compiled), metricShapes(t, viaExecd)
		if a["procwalk_session_cpu_percent"] != "" && maps.Equal(a, b) || time.Now().After(deadline) {
			break
		}
	}
	for name, labels := range a {
		if b[name] != labels {
			t.Errorf("%s{%s} from the compiled-in input; with execd: {%s}", name, labels, b[name])
		}
	}
	for name, labels := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s{%s} with execd only", name, labels)
		}
	}
	page := httpGet(t, "http://"+viaExecd+"/metrics")
	for _, line := range strings.Split(page, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && f[3] != "untyped" {
			t.Errorf("with execd, %s is a %s: the example's comment says untyped", f[2], f[3])
		}
	}
	checkLog(t, log())
}

// metricShapes maps each metric name of a prometheus_client page to the
// sorted names of its labels.
func metricShapes(t *testing.T, addr string) map[string]string {
	t.Helper()
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	out := map[string]string{}
	for _, line := range strings.Split(httpGet(t, "http://"+addr+"/metrics"), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		var keys []string
		for _, m := range label.FindAllStringSubmatch(rest, -1) {
			keys = append(keys, m[1])
		}
		slices.Sort(keys)
		out[name] = strings.Join(keys, ",")
	}
	return out
}

// httpGet is the body at url; "" while nothing listens there yet.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
