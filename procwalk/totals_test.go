//go:build linux

package procwalk

import "testing"

func TestTotalsAdd(t *testing.T) {
	procs := []Process{
		{
			State: 'S', Threads: 3, RSSBytes: 1000, SwapBytes: 10, UserCPUSeconds: 1.5, SystemCPUSeconds: 0.5,
			Smaps: SmapsRollup{PSSBytes: 600, USSBytes: 400}, IO: IO{ReadBytes: 7, WriteBytes: 9},
			Read:  FieldSmaps | FieldIO,
			Rates: Rates{Measured: true, CPUPercent: 25, HaveIO: true, ReadBytesPerSecond: 100, WriteBytesPerSecond: 50},
		},
		{
			// smaps and io not read: their values must not be summed even if set.
			State: 'R', Threads: 1, RSSBytes: 2000, UserCPUSeconds: 2,
			Smaps: SmapsRollup{PSSBytes: 999999}, IO: IO{ReadBytes: 999999},
			Rates: Rates{Measured: true, CPUPercent: 50},
		},
		{
			// First sight: rates not measured, not counted.
			State: 'Z', Threads: 1, SystemCPUSeconds: 0.25,
			Rates: Rates{CPUPercent: 99},
		},
	}
	var got Totals
	for i := range procs {
		got.Add(&procs[i])
	}
	want := Totals{
		Procs: 3, Threads: 5, Zombies: 1,
		RSSBytes: 3000, PSSBytes: 600, USSBytes: 400, SwapBytes: 10,
		CPUSeconds: 4.25, ReadBytes: 7, WriteBytes: 9,
		CPUPercent: 75, ReadBytesPerSecond: 100, WriteBytesPerSecond: 50, RatesMeasured: 2,
		SmapsRead: 1, IORead: 1,
	}
	if got != want {
		t.Errorf("Totals =\n %+v\nwant\n %+v", got, want)
	}
}
