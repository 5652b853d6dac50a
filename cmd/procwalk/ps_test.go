//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
)

func TestPSTable(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	r := cli(t, fixture("ps", "--no-rates", "--sort", "pid", "--columns", "pid,ppid,user,state,threads,rss,time,command")...)
	// RSS is statm's resident pages x 4 KiB; TIME is (utime+stime)/100.
	// Comms without a cmdline print in brackets, escaped; 303's status is
	// malformed, so its user is unknown.
	want := `PID  PPID  USER  S  THR        RSS    TIME  COMMAND
  1     0  root  S    1   11.7 MiB  23.00s  /sbin/init splash
100     1  dev   S    1    4.7 MiB   3.80s  tmux new-session -d -s work
101   100  dev   S    1    3.5 MiB   0.65s  -bash
102   100  dev   S    1    3.7 MiB   0.85s  -bash
110   101  dev   S    1    7.8 MiB  18.01s  make -j2
111   110  dev   R    1  117.2 MiB  17m10s  /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet main.c
120   102  dev   S    4   19.5 MiB   1m13s  python3 -m http.server
121   120  dev   Z    1        0 B   0.15s  [defunct] <defunct>
200     1  dev   S    1   40.0 KiB   0.00s  ./my prog --flag
201     1  dev   S    1   44.0 KiB   0.00s  (sd-pam)
202     1  dev   S    1   48.0 KiB   0.00s  [) (]
203     1  dev   S    1   52.0 KiB   0.00s  [evil\nname]
204     1  dev   S    1   56.0 KiB   0.00s  []
205     1  dev   S    1   60.0 KiB   0.00s  [x) Z 9 9 9 (y]
303     1  ?     S    1   64.0 KiB   0.00s  badfiles
400   300  dev   S    1   68.0 KiB   0.00s  orphan
`
	if r.code != exitOK || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	if r.stderr != fixtureNoteStatus {
		t.Errorf("stderr %q\nwant %q", r.stderr, fixtureNoteStatus)
	}
}

func TestPSDefaultColumns(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args   []string
		header string
	}{
		{[]string{"--no-rates"}, "PID  PPID  USER  S  THR        RSS    TIME    AGE  COMMAND"},
		{[]string{"--no-rates", "--pss"}, "PID  PPID  USER  S  THR        RSS       PSS        USS    TIME    AGE  COMMAND"},
		{[]string{"--interval", "5ms"}, "PID  PPID  USER  S  THR        RSS  CPU%  READ/s  WRITE/s    TIME    AGE  COMMAND"},
		// --sort pss reads PSS without --pss.
		{[]string{"--no-rates", "--sort", "pss"}, "PID  PPID  USER  S  THR        RSS       PSS        USS    TIME    AGE  COMMAND"},
	}
	for _, tt := range tests {
		r := cli(t, fixture(append([]string{"ps"}, tt.args...)...)...)
		if got, _, _ := strings.Cut(r.stdout, "\n"); got != tt.header || r.code != exitOK {
			t.Errorf("ps %v: exit %d, header\n%q, want\n%q", tt.args, r.code, got, tt.header)
		}
	}
}

func TestPSSort(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	tests := []struct {
		sort string
		pids string
	}{
		{"rss", "111 120 1 110 100 102 101 400 303 205 204 203 202 201 200 121"},
		// Processes without PSS (zombie, empty smaps_rollup) sort last, by pid.
		{"pss", "111 120 1 110 100 102 101 121 200 201 202 203 204 205 303 400"},
		// USS orders 110 (6.1 MiB) above 1 (5.8 MiB), unlike PSS.
		{"uss", "111 120 110 1 100 102 101 121 200 201 202 203 204 205 303 400"},
		{"age", "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"pid", "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"PID", "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		// The fixture does not change between the two scans: every CPU
		// rate is a measured 0, ties go by pid. 303's io is malformed, so
		// it has no IO rate and sorts last for io.
		{"cpu", "1 100 101 102 110 111 120 121 200 201 202 203 204 205 303 400"},
		{"io", "1 100 101 102 110 111 120 121 200 201 202 203 204 205 400 303"},
	}
	for _, tt := range tests {
		r := cli(t, fixture("ps", "--interval", "5ms", "--sort", tt.sort, "--columns", "pid")...)
		if got := pidColumn(r.stdout); r.code != exitOK || got != tt.pids {
			t.Errorf("--sort %s: exit %d, pids\n%s\nwant\n%s\n%s", tt.sort, r.code, got, tt.pids, r.stderr)
		}
	}
}

func TestPSFilters(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args []string
		pids string
	}{
		{[]string{"--filter", "bash"}, "101 102"},
		{[]string{"--filter", "http.server"}, "120"},  // in the cmdline only
		{[]string{"--filter", "tmux: server"}, "100"}, // in the comm only
		{[]string{"--filter", "evil\nname"}, "203"},   // a newline in comm
		{[]string{"--filter", "Bash"}, ""},            // substrings are case-sensitive
		{[]string{"--regex", "^-bash$"}, "101 102"},   // the whole cmdline
		{[]string{"--regex", "(?i)^PYTHON"}, "120"},   // comm python3
		{[]string{"--regex", `\) \(`}, "202"},         // comm ") ("
		{[]string{"--filter", "a", "--regex", "^make"}, "110"},
		{[]string{"--filter", "kworker"}, ""}, // kernel threads hidden
		{[]string{"--filter", "kworker", "--kernel"}, "3"},
		{[]string{"--user", "root"}, "1"},
		{[]string{"--user", "root", "--kernel"}, "1 2 3"},
		{[]string{"--user", "0"}, "1"},
		{[]string{"--user", "dev", "--filter", "bash"}, "101 102"},
		// 303's status is malformed: its owner is unknown, it never matches.
		{[]string{"--user", "1000"}, "100 101 102 110 111 120 121 200 201 202 203 204 205 400"},
		{[]string{"--user", "4242"}, ""},
		{[]string{"--limit", "3"}, "1 100 101"},
	}
	for _, tt := range tests {
		args := append([]string{"ps", "--no-rates", "--sort", "pid", "--columns", "pid,comm"}, tt.args...)
		r := cli(t, fixture(args...)...)
		if got := pidColumn(r.stdout); r.code != exitOK || got != tt.pids {
			t.Errorf("ps %q: exit %d, pids %q, want %q\n%s", tt.args, r.code, got, tt.pids, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "PID  COMM\n") && !strings.HasPrefix(r.stdout, "PID  COMM") {
			t.Errorf("ps %q: no header:\n%s", tt.args, r.stdout)
		}
	}
}

func TestPSUsageErrors(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--sort", "size"}, exitUsage, `procwalk: --sort "size": want one of rss, pss, uss, swap, vsize, shared, cpu, time, user_time, system_time, read, write, io, growth, pss_growth, uss_growth, age, start, pid, or a metric name (procwalk ps --help lists them)` + "\n"},
		{[]string{"--sort", "cpu", "--no-rates"}, exitUsage, "procwalk: --sort cpu needs rates, which --no-rates turns off: drop one of them\n"},
		{[]string{"--columns", "pid,size"}, exitUsage, `procwalk: --columns: unknown column "size": want some of pid,ppid,user,state,threads,rss,pss,uss,swap,cpu,read,write,time,age,comm,command, or metric names (procwalk ps --help lists them)` + "\n"},
		{[]string{"--columns", "pid,cpu", "--no-rates"}, exitUsage, "procwalk: --columns cpu needs rates, which --no-rates turns off: drop one of them\n"},
		{[]string{"--regex", "a("}, exitUsage, "procwalk: --regex \"a(\": error parsing regexp: missing closing ): `a(`\n"},
		{[]string{"--limit", "-1"}, exitUsage, "procwalk: --limit -1: want 0 (all) or a positive count\n"},
		{[]string{"--user", "nosuch"}, exitUsage, `procwalk: --user "nosuch": no such user in testdata/passwd; give a user name from there or a numeric uid` + "\n"},
		{[]string{"--user", "-3"}, exitUsage, "procwalk: --user -3: a uid is not negative\n"},
		{[]string{"--user", "dev", "--passwd", "/nope/passwd"}, exitError,
			`procwalk: --user "dev": cannot map the name to a uid: reading user names: open /nope/passwd: no such file or directory; give the numeric uid, or fix --passwd` + "\n"},
	}
	for _, tt := range tests {
		r := cli(t, fixture(append([]string{"ps"}, tt.args...)...)...)
		if r.code != tt.code || r.stderr != tt.stderr || r.stdout != "" {
			t.Errorf("ps %q: exit %d, stderr %q; want %d, %q", tt.args, r.code, r.stderr, tt.code, tt.stderr)
		}
	}
}

// A missing passwd file is not an error when no name is needed: users
// print as numbers.
func TestPSWithoutPasswd(t *testing.T) {
	clearEnv(t)
	r := cli(t, "--proc", fixtureProc, "--passwd", "/nope/passwd", "ps", "--no-rates", "--sort", "pid", "--columns", "pid,user", "--limit", "2")
	want := "PID  USER\n  1  0\n100  1000\n"
	if r.code != exitOK || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
}

func TestPSJSON(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	// A clock that reads 1000 s after the fixture's boot when the run starts.
	r := cliAt(t, fixtureBoot().Add(1000*time.Second), fixture("ps", "--json", "--pss", "--kernel", "--interval", "5ms", "--sort", "pid")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--json wrote to stderr (visibility belongs in the JSON): %q", r.stderr)
	}
	var doc struct {
		IntervalSeconds float64                      `json:"interval_seconds"`
		Host            map[string]any               `json:"host"`
		Visibility      map[string]any               `json:"visibility"`
		Processes       []map[string]json.RawMessage `json:"processes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if doc.IntervalSeconds <= 0 {
		t.Errorf("interval_seconds = %v, want > 0 with rates", doc.IntervalSeconds)
	}
	wantHost := map[string]any{"boot_time": "2023-11-14T22:13:20Z", "clock_ticks": 100.0, "page_size_bytes": 4096.0, "mem_total_bytes": 16303428.0 * 1024, "cpus": 4.0}
	if !reflect.DeepEqual(doc.Host, wantHost) {
		t.Errorf("host = %v\nwant %v", doc.Host, wantHost)
	}
	// 303's status and io are malformed; 301, 302 dropped; 300 gone.
	wantVis := map[string]any{"partial": true, "listed": 21.0, "gone": 1.0, "malformed": 3.0, "others_hidden": false}
	if !reflect.DeepEqual(doc.Visibility, wantVis) {
		t.Errorf("visibility = %v\nwant %v", doc.Visibility, wantVis)
	}
	var pids []int
	byPID := map[int]map[string]json.RawMessage{}
	for _, p := range doc.Processes {
		var pid int
		json.Unmarshal(p["pid"], &pid)
		pids = append(pids, pid)
		byPID[pid] = p
	}
	wantPIDs := []int{1, 2, 3, 100, 101, 102, 110, 111, 120, 121, 200, 201, 202, 203, 204, 205, 303, 400}
	if !slices.Equal(pids, wantPIDs) {
		t.Errorf("pids %v, want %v", pids, wantPIDs)
	}

	// Every key of pid 1, with its value: the schema is stable.
	want1 := map[string]string{
		"pid": "1", "start_ticks": "5", "ppid": "0", "pgrp": "1", "sid": "1", "tty_nr": "0",
		"uid": "0", "user": `"root"`, "state": `"S"`, "kernel_thread": "false", "threads": "1",
		"comm": `"systemd"`, "cmdline": `["/sbin/init","splash"]`,
		"start_time":       `"2023-11-14T22:13:20.05Z"`,
		"cpu_time_seconds": "23", "cpu_user_seconds": "15", "cpu_system_seconds": "8",
		"ruid": "0", "start_unix_seconds": "1700000000",
		"rss_bytes": "12288000", "vsize_bytes": "171000000", "shared_bytes": "8601600",
		"swap_bytes": "0", "pss_bytes": "7168000", "uss_bytes": "6041600",
		"read_bytes": "700000000", "write_bytes": "300000000",
		// Measured over the two scans of an unchanging fixture: real zeros.
		"cpu_percent": "0", "read_bytes_per_second": "0", "write_bytes_per_second": "0", "io_bytes_per_second": "0",
		"rss_growth_bytes_per_minute": "0", "pss_growth_bytes_per_minute": "0", "uss_growth_bytes_per_minute": "0",
	}
	got1 := map[string]string{}
	for k, v := range byPID[1] {
		if k != "age_seconds" {
			got1[k] = compact(t, v)
		}
	}
	if !reflect.DeepEqual(got1, want1) {
		t.Errorf("pid 1 =\n%v\nwant\n%v", got1, want1)
	}
	// Every number is a metric of the catalogue, by its name there.
	text := []string{"start_ticks", "user", "state", "kernel_thread", "comm", "cmdline", "start_time"}
	for k := range byPID[1] {
		if d, ok := metric.Lookup(k); !slices.Contains(text, k) && (!ok || d.Name != k || !d.OfProcess()) {
			t.Errorf("JSON key %q is not a metric name of the catalogue", k)
		}
	}
	var age float64
	json.Unmarshal(byPID[1]["age_seconds"], &age)
	// pid 1 started 0.05 s after boot; the run takes a few milliseconds
	// (a minute at most on a loaded machine) after the clock's start.
	if age < 999.95 || age > 1059.95 {
		t.Errorf("pid 1 age_seconds = %v, want 999.95 plus the run's time", age)
	}

	// Absent, not zero: what was not read or does not apply.
	absent := []struct {
		pid  int
		keys []string
	}{
		{2, []string{"pss_bytes", "uss_bytes", "cmdline"}},                                              // kernel thread
		{121, []string{"pss_bytes", "uss_bytes", "cmdline"}},                                            // zombie
		{303, []string{"uid", "user", "read_bytes", "read_bytes_per_second", "write_bytes_per_second"}}, // malformed status, io
	}
	for _, a := range absent {
		for _, k := range a.keys {
			if v, ok := byPID[a.pid][k]; ok {
				t.Errorf("pid %d has %s = %s; want it absent", a.pid, k, v)
			}
		}
	}
	for pid, want := range map[int]string{2: "true", 3: "true", 1: "false"} {
		if got := string(byPID[pid]["kernel_thread"]); got != want {
			t.Errorf("pid %d kernel_thread = %s, want %s", pid, got, want)
		}
	}
	if got := compact(t, byPID[303]["malformed"]); got != `["status","io"]` {
		t.Errorf("pid 303 malformed = %s, want [\"status\",\"io\"]", got)
	}
	if got := string(byPID[203]["comm"]); got != `"evil\nname"` {
		t.Errorf("pid 203 comm = %s, want the newline escaped by JSON", got)
	}
	if got := string(byPID[121]["state"]); got != `"Z"` {
		t.Errorf("pid 121 state = %s, want \"Z\"", got)
	}
}

// compact removes the indentation from a JSON value.
func compact(t *testing.T, v json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Without rates, JSON has no interval and no rate keys at all.
func TestPSJSONNoRates(t *testing.T) {
	clearEnv(t)
	r := cli(t, fixture("ps", "--json", "--no-rates", "--filter", "cc1")...)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, key := range []string{"interval_seconds", "cpu_percent", "read_bytes_per_second", "read_bytes", "pss_bytes"} {
		if strings.Contains(r.stdout, `"`+key+`"`) {
			t.Errorf("--no-rates JSON has %q:\n%s", key, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `"pid": 111`) || strings.Count(r.stdout, `"pid":`) != 1 {
		t.Errorf("want exactly pid 111:\n%s", r.stdout)
	}
}

// copyTree copies a fixture /proc, symlinks included, so a test may change it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil { // symlinks (cwd, exe) stay links
		t.Fatal(err)
	}
	return dst
}

func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stepClock is a clock a test moves by hand.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

// Rates come from two scans; here the fixture changes between them and the
// scan times are set one second apart, so the rates are exact.
func TestPSRates(t *testing.T) {
	clearEnv(t)
	root := copyTree(t, fixtureProc)
	fsys, err := procwalk.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	g := &globals{proc: root, passwd: fixturePasswd, interval: time.Second}
	var stdout, stderr strings.Builder
	c := &psCommand{g: g, e: &env{stdout: &stdout, stderr: &stderr}, sort: "cpu", columns: "pid,cpu,read,write,comm"}
	q, users, err := c.query()
	if err != nil {
		t.Fatal(err)
	}
	scan, _ := q.Fields()
	clock := &stepClock{now: time.Unix(1700001000, 0)}
	m := frame.New(fsys, frame.Config{Fields: scan, Clock: clock})
	if _, err := m.Gather(); err != nil {
		t.Fatal(err)
	}

	// cc1 uses 50 more ticks of user time (0.5 s of CPU); python reads
	// 1 MiB and writes 3 KiB; pid 200 exits and a new process gets its
	// pid (new start time); pid 500 is born.
	replaceInFile(t, root+"/111/stat", " 98765 4321 ", " 98815 4321 ")
	replaceInFile(t, root+"/120/io", "read_bytes: 2097152", "read_bytes: 3145728")
	replaceInFile(t, root+"/120/io", "write_bytes: 4194304", "write_bytes: 4197376")
	replaceInFile(t, root+"/200/stat", " 200000 ", " 250000 ")
	if err := os.Rename(root+"/400", root+"/500"); err != nil {
		t.Fatal(err)
	}
	replaceInFile(t, root+"/500/stat", "400 (orphan)", "500 (newborn)")

	clock.now = clock.now.Add(time.Second)
	second, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := q.Rows(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.print(second.Snapshot, q, procs, users); err != nil {
		t.Fatal(err)
	}
	// Measured first, largest CPU first; unmeasured (200 reused, 500 new)
	// last with "-", never 0. 303's io is malformed: CPU yes, IO "-".
	want := `PID  CPU%   READ/s  WRITE/s  COMM
111  50.0      0 B      0 B  cc1
  1   0.0      0 B      0 B  systemd
100   0.0      0 B      0 B  tmux: server
101   0.0      0 B      0 B  bash
102   0.0      0 B      0 B  bash
110   0.0      0 B      0 B  make
120   0.0  1.0 MiB  3.0 KiB  python3
121   0.0      0 B      0 B  defunct
201   0.0      0 B      0 B  (sd-pam)
202   0.0      0 B      0 B  ) (
203   0.0      0 B      0 B  evil\nname
204   0.0      0 B      0 B
205   0.0      0 B      0 B  x) Z 9 9 9 (y
303   0.0        -        -  badfiles
200     -        -        -  my prog
500     -        -        -  newborn
`
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}

	stdout.Reset()
	q.JSON = true
	if err := c.print(second.Snapshot, q, procs, users); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		IntervalSeconds float64 `json:"interval_seconds"`
		Processes       []struct {
			PID        int      `json:"pid"`
			CPUPercent *float64 `json:"cpu_percent"`
			ReadPerSec *float64 `json:"read_bytes_per_second"`
			WritePerS  *float64 `json:"write_bytes_per_second"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.IntervalSeconds != 1 {
		t.Errorf("interval_seconds = %v, want 1", doc.IntervalSeconds)
	}
	for _, p := range doc.Processes {
		switch p.PID {
		case 111:
			if p.CPUPercent == nil || *p.CPUPercent != 50 {
				t.Errorf("pid 111 cpu_percent = %v, want 50", p.CPUPercent)
			}
		case 120:
			if p.ReadPerSec == nil || *p.ReadPerSec != 1<<20 || p.WritePerS == nil || *p.WritePerS != 3072 {
				t.Errorf("pid 120 read/write per second = %v/%v, want 1048576/3072", p.ReadPerSec, p.WritePerS)
			}
		case 200, 500:
			if p.CPUPercent != nil || p.ReadPerSec != nil {
				t.Errorf("pid %d (first seen) has rates %v %v; want none", p.PID, p.CPUPercent, p.ReadPerSec)
			}
		}
	}

	// Filtered down to the newborn, which has no rate, the JSON still says
	// that rates were sampled and over what interval.
	stdout.Reset()
	q.Filter.Contains = "newborn"
	if procs, err = q.Rows(second); err != nil {
		t.Fatal(err)
	}
	if err := c.print(second.Snapshot, q, procs, users); err != nil {
		t.Fatal(err)
	}
	doc.IntervalSeconds, doc.Processes = 0, nil
	if err := json.Unmarshal([]byte(stdout.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.IntervalSeconds != 1 || len(doc.Processes) != 1 || doc.Processes[0].PID != 500 || doc.Processes[0].CPUPercent != nil {
		t.Errorf("--filter newborn: interval_seconds %v, processes %+v; want 1 and pid 500 without rates", doc.IntervalSeconds, doc.Processes)
	}
}

// A FIFO planted in a fake root (the shape of a read that never returns)
// must not hang procwalk: files open without blocking, and the FIFO reads
// as a malformed file.
func TestFIFOInFakeRootDoesNotHang(t *testing.T) {
	clearEnv(t)
	root := copyTree(t, fixtureProc)
	for _, f := range []string{"111/cmdline", "120/status", "110/io"} {
		path := filepath.Join(root, f)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan result, 1)
	go func() {
		done <- cli(t, "--proc", root, "--passwd", fixturePasswd, "ps", "--json", "--no-rates", "--pss")
	}()
	select {
	case r := <-done:
		if r.code != exitOK || !strings.Contains(r.stdout, `"pid": 111`) {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		for _, want := range []string{`"malformed": [`, `"cmdline"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("JSON lacks %s for the FIFOs", want)
			}
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("procwalk ps hung on a FIFO in its root")
	}
}
