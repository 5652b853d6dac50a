//go:build linux

package kill

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
)

// After a SIGSTOP, waiting is over when the process stopped, or when a
// single-threaded one is running with no SIGSTOP pending: it stopped and
// was continued since (tmux continues a stopped pane's process group at
// once), and waiting longer would never see it stopped. A STOP still
// pending, or a process of several threads (they stop one by one after the
// dequeue), is waited for.
func TestStoppedOrContinued(t *testing.T) {
	const pid, ticks = 4242, 77777
	for _, tt := range []struct {
		name    string
		state   byte
		threads int
		shdPnd  string
		want    bool
	}{
		{"stopped", 'T', 1, "0000000000000000", true},
		{"STOP pending (uninterruptible sleep)", 'D', 1, "0000000000040000", false},
		{"continued by another process", 'S', 1, "0000000000000000", true},
		{"another signal pending, STOP taken", 'S', 1, "0000000000004000", true},
		{"several threads, STOP taken", 'S', 3, "0000000000000000", false},
		{"a status it cannot read: waited for", 'S', 1, "", false},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, fmt.Sprint(pid))
		stat := fmt.Sprintf("%d (a) b) %c 1 %d %d 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 %d 0 %d 8441856 900 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, tt.state, pid, pid, tt.threads, ticks)
		status := "Name:\ta) b\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\nThreads:\t1\nSigQ:\t0/96343\nSigPnd:\t0000000000000000\nShdPnd:\t" + tt.shdPnd + "\nSigBlk:\t0000000000040000\n"
		files := map[string]string{filepath.Join(root, "stat"): "cpu 0 0 0 0\n", filepath.Join(dir, "stat"): stat, filepath.Join(dir, "status"): status}
		if tt.shdPnd == "" {
			delete(files, filepath.Join(dir, "status"))
		}
		for name, text := range files {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fs, err := procwalk.NewFS(root)
		if err != nil {
			t.Fatal(err)
		}
		h := &ProcHandle{ID: procwalk.ProcID{PID: pid, StartTicks: ticks}, fs: fs, pidfd: -1}
		if got := h.Stopped(); got != tt.want {
			t.Errorf("%s: Stopped() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
