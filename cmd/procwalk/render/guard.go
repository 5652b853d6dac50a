//go:build linux

package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
	"golang.org/x/sys/unix"
)

// guard.go is procwalk guard's summary of a supervised run.

// GuardRun is a supervised run of procwalk guard, as its summary tells it.
type GuardRun struct {
	Result      *kill.SuperviseResult
	Name        string        // the command's name, escaped
	Root        string        // the procfs root read
	Interval    time.Duration // between two checks of the tree
	DryRun      bool
	HistorySize int // kill events kept
}

// GuardOutcome says why guard ended its run of name.
func GuardOutcome(res *kill.SuperviseResult, name string) string {
	status := "still running"
	if res.Status != nil {
		status = DescribeStatus(*res.Status)
	}
	switch {
	case res.Enforced != "" && res.Unenforced != nil:
		return fmt.Sprintf("NOT stopped: %s, but every target was refused (%s %s)", res.Enforced, name, status)
	case res.Enforced != "":
		return fmt.Sprintf("stopped by procwalk: %s (%s %s)", res.Enforced, name, status)
	case res.Cancelled:
		return fmt.Sprintf("cancelled: the tree was terminated (%s %s)", name, status)
	case len(res.Forwarded) > 0:
		return fmt.Sprintf("%s %s (guard forwarded %s)", name, status, strings.Join(res.Forwarded, ","))
	}
	return name + " " + status
}

// GuardSummary writes how run went, for stderr.
func GuardSummary(w io.Writer, r GuardRun) {
	res := r.Result
	if res.End.IsZero() {
		res.End = time.Now()
	}
	fmt.Fprintf(w, "procwalk guard: %s after %s\n", GuardOutcome(res, r.Name), res.End.Sub(res.Start).Round(time.Millisecond))
	kernelPeak := Bytes(uint64(max(res.MaxRSSKiB, 0)) * 1024)
	if res.Samples == 0 {
		fmt.Fprintf(w, "  tree not sampled (it ended before the first --interval %s); largest process peak RSS at most %s (kernel high-water mark)\n", r.Interval, kernelPeak)
	} else {
		pss := "PSS not read (use --max-pss or --pss)"
		if res.PSSSeen {
			pss = "peak tree PSS " + Bytes(res.PeakPSSBytes)
		}
		fmt.Fprintf(w, "  peak tree RSS %s, %s, sampled %s every %s; largest process peak RSS at most %s (kernel high-water mark)\n",
			Bytes(res.PeakRSSBytes), pss, CountOf(res.Samples, "time", "times"), r.Interval, kernelPeak)
	}
	how := "from its cgroup"
	if res.CPUCgroup == "" {
		how = "approximate: no cgroup of its own"
	}
	fmt.Fprintf(w, "  CPU %.2fs user+system (%s); %s seen; %s reaped\n",
		res.CPUSeconds, how, CountOf(res.Seen, "process", "processes"), CountOf(res.OrphansReaped, "orphan", "orphans"))
	switch {
	case res.Leftovers && r.DryRun:
		fmt.Fprintf(w, "  %s left processes running: not ended (dry run)\n", r.Name)
	case res.Leftovers:
		fmt.Fprintf(w, "  %s left processes running: guard ended them\n", r.Name)
	}
	for _, why := range res.WouldEnd {
		fmt.Fprintf(w, "  dry run: %s: nothing was signalled\n", why)
	}
	if res.Abandoned > 0 {
		fmt.Fprintf(w, "  %d processes outlived SIGKILL (uninterruptible sleep?): guard stopped waiting for them\n", res.Abandoned)
	}
	if res.ScanErrors > 0 {
		fmt.Fprintf(w, "  %d scans of %s failed: limits were not checked then\n", res.ScanErrors, r.Root)
	}
	if events := res.History.Events(); len(events) > 0 {
		what := "signalled by guard"
		if r.DryRun {
			what = "would have been signalled"
		}
		fmt.Fprintf(w, "  %s: %d (last %d kept):\n", what, res.History.Total(), r.HistorySize)
		for _, e := range events {
			fmt.Fprintf(w, "    %s\n", procwalk.Printable(e.String()))
		}
	}
}

// DescribeStatus says how a process ended: "exited with status 3",
// "killed by signal KILL".
func DescribeStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		s := "killed by signal " + kill.SignalName(ws.Signal())
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return fmt.Sprintf("exited with status %d", ws.ExitStatus())
}
