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
	// meminfo: 16303428, 12000000, 2097148 and 2097148 kB; no io pressure file.
	want := System{
		Load1: 0.52, Load5: 1.25, Load15: 2, HaveLoad: true,
		MemTotalBytes: 16303428 << 10, MemAvailableBytes: 12000000 << 10,
		SwapTotalBytes: 2097148 << 10, SwapFreeBytes: 2097148 << 10, HaveMemory: true,
		Pressure: map[string]float64{"cpu": 12.25, "memory": 1.5},
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
