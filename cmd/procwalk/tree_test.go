//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Flags after the PID work as before it; after "--" they are arguments.
func TestTreeFlagsAfterPID(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	before := cli(t, fixture("tree", "--pss", "110")...)
	after := cli(t, fixture("tree", "110", "--pss")...)
	if before.code != exitOK || after.stdout != before.stdout || !strings.Contains(after.stdout, "TREE-PSS") {
		t.Errorf("tree 110 --pss:\n%s%s\nwant as tree --pss 110:\n%s", after.stdout, after.stderr, before.stdout)
	}
	if r := cli(t, fixture("tree", "--", "110", "--pss")...); r.code != exitUsage {
		t.Errorf("tree -- 110 --pss: exit %d, want 2 (--pss is an argument there)", r.code)
	}
	// session and kill take theirs after the argument too.
	for _, pair := range [][2][]string{
		{sessionsFixture("session", "--no-rates", "user:dev"), sessionsFixture("session", "user:dev", "--no-rates")},
		{fixture("kill", "--dry-run", "110"), fixture("kill", "110", "--dry-run")},
	} {
		// Ages read the same: the clock starts at the same fixed time.
		now := fixtureBoot().Add(30*24*time.Hour + 45*time.Minute)
		before, after := cliAt(t, now, pair[0]...), cliAt(t, now, pair[1]...)
		if before.code != exitOK || after.code != exitOK || after.stdout != before.stdout {
			t.Errorf("%v: exit %d\n%s%s\nwant as %v:\n%s", pair[1], after.code, after.stdout, after.stderr, pair[0], before.stdout)
		}
	}
	// An unknown flag after the argument is named as one, not taken for
	// a second argument.
	for _, args := range [][]string{fixture("tree", "110", "--bogus"), fixture("kill", "110", "--bogus", "--dry-run"), sessionsFixture("session", "user:dev", "--bogus")} {
		r := cli(t, args...)
		if want := "procwalk: unknown flag --bogus: "; r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q...", args, r.code, r.stderr, want)
		}
	}
}

func TestTree(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	tests := []struct {
		name   string
		args   []string
		stdout string
		stderr string
	}{
		{
			// Every root but the kernel's. 1's subtree: 15 processes,
			// 43141 resident pages; its PSS is the sum of smaps_rollup's Pss
			// lines, 131500 kB. Processes without PSS show "-", as do
			// subtrees where no member has one.
			name: "all roots with PSS",
			args: []string{"tree", "--pss"},
			stdout: `PID        RSS       PSS  PROCS   TREE-RSS   TREE-PSS  COMMAND
  1   11.7 MiB   6.8 MiB     15  168.5 MiB  128.4 MiB  systemd
100    4.7 MiB   2.0 MiB      7  156.4 MiB  121.6 MiB  ├─ tmux: server
101    3.5 MiB   1.2 MiB      3  128.5 MiB  103.7 MiB  │  ├─ bash
110    7.8 MiB   4.9 MiB      2  125.0 MiB  102.5 MiB  │  │  └─ make
111  117.2 MiB  97.7 MiB      1  117.2 MiB   97.7 MiB  │  │     └─ cc1
102    3.7 MiB   1.3 MiB      3   23.2 MiB   15.9 MiB  │  └─ bash
120   19.5 MiB  14.6 MiB      2   19.5 MiB   14.6 MiB  │     └─ python3
121        0 B         -      1        0 B          -  │        └─ defunct <defunct>
200   40.0 KiB         -      1   40.0 KiB          -  ├─ my prog
201   44.0 KiB         -      1   44.0 KiB          -  ├─ (sd-pam)
202   48.0 KiB         -      1   48.0 KiB          -  ├─ ) (
203   52.0 KiB         -      1   52.0 KiB          -  ├─ evil\nname
204   56.0 KiB         -      1   56.0 KiB          -  ├─
205   60.0 KiB         -      1   60.0 KiB          -  ├─ x) Z 9 9 9 (y
303   64.0 KiB         -      1   64.0 KiB          -  └─ badfiles
400   68.0 KiB         -      1   68.0 KiB          -  orphan
`,
			stderr: fixtureNote,
		},
		{
			name: "one subtree",
			args: []string{"tree", "102"},
			stdout: `PID       RSS  PROCS  TREE-RSS  COMMAND
102   3.7 MiB      3  23.2 MiB  bash
120  19.5 MiB      2  19.5 MiB  └─ python3
121       0 B      1       0 B     └─ defunct <defunct>
`,
			stderr: fixtureNote,
		},
		{
			name: "kernel threads on request",
			args: []string{"tree", "--kernel"},
			stdout: `PID        RSS  PROCS   TREE-RSS  COMMAND
  1   11.7 MiB     15  168.5 MiB  systemd
100    4.7 MiB      7  156.4 MiB  ├─ tmux: server
101    3.5 MiB      3  128.5 MiB  │  ├─ bash
110    7.8 MiB      2  125.0 MiB  │  │  └─ make
111  117.2 MiB      1  117.2 MiB  │  │     └─ cc1
102    3.7 MiB      3   23.2 MiB  │  └─ bash
120   19.5 MiB      2   19.5 MiB  │     └─ python3
121        0 B      1        0 B  │        └─ defunct <defunct>
200   40.0 KiB      1   40.0 KiB  ├─ my prog
201   44.0 KiB      1   44.0 KiB  ├─ (sd-pam)
202   48.0 KiB      1   48.0 KiB  ├─ ) (
203   52.0 KiB      1   52.0 KiB  ├─ evil\nname
204   56.0 KiB      1   56.0 KiB  ├─
205   60.0 KiB      1   60.0 KiB  ├─ x) Z 9 9 9 (y
303   64.0 KiB      1   64.0 KiB  └─ badfiles
  2        0 B      2        0 B  kthreadd
  3        0 B      1        0 B  └─ kworker/0:0H-events_highpri
400   68.0 KiB      1   68.0 KiB  orphan
`,
			stderr: fixtureNote,
		},
		{
			name: "a kernel PID shows its kernel subtree",
			args: []string{"tree", "2"},
			stdout: `PID  RSS  PROCS  TREE-RSS  COMMAND
  2  0 B      2       0 B  kthreadd
  3  0 B      1       0 B  └─ kworker/0:0H-events_highpri
`,
			stderr: fixtureNote,
		},
		{
			// Global flags before the command name, PSS of a leaf.
			name: "flags before the command",
			args: []string{"--pss", "tree", "111"},
			stdout: `PID        RSS       PSS  PROCS   TREE-RSS  TREE-PSS  COMMAND
111  117.2 MiB  97.7 MiB      1  117.2 MiB  97.7 MiB  cc1
`,
			stderr: fixtureNote,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, fixture(tt.args...)...)
			if r.code != exitOK || r.stdout != tt.stdout {
				t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, tt.stdout)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr %q\nwant %q", r.stderr, tt.stderr)
			}
		})
	}
}

func TestTreeErrors(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"tree", "999"}, exitError, "procwalk: pid 999 is not in " + fixtureProc + ": it may have exited; procwalk ps lists the pids\n"},
		{[]string{"tree", "abc"}, exitUsage, "procwalk: tree: \"abc\" is not a PID (a positive number)\n"},
		{[]string{"tree", "0"}, exitUsage, "procwalk: tree: \"0\" is not a PID (a positive number)\n"},
		{[]string{"tree", "1", "2"}, exitUsage, "procwalk: tree takes at most one PID, got [\"1\" \"2\"]\n"},
		// 300 is listed but gone: not in the snapshot.
		{[]string{"tree", "300"}, exitError, "procwalk: pid 300 is not in " + fixtureProc + ": it may have exited; procwalk ps lists the pids\n"},
	}
	for _, tt := range tests {
		r := cli(t, fixture(tt.args...)...)
		if r.code != tt.code || r.stderr != tt.stderr || r.stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want %d, %q", tt.args, r.code, r.stderr, r.stdout, tt.code, tt.stderr)
		}
	}
}

// tree --help explains the + of a lower bound (render.TreeTable's).
func TestTreePSSLowerBoundHelp(t *testing.T) {
	if !strings.Contains(helpText("tree"), `ending in "+" is a lower bound`) {
		t.Error("tree --help does not explain the + mark")
	}
}

// smaps_rollup takes each target's mmap lock, so --pss reads it of the
// processes a command shows alone. Pid 200's smaps_rollup is made
// unreadable (a directory): the visibility note counts it as malformed
// exactly when a command read it.
func TestPSSReadOfShownProcessesOnly(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	root := copyTree(t, fixtureProc)
	smaps := filepath.Join(root, "200", "smaps_rollup")
	if err := os.Remove(smaps); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(smaps, 0o755); err != nil {
		t.Fatal(err)
	}
	const with200 = "procwalk: partial data: 1 process exited mid-scan; 3 processes with malformed /proc files (2 left out: bad stat or statm)\n"
	// Commands reading status see 303's malformed status too.
	const withStatusAnd200 = "procwalk: partial data: 1 process exited mid-scan; 4 processes with malformed /proc files (2 left out: bad stat or statm)\n"
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"tree", "--pss", "101"}, fixtureNote},
		{[]string{"tree", "--pss"}, with200}, // 200 is drawn
		{[]string{"session", "--pss", "--no-rates", "tree:101"}, fixtureNoteStatus},
		{[]string{"session", "--pss", "--no-rates", "tree:1"}, withStatusAnd200},
		{[]string{"ps", "--pss", "--no-rates", "--filter", "make"}, fixtureNoteStatus},
		{[]string{"ps", "--pss", "--no-rates", "--limit", "1"}, fixtureNoteStatus},
		{[]string{"ps", "--pss", "--no-rates", "--limit", "1", "--sort", "pss"}, withStatusAnd200}, // sorting reads every match
	} {
		r := cli(t, append([]string{"--proc", root, "--passwd", fixturePasswd}, tt.args...)...)
		if r.code != 0 || r.stderr != tt.stderr {
			t.Errorf("%s: exit %d, stderr %q; want 0, %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.stderr)
		}
	}
	// The subtree's PSS is read all the same.
	r := cli(t, "--proc", root, "--passwd", fixturePasswd, "tree", "--pss", "110")
	want := `PID        RSS       PSS  PROCS   TREE-RSS   TREE-PSS  COMMAND
110    7.8 MiB   4.9 MiB      2  125.0 MiB  102.5 MiB  make
111  117.2 MiB  97.7 MiB      1  117.2 MiB   97.7 MiB  └─ cc1
`
	if r.stdout != want {
		t.Errorf("tree --pss 110:\n%s\nwant:\n%s", r.stdout, want)
	}
}

// tree --json nests the processes with each subtree's totals; PSS sums are
// present when read, and the visibility goes in the JSON, not on stderr.
// Each process has the user, uid and command line ps --json has.
func TestTreeJSON(t *testing.T) {
	clearEnv(t)
	needPages4K(t)
	r := cli(t, fixture("tree", "--json", "--pss", "110")...)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	type node struct {
		Process struct {
			PID     int      `json:"pid"`
			Comm    string   `json:"comm"`
			User    string   `json:"user"`
			UID     *int     `json:"uid"`
			Cmdline []string `json:"cmdline"`
		} `json:"process"`
		Subtree struct {
			Procs    int     `json:"procs"`
			RSSBytes uint64  `json:"rss_bytes"`
			PSSBytes *uint64 `json:"pss_bytes"`
		} `json:"subtree"`
		Children []json.RawMessage `json:"children"`
	}
	var doc struct {
		Visibility map[string]any `json:"visibility"`
		Roots      []node         `json:"roots"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	// make (110): 2 processes, 32000 resident pages; PSS 105000 kB.
	root := doc.Roots[0]
	if len(doc.Roots) != 1 || root.Process.PID != 110 || root.Subtree.Procs != 2 || root.Subtree.RSSBytes != 32000*4096 ||
		root.Subtree.PSSBytes == nil || *root.Subtree.PSSBytes != 105000*1024 || len(root.Children) != 1 {
		t.Errorf("root %+v, %d children", root, len(root.Children))
	}
	var child node
	if err := json.Unmarshal(root.Children[0], &child); err != nil || child.Process.Comm != "cc1" || len(child.Children) != 0 {
		t.Errorf("child %+v, %v", child, err)
	}
	ps := cli(t, fixture("ps", "--json", "--no-rates")...)
	var list struct {
		Processes []struct {
			PID     int      `json:"pid"`
			User    string   `json:"user"`
			UID     *int     `json:"uid"`
			Cmdline []string `json:"cmdline"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(ps.stdout), &list); err != nil {
		t.Fatal(err)
	}
	for _, n := range []node{root, child} {
		for _, p := range list.Processes {
			if p.PID != n.Process.PID {
				continue
			}
			if n.Process.User == "" || n.Process.User != p.User || n.Process.UID == nil || p.UID == nil || *n.Process.UID != *p.UID ||
				len(n.Process.Cmdline) == 0 || strings.Join(n.Process.Cmdline, " ") != strings.Join(p.Cmdline, " ") {
				t.Errorf("pid %d: tree --json %+v, ps --json %+v: want the same user, uid and cmdline", p.PID, n.Process, p)
			}
		}
	}
	if doc.Visibility["gone"] != 1.0 {
		t.Errorf("visibility %v", doc.Visibility)
	}
}
