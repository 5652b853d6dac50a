//go:build linux

package kill

import (
	"fmt"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// TestRehearse plays a tree kill on a snapshot of another time: the
// members admitted are dry runs with the signals they would have got, a
// protected member is refused and cuts the tree below it, pid 1 is
// refused, a root missing from the snapshot is gone; every outcome is
// audited at the snapshot's time.
func TestRehearse(t *testing.T) {
	proc := func(pid, ppid int, comm string) procwalk.Process {
		return procwalk.Process{ID: procwalk.ProcID{PID: pid, StartTicks: uint64(pid) * 10}, PPID: ppid, Comm: comm, State: 'S', Cmdline: []string{comm}, RSSBytes: 4096}
	}
	snap := procwalk.NewSnapshot(procwalk.Host{ClockTicks: 100}, procwalk.FieldCmdline, 0, []procwalk.Process{
		proc(1, 0, "init"), proc(10, 1, "bash"), proc(11, 10, "make"), proc(12, 10, "sshd"), proc(13, 12, "cc1"),
	}, procwalk.Visibility{})
	at := time.Date(2026, 3, 1, 3, 5, 0, 0, time.UTC)
	var events []ActionEvent
	cfg := Config{Requester: "rule:test", Audit: func(e ActionEvent) { events = append(events, e) }}
	r, err := Rehearse(cfg, snap, TreeScope{Root: procwalk.ProcID{PID: 10, StartTicks: 100}}, at)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, o := range r.Outcomes {
		got += fmt.Sprintf("%d:%s:%v ", o.ID.PID, o.Result, o.Planned)
	}
	if want := "10:dry_run:[terminated killed] 11:dry_run:[terminated killed] 12:refused_protected:[] 13:refused_protected:[] "; got != want {
		t.Errorf("outcomes %q\nwant     %q", got, want)
	}
	if !r.DryRun || len(events) != 4 || !events[0].Time.Equal(at) || !events[0].DryRun || events[0].Requester != "rule:test" || events[0].Signals[0] != "TERM" {
		t.Errorf("report dry run %v, events %+v", r.DryRun, events)
	}
	r, _ = Rehearse(Config{}, snap, ProcessScope{ID: procwalk.ProcID{PID: 1, StartTicks: 10}}, at)
	if len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultProtected {
		t.Errorf("pid 1: %+v", r.Outcomes)
	}
	r, _ = Rehearse(Config{}, snap, ProcessScope{ID: procwalk.ProcID{PID: 11, StartTicks: 5}}, at)
	if len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultIdentityChanged {
		t.Errorf("pid 11 of another start: %+v", r.Outcomes)
	}
	r, _ = Rehearse(Config{}, snap, ProcessScope{ID: procwalk.ProcID{PID: 99, StartTicks: 5}}, at)
	if len(r.Outcomes) != 1 || r.Outcomes[0].Result != ResultGone {
		t.Errorf("pid 99: %+v", r.Outcomes)
	}
}
