//go:build linux

package procwalk

import (
	"reflect"
	"slices"
	"testing"
)

func fixtureScanner(t *testing.T) *Scanner {
	t.Helper()
	fs, err := NewFS(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	return NewScanner(fs)
}

func TestSnapshotSelectReadsForChosenProcessesOnly(t *testing.T) {
	sc := fixtureScanner(t)
	var asked []int
	sel := Selector{Fields: FieldCmdline | FieldCgroup, Select: func(p *Process) Fields {
		asked = append(asked, p.ID.PID)
		switch p.Comm {
		case "python3":
			return FieldCmdline
		case "make":
			// Filled by the selector itself: the scan must not read it.
			p.Cgroups = []CgroupLine{{Path: "/from/elsewhere"}}
			p.Read |= FieldCgroup
			return FieldCgroup
		}
		return 0
	}}
	s, err := sc.SnapshotSelect(FieldIO, sel)
	if err != nil {
		t.Fatal(err)
	}
	if s.Fields != FieldIO || s.Selected != FieldCmdline|FieldCgroup {
		t.Errorf("Fields %v, Selected %v; want io, cmdline|cgroup", s.Fields, s.Selected)
	}
	// Called once per process whose stat and statm parsed.
	if len(asked) != len(s.Procs) {
		t.Errorf("Select called for %d processes; the snapshot has %d", len(asked), len(s.Procs))
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		switch p.Comm {
		case "python3":
			if p.Read != FieldIO|FieldCmdline || !slices.Equal(p.Cmdline, []string{"python3", "-m", "http.server"}) {
				t.Errorf("python3: Read %v, Cmdline %q", p.Read, p.Cmdline)
			}
		case "make":
			if p.Read != FieldIO|FieldCgroup || len(p.Cgroups) != 1 || p.Cgroups[0].Path != "/from/elsewhere" {
				t.Errorf("make: Read %v, Cgroups %+v; want the selector's own cgroup, not the file's", p.Read, p.Cgroups)
			}
		default:
			if p.Read&^FieldIO != 0 || p.Cmdline != nil || p.Cgroups != nil {
				t.Errorf("pid %d %q: read %v, not selected", p.ID.PID, p.Comm, p.Read)
			}
		}
	}
}

func TestRecycleReusesStorageAndScansTheSame(t *testing.T) {
	sc := fixtureScanner(t)
	first, err := sc.Snapshot(AllFields)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(first.Procs)
	storage := &first.Procs[:1][0]
	sc.Recycle(first)
	if first.Procs != nil {
		t.Error("Recycle left the snapshot its Procs")
	}
	second, err := sc.Snapshot(AllFields)
	if err != nil {
		t.Fatal(err)
	}
	if &second.Procs[0] != storage {
		t.Error("the second scan did not reuse the recycled array")
	}
	if !reflect.DeepEqual(second.Procs, want) {
		t.Error("a scan into recycled storage differs from a fresh one")
	}
}

func TestReadMoreReadsPickedProcessesAndKeepsOutcomes(t *testing.T) {
	sc := fixtureScanner(t)
	s, err := sc.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	cc1, bad := s.Process(111), s.Process(303)
	// A process whose pid now names another one (start time differs) gets
	// nothing: its files are no longer its own.
	reused := *s.Process(110)
	reused.ID.StartTicks++
	if err := sc.ReadMore([]*Process{cc1, bad, &reused}, FieldCmdline|FieldOOMScore); err != nil {
		t.Fatal(err)
	}
	if cc1.Read != FieldCmdline|FieldOOMScore || len(cc1.Cmdline) == 0 || cc1.Cmdline[0] != "/usr/lib/gcc/x86_64-linux-gnu/12/cc1" {
		t.Errorf("cc1: Read %v, Cmdline %q", cc1.Read, cc1.Cmdline)
	}
	if bad.Malformed&FieldOOMScore == 0 {
		t.Errorf("303's garbage oom_score: Malformed %v", bad.Malformed)
	}
	if reused.Read != 0 || reused.Cmdline != nil || reused.Malformed != 0 {
		t.Errorf("reused pid: Read %v, Cmdline %q; want nothing kept", reused.Read, reused.Cmdline)
	}
	// Fields with an outcome are not read again.
	cc1.Cmdline = []string{"kept"}
	if err := sc.ReadMore([]*Process{cc1}, FieldCmdline); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cc1.Cmdline, []string{"kept"}) {
		t.Errorf("a field already read was read again: %q", cc1.Cmdline)
	}
}
