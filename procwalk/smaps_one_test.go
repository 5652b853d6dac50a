package procwalk

import (
	"errors"
	"testing"
)

// ReadSmaps on the fixture: the same figures as a scan with FieldSmaps, and
// nothing read for a reused pid, a vanished one or a kernel thread.
func TestReadSmaps(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	cheap, err := fs.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	full, err := fs.Snapshot(FieldSmaps)
	if err != nil {
		t.Fatal(err)
	}
	p, want := cheap.Process(110), full.Process(110)
	if err := fs.ReadSmaps(p); err != nil {
		t.Fatal(err)
	}
	if p.Read&FieldSmaps == 0 || p.Smaps != want.Smaps || p.Smaps.PSSBytes != 5000<<10 || p.SwapBytes != want.SwapBytes {
		t.Errorf("ReadSmaps: %+v swap %d, want %+v swap %d", p.Smaps, p.SwapBytes, want.Smaps, want.SwapBytes)
	}

	reused := *cheap.Process(111)
	reused.ID.StartTicks++
	if err := fs.ReadSmaps(&reused); !errors.Is(err, ErrGone) || reused.Read&FieldSmaps != 0 || reused.Smaps.PSSBytes != 0 {
		t.Errorf("reused pid: err %v, read %v, pss %d; want ErrGone and nothing set", err, reused.Read&FieldSmaps != 0, reused.Smaps.PSSBytes)
	}
	gone := Process{ID: ProcID{PID: 4000, StartTicks: 1}}
	if err := fs.ReadSmaps(&gone); !IsGone(err) || gone.Read != 0 {
		t.Errorf("vanished pid: err %v, want gone", err)
	}
	kthread := *cheap.Process(2)
	if err := fs.ReadSmaps(&kthread); err != nil || kthread.Read&FieldSmaps != 0 {
		t.Errorf("kernel thread: err %v, read %v; want nil and nothing read", err, kthread.Read&FieldSmaps != 0)
	}
}
