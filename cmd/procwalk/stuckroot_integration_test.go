//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stuckroot_integration_test.go: issue 22, class 7. A --proc on a hung
// mount: the root's own files (stat, meminfo) are FUSE files whose reads
// never return. Every command must give up on them after the read
// timeout, say so, exit 1, and close its output, so that a reader of it
// (a pipe) sees the end while the read is still blocked (the process
// itself cannot finish exiting until then: the kernel waits the read out).
func TestIntegrationStuckRoot(t *testing.T) {
	integration(t)
	clearEnv(t)
	bin := buildProcwalk(t)
	for _, tt := range []struct {
		file string
		args []string
	}{
		{"stat", []string{"ps"}},
		{"stat", []string{"kill", "--dry-run", "110"}},
		{"stat", []string{"kill", "--dry-run", "--tree", "101"}},
		{"meminfo", []string{"kill", "--dry-run", "--pgrp", "101"}},
		{"meminfo", []string{"sessions", "--tmux-socket", "/nonexistent/tmux"}},
	} {
		t.Run(tt.file+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			root := copyTree(t, fixtureProc)
			f := mountStuckFile(t, filepath.Join(root, tt.file))
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append(tt.args, "--proc", root, "--passwd", fixturePasswd)...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			cmd.Stdout, cmd.Stderr = outW, outW
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()
			t.Cleanup(func() {
				f.Release() // a thread blocked in a FUSE read outlives SIGKILL
				cmd.Process.Kill()
				cmd.Wait()
			})
			got := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(outR) // until every writer has closed
				got <- string(b)
			}()
			var out string
			select {
			case out = <-got:
			case <-time.After(120 * time.Second):
				t.Fatalf("no end of output within 120 s with %s blocked (%d reads blocked)", tt.file, f.Reads())
			}
			if f.Reads() == 0 {
				t.Fatalf("the stuck %s was never read:\n%s", tt.file, out)
			}
			if !strings.Contains(out, "a read of the proc root blocked") || !strings.Contains(out, "blocked for more than 2s") {
				t.Errorf("output does not say the root's read blocked:\n%s", out)
			}
			f.Release()
			err = cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError {
				t.Errorf("exit %v, want 1", err)
			}
		})
	}
}
