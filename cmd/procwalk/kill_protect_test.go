//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestIntegrationKillInterpreterOptions: a protected program run by an
// interpreter with options before its script (python3 -u .../jupyter-lab,
// a shebang's "#!/bin/bash -e") or as a module (python3 -m jupyterlab) is
// refused by a plain kill, and stays alive; the same interpreter running
// an unprotected script the same way is ended (issue 22, class 6). Each
// script is a real file run by the real interpreter.
func TestIntegrationKillInterpreterOptions(t *testing.T) {
	integration(t)
	clearEnv(t)
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	py := "import time\ntime.sleep(300)\n"
	sh := "sleep 300\n"
	pl := "sleep 300;\n"
	js := "setTimeout(() => {}, 300000);\n"
	rb := "sleep 300\n"
	modDir := filepath.Join(dir, "modules")
	if err := os.Mkdir(modDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"jupyterlab.py", "trainer.py"} {
		if err := os.WriteFile(filepath.Join(modDir, m), []byte(py), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The interpreter itself, not a version manager's shim (pyenv's is a
	// bash script, which a test would then kill in its stead).
	python := "python3"
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		python = strings.TrimSpace(string(out))
	}
	preload := script("preload.js", "")
	for _, tt := range []struct {
		name      string
		argv      []string
		protected bool
	}{
		{"python -u", []string{python, "-u", script("jupyter-lab", py)}, true},
		{"python -B", []string{python, "-B", script("jupyter-server", py)}, true},
		{"python -W ignore -X dev", []string{python, "-W", "ignore", "-X", "dev", script("jupyter-lab", py)}, true},
		{"python -uB cluster", []string{python, "-uB", script("jupyter-lab", py)}, true},
		{"python -m", []string{python, "-m", "jupyterlab"}, true},
		{"python -u unprotected", []string{python, "-u", script("train.py", py)}, false},
		{"python -m unprotected", []string{python, "-m", "trainer"}, false},
		{"bash -e", []string{"bash", "-e", script("ttyd", sh)}, true},
		{"bash -eo pipefail", []string{"bash", "-eo", "pipefail", script("ttyd", sh)}, true},
		{"sh -e", []string{"sh", "-e", script("ttyd", sh)}, true},
		{"dash -eu", []string{"dash", "-eu", script("ttyd", sh)}, true},
		{"zsh -f", []string{"zsh", "-f", script("ttyd", sh)}, true},
		{"bash -e unprotected", []string{"bash", "-e", script("build.sh", sh)}, false},
		{"perl -w", []string{"perl", "-w", "-Mstrict", script("envoy", pl)}, true},
		{"perl -w unprotected", []string{"perl", "-w", script("job.pl", pl)}, false},
		{"node --max-old-space-size -r", []string{"node", "--max-old-space-size=64", "-r", preload, "--no-warnings", script("code-server", js)}, true},
		{"node unprotected", []string{"node", "--max-old-space-size=64", script("app.js", js)}, false},
		{"ruby -w", []string{"ruby", "-w", "-r", "json", script("envoy", rb)}, true},
		{"ruby -W0 -rjson -I lib", []string{"ruby", "-W0", "-rjson", "-I", dir, "--disable=gems", script("envoy", rb)}, true},
		{"ruby -w unprotected", []string{"ruby", "-w", "-r", "json", script("worker.rb", rb)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath(tt.argv[0]); err != nil {
				t.Skipf("no %s", tt.argv[0])
			}
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+modDir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil { // unreaped, its pid (the group's id) is not reused
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its group: only what it started
					cmd.Wait()
				}
			})
			pid := cmd.Process.Pid
			waitCmdline(t, pid, tt.argv[len(tt.argv)-1])
			r := cli(t, "kill", "--grace", "2s", strconv.Itoa(pid))
			if !tt.protected {
				if r.code != exitOK || !strings.HasPrefix(r.stdout, "exited pid "+strconv.Itoa(pid)+" ") && !strings.HasPrefix(r.stdout, "killed pid "+strconv.Itoa(pid)+" ") {
					t.Fatalf("an unprotected script: exit %d, want it ended with exit 0:\n%s%s", r.code, r.stdout, r.stderr)
				}
				return
			}
			if r.code != exitError || !strings.HasPrefix(r.stdout, "refused_protected pid "+strconv.Itoa(pid)+" ") {
				t.Fatalf("exit %d, want refused_protected and exit 1:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(b), ") Z ") {
				t.Errorf("pid %d is gone after a refused kill", pid)
			}
		})
	}
}

// waitCmdline waits until pid's command line ends with arg: the
// interpreter has been exec'd.
func waitCmdline(t *testing.T, pid int, arg string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && args[len(args)-1] == arg {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never ran with %q last: %q", pid, arg, b)
		}
	}
}
