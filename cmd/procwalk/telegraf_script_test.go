//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// telegrafCLI runs procwalk telegraf on the Lua fixture with stdin.
func telegrafCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout bytes.Buffer
	r := telegrafCLIWith(t, strings.NewReader(stdin), &stdout, args...)
	r.stdout = stdout.String()
	return r
}

func telegrafCLIWith(t *testing.T, stdin io.Reader, stdout io.Writer, args ...string) result {
	t.Helper()
	clearEnv(t)
	base := []string{"telegraf", "--proc", scriptProc, "--passwd", scriptPasswd, "--cgroup-root", scriptCgroup,
		"--tmux-sockets", "/nonexistent/tmux", "--session-kinds", "user,agent", "--skip-self-metrics"}
	var stderr bytes.Buffer
	err := run(context.Background(), append(base, args...), stdin, stdout, &stderr)
	return result{"", stderr.String(), exitCode(err)}
}

// pacedStdin is Telegraf's stdin when every interval is longer than a
// gather: the next line comes only once output has been written since the
// previous one (execd merges lines that queue up during a gather). Its
// Write is that output.
type pacedStdin struct {
	lines   int
	started bool
	written chan struct{}
	out     bytes.Buffer
}

func newPacedStdin(lines int) *pacedStdin {
	return &pacedStdin{lines: lines, written: make(chan struct{}, 1)}
}

func (p *pacedStdin) Read(b []byte) (int, error) {
	if p.lines == 0 {
		return 0, io.EOF
	}
	if p.started {
		<-p.written
	}
	p.started = true
	p.lines--
	b[0] = '\n'
	return 1, nil
}

func (p *pacedStdin) Write(b []byte) (int, error) {
	n, err := p.out.Write(b)
	select {
	case p.written <- struct{}{}:
	default:
	}
	return n, err
}

// The script's emits, alerts and kills join the batch after procwalk's
// own lines; its print and logs become execd log lines.
func TestTelegrafScriptExec(t *testing.T) {
	rule := writeScript(t, "rule.lua", `local pw = require "procwalk"
print("mode", pw.mode, pw.args.limit)
for _, s in ipairs(pw.sessions("agent")) do
  pw.emit("agent_rule", {project = s.attrs.project}, {procs = s.procs})
  pw.alert{message = "agent seen", session = s}
  s:top("rss", 1)[1]:kill{}
end`)
	r := telegrafCLI(t, "", "--dry-run", "--script", rule, "--script-arg", "limit=2GiB")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := checkLines(t, r.stdout, 13) // 3 user + 1 agent sessions, the agent's 6 status lines, then the script's 3
	for i, prefix := range []string{
		"procwalk_session,kind=user,session=app,user=app ",
		"procwalk_session,agent=claude,kind=agent,session=claude/myproj ",
		"procwalk_agent_status,agent=claude,kind=agent,session=claude/myproj,status=idle value=1i ",
		"agent_rule,project=myproj procs=3 ",
		"procwalk_alert,kind=agent,rule=rule.lua,session=claude/myproj,severity=warning message=\"agent seen\" ",
		"procwalk_action,outcome=dry_run,requester=rule:rule.lua pid=110i,",
	} {
		idx := []int{0, 3, 5, 10, 11, 12}[i]
		if !strings.HasPrefix(lines[idx], prefix) {
			t.Errorf("line %d: %q, want prefix %q", idx+1, lines[idx], prefix)
		}
	}
	for _, want := range []string{"I! mode\ttelegraf\t2GiB\n", "W! agent seen script=rule.lua alert=true kind=agent session=claude/myproj", "W! would signal pid 110 (claude)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// Under execd the script keeps its state from gather to gather, and a
// failing run is a W! line: the batch is still written, without the
// failed run's metrics.
func TestTelegrafScriptExecd(t *testing.T) {
	rule := writeScript(t, "count.lua", `local pw = require "procwalk"
pw.state.n = (pw.state.n or 0) + 1
pw.emit("gathers", {}, {n = pw.state.n})
if pw.state.n == 2 then error("second gather fails") end`)
	in := newPacedStdin(3)
	r := telegrafCLIWith(t, in, in, "--execd", "--session-kinds", "user", "--script", rule)
	r.stdout = in.out.String()
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var gathers []string
	for _, l := range checkLines(t, r.stdout, 11) {
		if strings.HasPrefix(l, "gathers ") {
			gathers = append(gathers, strings.Fields(l)[1])
		}
	}
	// One run per stdin line (execd's priming gather, which only measures
	// rates, runs no script); the second's metric went with its error.
	if strings.Join(gathers, " ") != "n=1 n=3" {
		t.Errorf("gathers %q", gathers)
	}
	if !strings.Contains(r.stderr, "W! partial gather: hook: lua script error: count.lua:4: second gather fails") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

func TestTelegrafScriptErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--script", "nope"}, `no script "nope"`},
		{[]string{"--script-arg", "a=1"}, "--script-arg needs --script"},
		{[]string{"--script", writeScript(t, "bad.lua", "x = = 1")}, "bad.lua:1: syntax error"},
		{[]string{"--script", "zombies", "--script-timeout", "0s"}, "--script-timeout 0s"},
	} {
		r := telegrafCLI(t, "", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 with %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}
