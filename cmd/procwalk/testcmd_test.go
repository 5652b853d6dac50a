//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procwalk/procwalk/scripting"
)

// TestTestCommand runs rule tests from the command line: the bundled
// scripts' and the examples' pass (exit 0), a failing one shows its diff
// (exit 1), a malformed one or no file is a usage error (exit 2).
func TestTestCommand(t *testing.T) {
	clearEnv(t)
	r := cli(t, "test", "../../scripts", "../../examples/rules")
	if r.code != exitOK || strings.Count(r.stdout, "ok    ") != 9 || strings.Contains(r.stdout, "FAIL") {
		t.Errorf("bundled tests: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	failing := filepath.Join(dir, "late.ruletest")
	os.WriteFile(failing, []byte(`rule memory-guard -- limit=1GiB ticks=2
at 0s
  session tmux:build
    100 cc1 rss=2GiB
every 10s until 10s
expect 0s kill pid=100
`), 0o644)
	r = cli(t, "test", failing)
	want := "FAIL  " + failing + " (2 frames)\n  at 0s:\n    - kill pid=100 (line 6)\n  at 10s:\n    + alert message="
	if r.code != exitError || !strings.HasPrefix(r.stdout, want) || !strings.Contains(r.stderr, "1 of 1 rule tests failed") {
		t.Errorf("failing test: exit %d\n%s\nwant a start of\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
	bad := filepath.Join(dir, "bad.ruletest")
	os.WriteFile(bad, []byte("rule memory-guard\nat soon\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"test"}, "name test files or folders"},
		{[]string{"test", bad}, `bad.ruletest:2: "soon": a time from the first frame`},
		{[]string{"test", filepath.Join(dir, "none.ruletest")}, "no such file"},
		{[]string{"test", t.TempDir()}, "no *.ruletest file in this folder"},
	} {
		r := cli(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// run --api prints the Lua API reference, and takes no script.
func TestRunAPI(t *testing.T) {
	clearEnv(t)
	r := cli(t, "run", "--api")
	if r.code != exitOK || r.stdout != scripting.Reference() || !strings.Contains(r.stdout, "pw.kill(target [, opts]) -> report | nil, err") {
		t.Errorf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if r := cli(t, "run", "--api", "memory-guard"); r.code != exitUsage {
		t.Errorf("--api with a script: exit %d", r.code)
	}
}
