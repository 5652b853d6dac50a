//go:build linux

package scripting

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// hogEnv makes this test binary, started as a worker, a memory hog: it
// touches memory until something stops it.
const hogEnv = "SCRIPTING_TEST_MEMORY_HOG"

func TestMain(m *testing.M) {
	if os.Getenv(hogEnv) == "1" {
		// As a worker does, wait for the command line: by then the parent
		// has put this process in the cgroup, which is charged for all
		// that follows.
		os.Stdin.Read(make([]byte, 1))
		var kept [][]byte
		for range 1 << 9 { // 512 MiB at most, well past the cgroup's limit
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			kept = append(kept, b)
		}
		runtime.KeepAlive(kept)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A worker that outgrows its memory cgroup is OOM-killed by the kernel, at
// the limit, and its death says so. Needs a memory cgroup procwalk may
// make below its own: root on a v1 or hybrid host, or a delegated v2
// subtree; skipped elsewhere.
func TestIntegrationWorkerMemoryCgroup(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("starts a memory hog: set PROCWALK_INTEGRATION=1")
	}
	self, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(hogEnv, "1")
	w := NewWorker(WorkerConfig{
		Path:   os.Args[0],
		Args:   []string{"-test.run=^$"},
		Limits: Limits{Timeout: time.Minute, HeapBudgetBytes: 1 << 20, RetainedBytes: 1 << 20},
		Self:   self,
	})
	defer w.Close()
	dir, limit := w.memoryCgroupOf()
	if dir == "" {
		t.Skip("no memory cgroup can be made here: the hog is not started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = w.Tick(ctx, frame.Frame{Snapshot: procwalk.NewSnapshot(procwalk.Host{}, 0, 0, nil, procwalk.Visibility{})})
	t.Logf("cgroup %s, limit %s: %v", dir, procwalk.FormatBytes(limit), err)
	if want := uint64(2<<20 + cgroupSlack); limit != want {
		t.Errorf("limit %d, want %d", limit, want)
	}
	if !errors.Is(err, ErrWorker) || !strings.Contains(err.Error(), "was killed by the kernel's OOM killer at its memory cgroup's limit of 130.0 MiB") {
		t.Fatalf("got %v", err)
	}
	// What the hog's runtime touched before its command line came is
	// charged outside the cgroup.
	if peak := w.PeakRSSBytes(); peak > limit+32<<20 {
		t.Errorf("peak RSS %s, over the limit %s", procwalk.FormatBytes(peak), procwalk.FormatBytes(limit))
	}
	w.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s is left: %v", dir, err)
	}
}

// memoryCgroupOf returns the memory cgroup directory workers run in and its
// limit; "" when there is none (RLIMIT_AS only).
func (w *Worker) memoryCgroupOf() (dir string, limitBytes uint64) {
	if w.cgroup == nil {
		return "", 0
	}
	return w.cgroup.dir, w.cgroup.limit
}

// The cgroup a SIGKILLed procwalk left is removed by the next one that
// makes its own, in the real hierarchy.
func TestIntegrationWorkerRemovesStaleCgroup(t *testing.T) {
	if os.Getenv("PROCWALK_INTEGRATION") != "1" {
		t.Skip("makes cgroups: set PROCWALK_INTEGRATION=1")
	}
	self, err := procwalk.NewFS(procwalk.DefaultRoot)
	if err != nil {
		t.Skip(err)
	}
	parent, ok := self.SelfMemoryCgroup()
	if !ok {
		t.Skip("no memory cgroup")
	}
	ended := exec.Command("true") // a pid no process has now
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(parent.Dir, workerCgroupPrefix+strings.Trim(ns[len("pid:"):], "[]")+"-"+strconv.Itoa(ended.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Skipf("cannot make a cgroup below %s: %v", parent.Dir, err)
	}
	t.Cleanup(func() { os.Remove(stale) })
	c := newMemoryCgroup(self, 64<<20)
	if c == nil {
		t.Skip("no memory cgroup can be made here")
	}
	defer c.remove()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale cgroup %s is still there (%v)", stale, err)
	}
}
