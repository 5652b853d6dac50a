//go:build linux

package main

import (
	"cmp"
	"encoding/json"
	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// The session commands run on the session fixture: a cgroup v1 host with
// tmux panes, agents, pods and units, described in
// procwalk/session/testdata/sessions/README.md.
const (
	sessionsProc    = "../../procwalk/session/testdata/sessions/proc"
	sessionsPasswd  = "../../procwalk/session/testdata/sessions/passwd"
	sessionsCgroups = "../../procwalk/session/testdata/sessions/cgroupfs-v1"
	fixturePodUID   = "6b1e0f8e-3a5c-4f1d-9a7b-2c3d4e5f6a7b"
)

// sessionsFixture runs a session command on the fixture, without rates
// (no wait) unless args ask for an interval.
func sessionsFixture(command string, args ...string) []string {
	return append([]string{command, "--proc", sessionsProc, "--passwd", sessionsPasswd, "--cgroup-root", sessionsCgroups,
		"--tmux-socket", "/nonexistent/procwalk-test.sock"}, args...)
}

// tableRows splits a table into rows of fields keyed by the first two
// fields ("KIND NAME").
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 2 && f[0] != "..." {
			rows[f[0]+" "+f[1]] = f
		}
	}
	return rows
}

func TestSessionsTable(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	r := cli(t, sessionsFixture("sessions", "--no-rates", "--kind", "cgroup,user,agent")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	header, _, _ := strings.Cut(r.stdout, "\n")
	if want := "KIND    NAME"; !strings.HasPrefix(header, want) || !strings.HasSuffix(header, "CPU%    TIME  READ/s  WRITE/s    AGE  INFO") {
		t.Errorf("header %q", header)
	}
	rows := tableRows(r.stdout)
	tests := []struct {
		key   string
		procs string
		rss   string // statm resident pages x 4 KiB, summed
		info  string
	}{
		{"cgroup pod/" + fixturePodUID, "3", "31.2 MiB", "pod shop/web-7d9f8, burstable, mem 90.0% of 512.0 MiB, cpu ? of 0.50 cores, DANGER"},
		{"cgroup /batch/job42", "2", "7.8 MiB", "mem 9.8% of 1.0 GiB, cpu ? of 2.00 cores"},
		{"cgroup ssh.service", "1", "3.9 MiB", "mem 0.5% of 2.0 GiB"},
		{"agent claude/other/app", "3", "242.2 MiB", "/home/dev/other/app"},
		{"user dev", "", "", "uid 1000"},
		{"user 1001", "1", "3.9 MiB", "uid 1001"},
	}
	for _, tt := range tests {
		f, ok := rows[tt.key]
		if !ok {
			t.Errorf("no row %q in\n%s", tt.key, r.stdout)
			continue
		}
		line := strings.Join(f, " ")
		if tt.procs != "" && f[2] != tt.procs {
			t.Errorf("%s: PROCS %s, want %s", tt.key, f[2], tt.procs)
		}
		if tt.rss != "" && !strings.HasPrefix(strings.Join(f[3:], " "), tt.rss+" ") {
			t.Errorf("%s: RSS in %q, want %s", tt.key, line, tt.rss)
		}
		if !strings.Contains(line, tt.info) {
			t.Errorf("%s: %q lacks %q", tt.key, line, tt.info)
		}
	}
	// CPU% and IO rates were not measured: "-", never 0.
	// Fields: KIND NAME PROCS RSS(2) SWAP(2) CPU% TIME READ/s WRITE/s.
	if f := rows["user dev"]; f[7] != "-" || f[9] != "-" || f[10] != "-" {
		t.Errorf("rates without --interval: %v", f)
	}
	if !strings.Contains(r.stderr, "tmux") {
		t.Errorf("stderr does not say why agents have no tmux pane:\n%s", r.stderr)
	}
}

// fakeTmux puts on PATH a tmux that answers every command with the
// fixture server's list-panes output, and returns a socket path a server
// seems to listen on (procwalk dials it before running tmux).
func fakeTmux(t *testing.T) string {
	t.Helper()
	answer, err := filepath.Abs("../../procwalk/session/testdata/sessions/tmux/default.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pwfake") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("#!/bin/sh\nexec cat '"+answer+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	sock := filepath.Join(dir, "default")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot listen on a unix socket here: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return sock
}

// tableKinds counts the rows of each kind in a sessions table.
func tableKinds(out string) map[string]int {
	kinds := map[string]int{}
	for _, l := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "..." {
			kinds[f[0]]++
		}
	}
	return kinds
}

// Plain procwalk (no command, flags from the environment as a user's
// config would give them) on the fixture, whose tmux server a fake tmux
// answers for: tmux, cgroup, user and agent sessions, biggest first, and no
// sid, pgrp or tty rows repeating each pane and login.
func TestSessionsDefaultView(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	t.Setenv("PROCWALK_TMUX_SOCKET", fakeTmux(t))
	t.Setenv("PROCWALK_CGROUP_ROOT", sessionsCgroups)
	t.Setenv("PROCWALK_NO_RATES", "true")
	t.Setenv("PROCWALK_WIDE", "true")
	// 1103 days and a half after the fixture's boot: its sessions are 1103d old.
	r := cliAt(t, fixtureBoot().Add((1103*24+12)*time.Hour), "--proc", sessionsProc, "--passwd", sessionsPasswd)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// The fixture has 11 cgroup sessions, 6 users, 4 agents, 2 tmux
	// sessions (see procwalk/session/testdata/sessions/README.md).
	want := map[string]int{"cgroup": 10, "user": 6, "agent": 4, "tmux": 2}
	if got := tableKinds(r.stdout); !maps.Equal(got, want) {
		t.Errorf("rows per kind %v, want %v:\n%s", got, want, r.stdout)
	}
	if !strings.HasSuffix(r.stdout, "\n... and 1 more cgroup session (procwalk sessions --kind cgroup lists them all)\n") {
		t.Errorf("no line for the cgroup session left out:\n%s", r.stdout)
	}
	rows := tableRows(r.stdout)
	for key, want := range map[string]string{
		"tmux build": "tmux build 8 335.9 MiB 0 B - 20.50s - - 1103d 2 windows, 2 panes, attached, socket default",
		"tmux web":   "tmux web 4 15.6 MiB 0 B - 6.00s - - 1103d 1 window, 2 panes, socket default",
	} {
		if got := strings.Join(rows[key], " "); got != want {
			t.Errorf("row %q\n got %s\nwant %s", key, got, want)
		}
	}
	// Biggest first across kinds: the RSS column never grows going down.
	var rss []float64
	for _, l := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 4 && f[0] != "..." {
			v, err := strconv.ParseFloat(f[3], 64)
			if err != nil {
				t.Fatalf("RSS %q in %q", f[3], l)
			}
			rss = append(rss, v*map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[f[4]])
		}
	}
	if !slices.IsSortedFunc(rss, func(a, b float64) int { return cmp.Compare(b, a) }) {
		t.Errorf("not biggest first: %v", rss)
	}
	// --kind all adds the per-shell kinds, every session of each listed:
	// 17 sids (init, the server, 3 live panes, the escaped worker, sshd,
	// its connection and the login shell, 8 daemons and pods), 4 terminals
	// (the login's pts/0 and the 3 live panes').
	r = cli(t, "--proc", sessionsProc, "sessions", "--kind", "all")
	got := tableKinds(r.stdout)
	for k, n := range map[string]int{"tmux": 2, "sid": 17, "tty": 4, "cgroup": 11, "user": 6, "agent": 4} {
		if got[k] != n {
			t.Errorf("--kind all: %d %s rows, want %d:\n%s", got[k], k, n, r.stdout)
		}
	}
	if _, ok := tableRows(r.stdout)["pgrp 203"]; !ok {
		t.Errorf("--kind all: no pgrp 203 (the node job):\n%s", r.stdout)
	}
	// JSON has the panes with their foreground command and directory.
	r = cli(t, "--proc", sessionsProc, "sessions", "--kind", "tmux", "--json")
	var doc render.JSONSessions
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Sessions) != 2 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	build := doc.Sessions[0]
	if build.Ref != "tmux:build" || len(build.Panes) != 2 || build.Panes[0].Command != "make" || build.Panes[0].Cwd != "/home/dev/proj" ||
		build.Panes[1].Command != "claude" {
		t.Errorf("tmux:build panes %+v", build.Panes)
	}
	// Counts are JSON numbers, names strings.
	for _, want := range []string{`"panes": 2,`, "\"windows\": 2\n", `"attached": 1,`, `"socket": "`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("JSON attrs lack %s:\n%s", want, r.stdout)
		}
	}
}

func TestSessionsSort(t *testing.T) {
	clearEnv(t)
	r := cli(t, sessionsFixture("sessions", "--no-rates", "--kind", "sid", "--sort", "procs")...)
	var procs []int
	for _, l := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 2 {
			n, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatalf("PROCS %q in %q", f[2], l)
			}
			procs = append(procs, n)
		}
	}
	if len(procs) < 15 || !slices.IsSortedFunc(procs, func(a, b int) int { return b - a }) {
		t.Errorf("--sort procs: %v", procs)
	}
}

func TestSessionsJSON(t *testing.T) {
	clearEnv(t)
	r := cli(t, sessionsFixture("sessions", "--no-rates", "--json", "--kind", "cgroup,agent")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc render.JSONSessions
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	byRef := map[string]render.JSONSession{}
	for _, s := range doc.Sessions {
		byRef[s.Ref] = s
	}
	pod, ok := byRef["cgroup:pod/"+fixturePodUID]
	if !ok {
		t.Fatalf("no pod session in %v", doc.Sessions)
	}
	if pod.Cgroup == nil || pod.Cgroup.Version == 0 || pod.Cgroup.MemoryLimitPath == "" || pod.Cgroup.CPUQuotaPath == "" {
		t.Errorf("pod cgroup = %+v", pod.Cgroup)
	}
	if pod.Attrs["pod"] != "web-7d9f8" || pod.Attrs["namespace"] != "shop" || pod.Attrs["qos"] != "burstable" {
		t.Errorf("pod attrs = %v", pod.Attrs)
	}
	var members []int
	for _, m := range pod.Members {
		members = append(members, m.PID)
	}
	if !slices.Equal(members, []int{300, 301, 302}) || len(pod.Roots) != 2 {
		t.Errorf("pod members %v roots %v", members, pod.Roots)
	}
	// metrics carries the catalogue's names, as Telegraf and Lua do;
	// what was not read or measured is absent, not 0. Cumulative counters
	// start at the members' own (cpu_time_seconds: 4.5 s of the fixture's
	// stat files).
	for name, want := range map[string]any{"procs": 3.0, "rss_bytes": 32768000.0, "cpu_time_seconds": 4.5, "read_bytes": 0.0,
		"io_read_procs": 3.0, "memory_limit_bytes": float64(512 << 20), "memory_usage_percent": 90.0, "cpu_quota_cores": 0.5,
		"danger": true, "partial": false} {
		if got, ok := pod.Metrics[name]; !ok || got != want {
			t.Errorf("metrics[%s] = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, absent := range []string{"pss_bytes", "uss_bytes", "cpu_percent", "read_bytes_per_second", "cpu_quota_percent"} {
		if v, ok := pod.Metrics[absent]; ok {
			t.Errorf("metrics[%s] = %v, want absent: not read or not measured", absent, v)
		}
	}
	var agents []string
	for _, s := range doc.Sessions {
		if s.Kind == "agent" {
			agents = append(agents, s.Name)
		}
	}
	slices.Sort(agents) // the JSON is sorted by RSS
	if want := []string{"claude/other/app", "claude/other/app#2", "claude/work/app", "codex/work/app"}; !slices.Equal(agents, want) {
		t.Errorf("agents %v, want %v", agents, want)
	}
	if len(doc.Notes) == 0 || !strings.Contains(strings.Join(doc.Notes, " "), "tmux") {
		t.Errorf("notes %q", doc.Notes)
	}
}

func TestSessionDetail(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	r := cli(t, sessionsFixture("session", "--no-rates", "cgroup:pod/"+fixturePodUID)...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"cgroup:pod/" + fixturePodUID + "\n",
		"  processes  3 (2 roots, 3 threads, 0 zombies)",
		"  cgroup v1  mem 90.0% of 512.0 MiB, cpu ? of 0.50 cores, DANGER; memory limit set by /kubepods/burstable/pod" + fixturePodUID,
		"ATTRIBUTES\n",
		"  namespace       shop\n",
		"MEMBERS\n",
		"300  65535",
		"/pause\n",
		"nginx: master process nginx\n",
		"└─ nginx: worker process\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// A tree needs no --tree: a pid, or a pattern for the oldest match.
	r = cli(t, sessionsFixture("session", "--no-rates", "tree:203")...)
	if r.code != exitOK || !strings.Contains(r.stdout, "tree:203\n") || !strings.Contains(r.stdout, "├─ claude -p summarize") || !strings.Contains(r.stdout, "└─ bash -c make test") {
		t.Errorf("tree:203: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, sessionsFixture("session", "--no-rates", "--json", "tree:nginx")...)
	var doc struct {
		Session struct {
			Ref       string `json:"ref"`
			Processes []struct {
				PID  int    `json:"pid"`
				Comm string `json:"comm"`
			} `json:"processes"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != exitOK {
		t.Fatalf("exit %d, %v\n%s", r.code, err, r.stderr)
	}
	if s := doc.Session; s.Ref != "tree:nginx" || len(s.Processes) != 2 || s.Processes[0].PID != 301 || s.Processes[1].Comm != "nginx" {
		t.Errorf("tree:nginx = %+v", s)
	}
}

func TestSessionErrors(t *testing.T) {
	clearEnv(t)
	groups := filepath.Join(t.TempDir(), "groups")
	if err := os.WriteFile(groups, []byte("x bogus .\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown session", sessionsFixture("session", "--no-rates", "cgroup:nope"), exitError, "no such session cgroup:nope: cgroup sessions are /batch/job42, "},
		{"kind with none", sessionsFixture("session", "--no-rates", "tmux:build"), exitError, "there are no tmux sessions"},
		{"unknown kind", sessionsFixture("session", "--no-rates", "pods:x"), exitUsage, "kinds are " + strings.Join(session.Kinds(), ", ")},
		{"unknown --kind", sessionsFixture("sessions", "--kind", "tmux,pods"), exitUsage, `--kind "pods": unknown session kind: kinds are ` + strings.Join(session.Kinds(), ", ") + ", or all"},
		{"no colon", sessionsFixture("session", "build"), exitUsage, "want KIND:NAME"},
		{"no argument", sessionsFixture("session"), exitUsage, "session takes one KIND:NAME"},
		{"bad tree", sessionsFixture("session", "--no-rates", "tree:("), exitUsage, "tree:("},
		{"tree not running", sessionsFixture("session", "--no-rates", "tree:99999"), exitError, "no tree sessions"},
		{"tree matching nothing", sessionsFixture("session", "--no-rates", "tree:nonexistent"), exitError,
			`no such session tree:nonexistent: there are no tree sessions (tree nonexistent: no process matches "nonexistent")`},
		{"sessions argument", sessionsFixture("sessions", "x"), exitUsage, "sessions takes no arguments"},
		{"bad sort", sessionsFixture("sessions", "--sort", "size"), exitUsage, `--sort "size"`},
		{"cpu sort without rates", sessionsFixture("sessions", "--no-rates", "--sort", "cpu"), exitUsage, "needs rates"},
		{"bad agent", sessionsFixture("sessions", "--agent", "codex"), exitUsage, "want NAME=REGEX"},
		{"bad groups", sessionsFixture("sessions", "--groups", groups), exitUsage, `line 1: unknown field "bogus"`},
		{"missing groups", sessionsFixture("sessions", "--groups", groups+".nope"), exitUsage, "no such file"},
		{"bad danger", sessionsFixture("sessions", "--danger-percent", "0"), exitUsage, "--danger-percent 0"},
		{"NaN danger", sessionsFixture("sessions", "--danger-percent", "NaN"), exitUsage, "--danger-percent NaN: want a percentage"},
		{"negative limit", sessionsFixture("sessions", "--limit", "-1"), exitUsage, "--limit -1: want 0 (all) or a positive count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s", r.code, tt.code, tt.stderr, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a failed run wrote to stdout:\n%s", r.stdout)
			}
			if strings.HasPrefix(tt.args[len(tt.args)-1], "tree:") && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("one failure, %d lines:\n%s", strings.Count(r.stderr, "\n"), r.stderr)
			}
		})
	}
}

func TestSessionsGroupsFile(t *testing.T) {
	clearEnv(t)
	groups := filepath.Join(t.TempDir(), "groups")
	if err := os.WriteFile(groups, []byte("# web\nweb-$1 comm ^(nginx)$\njobs cmdline ^job --id\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, sessionsFixture("sessions", "--no-rates", "--kind", "group", "--groups", groups)...)
	rows := tableRows(r.stdout)
	if f := rows["group web-nginx"]; r.code != exitOK || len(f) < 3 || f[2] != "2" {
		t.Errorf("exit %d, web-nginx %v\n%s%s", r.code, f, r.stdout, r.stderr)
	}
	if f := rows["group jobs"]; len(f) < 3 || f[2] != "2" {
		t.Errorf("jobs %v", f)
	}
}

// On the real host, with a tmux server the test starts on a private socket:
// plain procwalk lists its session, and procwalk session shows its members.
func TestIntegrationSessionsCommands(t *testing.T) {
	integration(t)
	clearEnv(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed by this integration test: install it (apt-get install -y tmux) or unset PROCWALK_INTEGRATION")
	}
	dir, err := os.MkdirTemp("", "pwcli") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	t.Cleanup(func() {
		exec.Command("tmux", "-S", sock, "kill-server").Run() // hangs up the pane: its sleep dies
		os.RemoveAll(dir)
	})
	out, err := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "pwcli", "sh", "-c", "sleep 34001 & exec sleep 34000").CombinedOutput()
	if err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	pane, err := exec.Command("tmux", "-S", sock, "display-message", "-p", "-t", "pwcli", "#{pane_pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	panePID := strings.TrimSpace(string(pane))
	waitForPaneTree(t, panePID, "sleep 34000", "sleep 34001")
	r := cli(t, "session", "--tmux-socket", sock, "--no-rates", "tmux:pwcli")
	if r.code != exitOK || !strings.Contains(r.stdout, "tmux:pwcli\n") || !strings.Contains(r.stdout, " 2 (1 root, 2 threads, 0 zombies)") ||
		!strings.Contains(r.stdout, panePID+"  ") || !strings.Contains(r.stdout, "└─ sleep 34001") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Plain procwalk takes the sessions flags from the environment.
	t.Setenv("PROCWALK_TMUX_SOCKET", sock)
	t.Setenv("PROCWALK_KIND", "tmux")
	r = cli(t, "--interval", "100ms")
	if rows := tableRows(r.stdout); r.code != exitOK || len(rows["tmux pwcli"]) < 3 || rows["tmux pwcli"][2] != "2" {
		t.Errorf("plain procwalk: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Names sort naturally: pwcli-2 before pwcli-10, in the table and in
	// the list a wrong name gets.
	for _, name := range []string{"pwcli-10", "pwcli-2"} {
		if out, err := exec.Command("tmux", "-S", sock, "new-session", "-d", "-s", name, "sleep 34002").CombinedOutput(); err != nil {
			t.Fatalf("tmux: %v: %s", err, out)
		}
	}
	r = cli(t, "sessions", "--sort", "name", "--no-rates")
	if got := pidColumn(r.stdout); r.code != exitOK || got != "tmux tmux tmux" {
		t.Fatalf("sessions --sort name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var names []string
	for _, l := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 1 {
			names = append(names, f[1])
		}
	}
	if got := strings.Join(names, " "); got != "pwcli pwcli-2 pwcli-10" {
		t.Errorf("sessions --sort name: %s, want pwcli pwcli-2 pwcli-10", got)
	}
	r = cli(t, "session", "--no-rates", "tmux:nope")
	if want := "procwalk: no such session tmux:nope: tmux sessions are pwcli, pwcli-2, pwcli-10\n"; r.code != exitError || r.stderr != want {
		t.Errorf("session tmux:nope: exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
	}
}

// A session that may lack members says so in INFO and in JSON.
func TestSessionsPartialShown(t *testing.T) {
	s := session.Session{Kind: session.KindTmux, Name: "build", Partial: true,
		Attrs: map[string]string{session.AttrWindows: "1", session.AttrPanes: "3", session.AttrAttached: "0", session.AttrSocket: "/tmp/tmux-0/default"}}
	if got, want := s.Info(), "1 window, 3 panes, socket default, partial: see the note"; got != want {
		t.Errorf("INFO %q, want %q", got, want)
	}
	now := time.Unix(1700003600, 0)
	var j struct {
		Partial *bool          `json:"partial"`
		Metrics map[string]any `json:"metrics"`
	}
	b, err := json.Marshal(render.NewJSONSession(now, 0, &s))
	if err != nil || json.Unmarshal(b, &j) != nil || j.Partial == nil || !*j.Partial || j.Metrics["partial"] != true {
		t.Errorf("JSON %s, %v", b, err)
	}
	s.Partial = false
	j.Partial = nil
	if b, _ := json.Marshal(render.NewJSONSession(now, 0, &s)); json.Unmarshal(b, &j) != nil || j.Partial != nil || j.Metrics["partial"] != false {
		t.Errorf("JSON of a complete session %s", b)
	}
}

// waitForPaneTree waits up to 60 s until the pane process has exec'd cmd
// and has a child running child: until then the shell's own command line
// names both, and the member tree is not the one the test wants.
func waitForPaneTree(t *testing.T, panePID, cmd, child string) {
	t.Helper()
	pid, err := strconv.Atoi(panePID)
	if err != nil {
		t.Fatalf("pane pid %q", panePID)
	}
	fs, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		snap, err := fs.Snapshot(procwalk.FieldCmdline)
		if err != nil {
			t.Fatal(err)
		}
		if p := snap.Process(pid); p != nil && strings.Join(p.Cmdline, " ") == cmd &&
			slices.ContainsFunc(snap.Children(pid), func(c *procwalk.Process) bool { return strings.Join(c.Cmdline, " ") == child }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s pane %d is not %q with a child %q", pid, cmd, child)
		}
	}
}

// The line saying how many sessions --limit hid names the way to see them:
// --kind when it was not given, --limit 0 when it was.
func TestSessionsLimitHint(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("sessions", "--kind", "sid", "--limit", "1", "--no-rates")...)
	if !strings.Contains(r.stdout, "more sid sessions (--limit 0 lists them all)") {
		t.Errorf("--kind sid --limit 1:\n%s", r.stdout)
	}
	r = cli(t, fixture("sessions", "--limit", "1", "--no-rates")...)
	if !strings.Contains(r.stdout, "(procwalk sessions --kind ") || strings.Contains(r.stdout, "--limit 0") {
		t.Errorf("--limit 1 without --kind:\n%s", r.stdout)
	}
}

// A session some of whose members' io was refused or malformed shows its
// IO rates as lower bounds: 303's io in the fixture does not parse.
func TestSessionsPartialIOMarked(t *testing.T) {
	clearEnv(t)
	r := cliAt(t, fixtureBoot().Add(24*time.Hour), fixture("sessions", "--kind", "tree", "--tree", "1", "--interval", "5ms")...)
	if r.code != exitOK || !strings.Contains(r.stdout, "0 B+     0 B+") {
		t.Errorf("tree:1 holds 303: want READ/s and WRITE/s marked as lower bounds:\n%s%s", r.stdout, r.stderr)
	}
	r = cliAt(t, fixtureBoot().Add(24*time.Hour), fixture("sessions", "--kind", "tree", "--tree", "110", "--interval", "5ms")...)
	if r.code != exitOK || strings.Contains(r.stdout, "B+") || !strings.Contains(r.stdout, "0 B      0 B") {
		t.Errorf("tree:110 has every member's io: want plain rates:\n%s%s", r.stdout, r.stderr)
	}
}

// procwalk session shows KIND:NAME@ID and accepts it back, tree:SPEC too.
func TestSessionRefID(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("session", "tree:101@101.150050")...)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "tree:101\n  ref            tree:101@101.150050 (kill --session refuses it once the name passes to another session)\n") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, fixture("session", "tree:101@101.9")...)
	if want := "session changed: tree:101 now names tree:101@101.150050, not tree:101@101.9"; r.code != exitError || !strings.Contains(r.stderr, want) {
		t.Errorf("stale ID: exit %d, want 1 with %q\n%s", r.code, want, r.stderr)
	}
}

// --fold merges sessions by name, for sessions and telegraf alike; a bad
// rule is a usage error naming the flag.
func TestFoldFlag(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	fold := []string{"--fold", `pods=cgroup:^pod/`, "--fold", `units=cgroup:\.(service|scope)$`}
	r := cli(t, sessionsFixture("sessions", append([]string{"--no-rates", "--kind", "cgroup"}, fold...)...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rows := tableRows(r.stdout)
	if len(rows) != 3 || rows["cgroup pods"][2] != "4" || rows["cgroup units"][2] != "27" || rows["cgroup /batch/job42"] == nil ||
		!strings.Contains(r.stdout, "2 sessions folded") {
		t.Errorf("want pods (4 processes), units (27) and /batch/job42:\n%s", r.stdout)
	}
	r = cli(t, sessionsFixture("telegraf", append([]string{"--session-kinds", "cgroup", "--skip-self-metrics"}, fold...)...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "procwalk_session,kind=cgroup,session=pods procs=4i,") ||
		strings.Contains(r.stdout, "session=pod/") {
		t.Errorf("exit %d, want a pods line of 4 processes and no pod/ line:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, sessionsFixture("sessions", "--no-rates", "--fold", "pods=agent:.")...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--fold") || !strings.Contains(r.stderr, "agent sessions cannot be folded") {
		t.Errorf("exit %d, want a usage error naming --fold: %s", r.code, r.stderr)
	}
}
