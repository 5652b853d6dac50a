//go:build linux

package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// guard_cpu_test.go: issue 22, class 5. A command whose children are
// reaped by the kernel (it ignores SIGCHLD) hides their CPU from every
// cutime; guard must still see it: exactly, from the command's own cgroup,
// or, without one (--no-cgroup), approximately, from each child's last
// sample. Each child burns 0.6 s of CPU; ten of them, one after another,
// far more than the 2 s limit. Before, guard saw about 0.4 s and exited 0.

// burnIgnoringSIGCHLD is the command: SIGCHLD ignored, then children that
// each burn CPU for 0.6 s and exit, one at a time (never waited for: the
// kernel reaps them).
const burnIgnoringSIGCHLD = `
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for i in range(10):
    pid = os.fork()
    if pid == 0:
        end = time.process_time() + 0.6
        while time.process_time() < end:
            pass
        os._exit(0)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
`

func TestIntegrationGuardCPUOfKernelReapedChildren(t *testing.T) {
	integration(t)
	clearEnv(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	nested := "import os, sys\nos.execvp(sys.executable, [sys.executable, '-c', " + strconv.Quote(burnIgnoringSIGCHLD) + "])"
	for _, tt := range []struct {
		name  string
		flags []string
		argv  []string
	}{
		{"cgroup", nil, []string{python, "-c", burnIgnoringSIGCHLD}},
		{"cgroup, below a shell", nil, []string{"sh", "-c", `"$0" -c "$1"; exit 0`, python, burnIgnoringSIGCHLD}},
		{"no cgroup", []string{"--no-cgroup"}, []string{python, "-c", burnIgnoringSIGCHLD}},
		{"no cgroup, after an exec", []string{"--no-cgroup"}, []string{python, "-c", nested}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--max-cpu-time", "2s", "--interval", "100ms", "--grace", "1s"}, tt.flags...)
			r := guard(t, append(append(args, "--"), tt.argv...)...)
			t.Logf("exit %d:\n%s", r.code, r.stderr)
			if r.code != exitLimit || !strings.Contains(r.stderr, "over --max-cpu-time 2s") {
				t.Fatalf("exit %d, want %d with --max-cpu-time enforced", r.code, exitLimit)
			}
			m := regexp.MustCompile(`CPU ([0-9.]+)s user\+system \(([^)]*)\)`).FindStringSubmatch(r.stderr)
			if m == nil {
				t.Fatal("no CPU line in the summary")
			}
			if cpu, _ := strconv.ParseFloat(m[1], 64); cpu < 2 {
				t.Errorf("CPU %ss counted, want at least the 2 s limit", m[1])
			}
			want := "from its cgroup"
			if len(tt.flags) > 0 {
				want = "approximate: no cgroup of its own"
			}
			if m[2] != want && !(want == "from its cgroup" && os.Geteuid() != 0) {
				t.Errorf("CPU counted %q, want %q", m[2], want)
			}
		})
	}
}
