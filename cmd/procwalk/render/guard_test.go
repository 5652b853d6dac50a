//go:build linux

package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk/kill"
	"golang.org/x/sys/unix"
)

// guard's summary counts in words ("sampled 1 time", not "1 times") and
// calls the kernel's peak RSS a bound. The result is built by hand: no
// process is started.
func TestGuardSummaryWording(t *testing.T) {
	var stderr bytes.Buffer
	status := unix.WaitStatus(0) // exited with status 0
	start := time.Unix(1700000000, 0)
	for _, tt := range []struct {
		samples, seen int
		want          string
		cgroup        string
	}{
		{1, 1, "procwalk guard: make exited with status 0 after 1.5s\n" +
			"  peak tree RSS 2.0 MiB, PSS not read (use --max-pss or --pss), sampled 1 time every 1s; largest process peak RSS at most 1.0 MiB (kernel high-water mark)\n" +
			"  CPU 0.25s user+system (approximate: no cgroup of its own); 1 process seen; 0 orphans reaped\n", ""},
		{3, 2, "procwalk guard: make exited with status 0 after 1.5s\n" +
			"  peak tree RSS 2.0 MiB, PSS not read (use --max-pss or --pss), sampled 3 times every 1s; largest process peak RSS at most 1.0 MiB (kernel high-water mark)\n" +
			"  CPU 0.25s user+system (from its cgroup); 2 processes seen; 0 orphans reaped\n", "/sys/fs/cgroup/g"},
	} {
		stderr.Reset()
		res := &kill.SuperviseResult{Status: &status, Start: start, End: start.Add(1500 * time.Millisecond), Samples: tt.samples,
			PeakRSSBytes: 2 << 20, CPUSeconds: 0.25, MaxRSSKiB: 1024, Seen: tt.seen, History: kill.NewAuditLog(100), CPUCgroup: tt.cgroup}
		GuardSummary(&stderr, GuardRun{Result: res, Name: "make", Interval: time.Second, HistorySize: 100})
		if got := stderr.String(); got != tt.want {
			t.Errorf("summary:\n%s\nwant:\n%s", got, tt.want)
		}
	}
}
