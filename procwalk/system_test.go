//go:build linux

package procwalk

import (
	"reflect"
	"testing"
)

func TestSystem(t *testing.T) {
	fs, err := NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	got := fs.System()
	// meminfo: 16303428, 12000000, 2097148 and 2096060 kB (the VmSwap of
	// pids 101 and 111 in use); no io pressure file.
	want := System{
		Load1: 0.52, Load5: 1.25, Load15: 2, HaveLoad: true,
		MemTotalBytes: 16303428 << 10, MemAvailableBytes: 12000000 << 10,
		SwapTotalBytes: 2097148 << 10, SwapFreeBytes: 2096060 << 10, HaveMemory: true,
		Pressure: map[string]float64{"cpu": 12.25, "memory": 1.5},
		// stat's cpu0..cpu3: user nice system idle iowait irq softirq.
		CPUs: []CPUTimes{
			{BusyTicks: 2533038 + 72674 + 771179 + 6298, TotalTicks: 2533038 + 72674 + 771179 + 6298 + 11707120 + 4170},
			{BusyTicks: 2533039 + 72674 + 771180 + 6299, TotalTicks: 2533039 + 72674 + 771180 + 6299 + 11707121 + 4171},
			{BusyTicks: 2533038 + 72674 + 771180 + 6299, TotalTicks: 2533038 + 72674 + 771180 + 6299 + 11707121 + 4171},
			{BusyTicks: 2533038 + 72674 + 771180 + 6299, TotalTicks: 2533038 + 72674 + 771180 + 6299 + 11707121 + 4171},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("System() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestSystemParsersRefuseGarbage(t *testing.T) {
	if _, _, _, ok := parseLoadavg([]byte("0.5 x 1\n")); ok {
		t.Error("parseLoadavg accepted a non-number")
	}
	var s System
	parseMeminfo([]byte("MemTotal: 100 kB\nMemAvailable: 50 kB\n"), &s)
	if s.HaveMemory {
		t.Error("meminfo without swap lines reads as complete")
	}
	if _, ok := parsePressureSome([]byte("full avg10=1.00 avg60=0 avg300=0 total=1\n")); ok {
		t.Error("pressure without a some line read as a value")
	}
	// A missing root reads as nothing known, not as zeros.
	if got := (FS{root: "/nonexistent"}).System(); got.HaveLoad || got.HaveMemory || got.Pressure != nil {
		t.Errorf("System of a missing root = %+v", got)
	}
}

// /proc/stat's cpuN lines are each CPU's busy and total ticks; two reads
// give its busy share.
func TestParseCPUTimes(t *testing.T) {
	b := []byte("cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 6 1 3 40 5 1 1 1 0 0\ncpu1 4 0 7 40\ncpu2 x\nintr 1 2\nbtime 1700000000\n")
	got := parseCPUTimes(b)
	want := []CPUTimes{{BusyTicks: 6 + 1 + 3 + 1 + 1 + 1, TotalTicks: 13 + 40 + 5}, {BusyTicks: 11, TotalTicks: 51}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("parseCPUTimes = %+v, want %+v", got, want)
	}
	next := CPUTimes{BusyTicks: want[1].BusyTicks + 30, TotalTicks: want[1].TotalTicks + 40}
	if p, ok := next.BusyPercent(want[1]); !ok || p != 75 {
		t.Errorf("busy %v %v, want 75%%", p, ok)
	}
	if _, ok := want[1].BusyPercent(want[1]); ok {
		t.Error("no time passed, yet a share")
	}
}
