//go:build linux

package procwalkinput

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agent_status_e2e_test.go checks, with a real Telegraf, a real InfluxDB
// and a real Prometheus, that an agent's status changes start no new
// series: counting agents by status over a window that saw statuses change
// gives the number of agents, and each agent's token counters stay one
// series. Its agents are copies of sleep named pwe2eagent (an agent rule of
// the test's own), each in a project folder of its own, whose Claude Code
// transcripts the test writes. The queries are plugin/README.md's, as
// written there.

const e2eAgents = 8

// e2eAgent is one of the test's agents.
type e2eAgent struct {
	name       string // the session's name: e2eagent/<project>
	cmd        *exec.Cmd
	transcript string
	cwd        string
}

// TestAgentStatusWithoutSplitSeries runs the compiled-in input over eight
// agents, all idle at first. Then two get a prompt (working: the model is
// answering), two ask for a tool (blocked: nothing runs), one exits
// (ended), one gets a prompt answered by Claude Code's rate-limit error
// (rate_limited) and two stay idle. InfluxDB is fed by two inputs tagged
// as two hosts of a fleet, each seeing the same eight agents (agents of
// one name on two hosts); Prometheus by examples/telegraf-prometheus.conf.
// Over the whole window:
//   - plugin/README.md's queries of procwalk_agent_status (a state set: a
//     line per status, 1 for the agent's), each agent's last value in the
//     window summed by status, give 2 working, 2 blocked, 1 ended,
//     1 rate_limited, 0 error and 2 idle per host: 16 in InfluxDB for the
//     two hosts' 16 agents, 8 in Prometheus; the statuses each agent had
//     in the window add up to more (what a status tag made each agent
//     count as, once per status);
//   - procwalk_session has one series per agent (no status tag), whose
//     last string field status is the agent's (README's query), and whose
//     input_tokens counter grows within that series for the agents whose
//     tool use added tokens; in Prometheus, input_tokens_total is one
//     series per agent over the window.
func TestAgentStatusWithoutSplitSeries(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("set PROCWALK_INTEGRATION=1 and PROCWALK_TELEGRAF to run Telegraf end to end")
	}
	tg := os.Getenv("PROCWALK_TELEGRAF")
	if tg == "" {
		t.Fatal("PROCWALK_TELEGRAF is not set: build one with plugin/telegraf/build-telegraf.sh")
	}
	dir, home, agentBin := e2eAgentHome(t)
	agents := make([]*e2eAgent, e2eAgents)
	for i := range agents {
		agents[i] = startE2EAgent(t, agentBin, dir, home, fmt.Sprintf("pwe2e-%d-%d", os.Getpid(), i+1))
	}
	for _, a := range agents {
		waitExec(t, a.cmd.Process.Pid, agentBin)
	}
	// Transcripts are bound to an agent only when written after it
	// started (less a second of clock slack): write them now, each a
	// prompt and an answer that ended its turn.
	for i, a := range agents {
		folder := regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(a.cwd, "-")
		a.transcript = filepath.Join(home, ".claude", "projects", folder, fmt.Sprintf("0b7e51c2-9a3f-4c1e-8d2a-%012d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(a.transcript), 0o700); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		a.write(t, a.line(now, "user", `{"role":"user","content":"start"}`),
			a.line(now, "assistant", `{"id":"msg_1","model":"claude-opus-4-1","stop_reason":"end_turn","content":[{"type":"text","text":"Ready."}],`+e2eUsage+`}`))
	}

	influx := startInflux(t)
	procwalkOpts := `  session_kinds = ["agent"]
  agents = ["e2eagent=^pwe2eagent$"]
  agent_transcripts = ["e2eagent=claude:{home}/.claude/projects/{project}"]
  agent_active_within = "1s"
`
	listen := freeAddr(t)
	prom := startPrometheus(t, listen)
	start := time.Now()
	promLog := startTelegraf(t, tg, "", prometheusExample(t, listen, procwalkOpts))
	// Two hosts of a fleet, each with the same eight agents.
	hosts := []string{"pwe2e-h1", "pwe2e-h2"}
	var conf string
	for _, h := range hosts {
		conf += "\n[[inputs.procwalk]]\n" + procwalkOpts + "  skip_self_metrics = true\n  [inputs.procwalk.tags]\n    host = \"" + h + "\"\n"
	}
	mine := `"session" =~ /^e2eagent\/pwe2e-` + fmt.Sprint(os.Getpid()) + `-/`
	window := fmt.Sprintf(`time >= %d`, start.UnixNano())
	// The README's queries over the test's agents and window.
	inWindow := func(q string) string {
		const readmeWindow = "time > now() - 1h"
		if !strings.Contains(q, readmeWindow) {
			t.Fatalf("plugin/README.md's query has no %q for the test to replace: %s", readmeWindow, q)
		}
		return strings.Replace(q, readmeWindow, mine+" AND "+window, 1)
	}
	byStatusQuery := inWindow(readmeQuery(t, "-- InfluxQL: agents by status over a window"))
	lastStatusQuery := inWindow(readmeQuery(t, "-- InfluxQL: each agent's latest status"))
	lastStatus := func() map[string]string {
		out := map[string]string{}
		for _, s := range influxSeries(t, influx, lastStatusQuery) {
			if len(s.Values) > 0 {
				out[s.Tags["host"]+" "+s.Tags["session"]], _ = s.Values[0][1].(string)
			}
		}
		return out
	}
	every := func(statuses map[string]string, want func(i int) string) bool {
		for _, h := range hosts {
			for i, a := range agents {
				if statuses[h+" "+a.name] != want(i) {
					return false
				}
			}
		}
		return true
	}
	// The expected status of agent i once it changed.
	final := func(i int) string {
		switch {
		case i < 2:
			return "working"
		case i < 4:
			return "blocked"
		case i == 4:
			return "ended"
		case i == 5:
			return "rate_limited"
		}
		return "idle"
	}
	promSelector := fmt.Sprintf(`{session=~"e2eagent/pwe2e-%d-.*"}`, os.Getpid())
	promFinal := func() bool {
		got := map[string]string{}
		for _, s := range promQuery(t, prom, "procwalk_agent_status"+promSelector+" == 1") {
			got[s.Metric["session"]] = s.Metric["status"]
		}
		for i, a := range agents {
			if got[a.name] != final(i) {
				return false
			}
		}
		return true
	}
	changed := false
	e := &e2e{t: t, telegraf: tg}
	_, log := e.run([]string{common("OUTFILE", influx), conf}, func([]byte) bool {
		if !changed {
			if !every(lastStatus(), func(int) string { return "idle" }) {
				return false
			}
			// Every agent was idle in InfluxDB: change six of them.
			now := time.Now()
			for i, a := range agents[:6] {
				switch {
				case i < 2: // a prompt: the model is answering
					a.write(t, a.line(now, "user", `{"role":"user","content":"run the tests"}`))
				case i < 4: // a tool use that awaits its result; nothing runs
					a.write(t, a.line(now, "assistant", `{"id":"msg_2","model":"claude-opus-4-1","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make"}}],`+e2eUsage+`}`))
				case i == 4:
					syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
					a.cmd.Wait()
				default: // the prompt's answer is the API error Claude Code writes once its retries are spent
					a.write(t, a.line(now, "user", `{"role":"user","content":"go on"}`), a.apiError(now, "rate_limit", 429))
				}
			}
			changed = true
			return false
		}
		return every(lastStatus(), final) && promFinal()
	})
	checkLog(t, log)
	checkLog(t, promLog())

	// Counting agents by status over the window: each agent's last value of
	// each status series, summed by status.
	count := map[string]float64{}
	total := 0.0
	for _, s := range influxSeries(t, influx, byStatusQuery) {
		v, _ := s.Values[0][1].(float64)
		count[s.Tags["status"]] = v
		total += v
	}
	n := float64(len(hosts))
	want := map[string]float64{"working": 2 * n, "blocked": 2 * n, "ended": n, "idle": 2 * n, "rate_limited": n, "error": 0}
	if total != e2eAgents*n || !mapsEqual(count, want) {
		t.Errorf("InfluxDB, agents by status over the window: %v (%v in all), want %v (%d agents on each of %d hosts)\n%s", count, total, want, e2eAgents, len(hosts), byStatusQuery)
	}
	// What a status tag counted: every status each agent had in the window.
	had := 0
	for _, s := range influxSeries(t, influx, `SELECT max("value") FROM "procwalk_agent_status" WHERE `+mine+` AND `+window+` GROUP BY "host", "session", "status"`) {
		if v, _ := s.Values[0][1].(float64); v == 1 {
			had++
		}
	}
	if had < (e2eAgents+6)*len(hosts) {
		t.Errorf("%d (agent, status) pairs held in the window, want at least %d: the statuses did not change", had, (e2eAgents+6)*len(hosts))
	}
	t.Logf("InfluxDB over the window: %v by each agent's last status; %d by every status an agent had (a status tag's count)", count, had)

	// The same in Prometheus, by the README's PromQL over the window.
	secs := int(time.Since(start).Seconds()) + 1
	promQ := readmeQuery(t, "# PromQL: agents by status over a window")
	if !strings.Contains(promQ, "procwalk_agent_status[1h]") {
		t.Fatalf("plugin/README.md's PromQL has no procwalk_agent_status[1h] for the test to replace: %s", promQ)
	}
	promQ = strings.Replace(promQ, "procwalk_agent_status[1h]", fmt.Sprintf("procwalk_agent_status%s[%ds]", promSelector, secs), 1)
	count, total = map[string]float64{}, 0
	for _, s := range promQuery(t, prom, promQ) {
		v := s.number(t)
		count[s.Metric["status"]] = v
		total += v
	}
	want = map[string]float64{"working": 2, "blocked": 2, "ended": 1, "idle": 2, "rate_limited": 1, "error": 0}
	if total != e2eAgents || !mapsEqual(count, want) {
		t.Errorf("Prometheus, agents by status over the window: %v (%v in all), want %v (%d agents)\n%s", count, total, want, e2eAgents, promQ)
	}
	tokens := promQuery(t, prom, fmt.Sprintf("count_over_time(procwalk_session_input_tokens_total%s[%ds])", promSelector, secs))
	if len(tokens) != e2eAgents {
		t.Errorf("Prometheus: %d procwalk_session_input_tokens_total series for %d agents over the window: %+v", len(tokens), e2eAgents, tokens)
	}
	for _, s := range tokens {
		if _, ok := s.Metric["status"]; ok {
			t.Errorf("Prometheus: input_tokens_total has a status label: %v", s.Metric)
		}
	}

	// One procwalk_session series per agent and host, whatever its status did.
	series := influxSeries(t, influx, `SELECT count("input_tokens") FROM "procwalk_session" WHERE `+mine+` AND `+window+` GROUP BY *`)
	if len(series) != e2eAgents*len(hosts) {
		t.Errorf("%d procwalk_session series with input_tokens for %d agents on %d hosts: %+v", len(series), e2eAgents, len(hosts), series)
	}
	for _, s := range series {
		if _, ok := s.Tags["status"]; ok {
			t.Errorf("procwalk_session has a status tag: %v", s.Tags)
		}
	}
	// The counter grew within that one series for the agents whose tool use
	// added tokens (e2eUsage's 5 input tokens), and stayed for the others.
	grown := map[string]float64{}
	for _, s := range influxSeries(t, influx, `SELECT spread("input_tokens") FROM "procwalk_session" WHERE `+mine+` AND `+window+` GROUP BY "host", "session"`) {
		grown[s.Tags["host"]+" "+s.Tags["session"]], _ = s.Values[0][1].(float64)
	}
	for _, h := range hosts {
		for i, a := range agents {
			want := 0.0
			if i == 2 || i == 3 {
				want = 5
			}
			if grown[h+" "+a.name] != want {
				t.Errorf("%s on %s: input_tokens grew by %v in its series, want %v", a.name, h, grown[h+" "+a.name], want)
			}
		}
	}
}

// readmeQuery is the query of plugin/README.md's code block whose first
// line is marker: the block's other lines, joined by spaces.
func readmeQuery(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+marker+"\n")
	if !ok {
		t.Fatalf("plugin/README.md has no code block starting with %q", marker)
	}
	q, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatalf("plugin/README.md: the code block of %q does not end", marker)
	}
	return strings.Join(strings.Fields(q), " ")
}

// e2eUsage is the usage of an assistant message in the test's transcripts.
const e2eUsage = `"usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":1000,"cache_creation_input_tokens":100}`

// line is a Claude Code transcript line of a's session.
func (a *e2eAgent) line(at time.Time, typ, msg string) string {
	return fmt.Sprintf(`{"type":%q,"sessionId":"0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d","cwd":%q,"timestamp":%q,"message":%s}`,
		typ, a.cwd, at.UTC().Format(time.RFC3339Nano), msg)
}

// apiError is the assistant line Claude Code writes when a model call
// failed for good (2.1.39's shape: procwalk/session/testdata/transcripts,
// claude-api-error.jsonl): a <synthetic> message of zero usage, with the
// error's kind and HTTP status beside it.
func (a *e2eAgent) apiError(at time.Time, kind string, status int) string {
	return fmt.Sprintf(`{"type":"assistant","sessionId":"0b7e51c2-9a3f-4c1e-8d2a-6f0e3b1a2c4d","cwd":%q,"timestamp":%q,`+
		`"message":{"id":"msg_synth_1","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: Rate limit reached"}],`+
		`"stop_reason":"stop_sequence","stop_sequence":"","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},`+
		`"error":%q,"isApiErrorMessage":true,"apiErrorStatus":%d}`, a.cwd, at.UTC().Format(time.RFC3339Nano), kind, status)
}

// write appends lines to a's transcript.
func (a *e2eAgent) write(t *testing.T, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(a.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// waitExec waits until pid runs exe (a started process is first a copy of
// the test binary), however slow the machine.
func waitExec(t *testing.T, pid int, exe string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && got == exe {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exec %s in 60 s", pid, exe)
		}
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// influxResult is one series of an InfluxQL answer.
type influxResult struct {
	Tags   map[string]string `json:"tags"`
	Values [][]any           `json:"values"`
}

// influxSeries runs one InfluxQL query and returns its series, none when
// there is no data (yet).
func influxSeries(t *testing.T, base, q string) []influxResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: a loaded machine answers late
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/query?db=procwalk_e2e&q="+url.QueryEscape(q), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Results []struct {
			Series []influxResult `json:"series"`
			Error  string         `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Error != "" && !strings.Contains(body.Error, "database not found") {
		t.Fatalf("query %q: %s", q, body.Error)
	}
	if len(body.Results) == 0 {
		return nil
	}
	if r := body.Results[0]; r.Error != "" {
		if strings.Contains(r.Error, "database not found") {
			return nil // Telegraf has not written yet
		}
		t.Fatalf("query %q: %s", q, r.Error)
	}
	return body.Results[0].Series
}

// e2eAgentHome makes a temporary HOME and a copy of sleep named pwe2eagent,
// an agent's command as /proc shows it (the configs' agent pattern).
func e2eAgentHome(t *testing.T) (dir, home, agentBin string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	home, bin := filepath.Join(dir, "home"), filepath.Join(dir, "bin")
	agentBin = filepath.Join(bin, "pwe2eagent")
	for _, d := range []string{home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentBin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, home, agentBin
}

// startE2EAgent starts agentBin in dir/work/project with HOME home, in a
// process group of its own, killed at the test's end.
func startE2EAgent(t *testing.T, agentBin, dir, home, project string) *e2eAgent {
	t.Helper()
	a := &e2eAgent{name: "e2eagent/" + project, cwd: filepath.Join(dir, "work", project)}
	if err := os.MkdirAll(a.cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(agentBin, fmt.Sprint(sleeperSeconds))
	a.cmd.Dir, a.cmd.Env = a.cwd, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Only while the leader is unreaped: its pid, the group's id, cannot be
		// reused then; after a Wait another test's new group may hold it.
		if a.cmd.ProcessState == nil { // the test ends one agent itself
			syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
			a.cmd.Wait()
		}
	})
	return a
}
