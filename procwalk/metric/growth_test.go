//go:build linux

package metric

import (
	"math"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

func TestSlopePerMinute(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(s float64, b float64) growthSample {
		return growthSample{t0.Add(time.Duration(s * float64(time.Second))), b}
	}
	// A shell that forks and reaps: +4 MiB, back, +4 MiB ... flat in a
	// minute, where the last second's rate read ±240 MiB/min.
	var sawtooth []growthSample
	for i := 0; i <= 60; i += 4 {
		b := float64(4 << 20)
		if i%8 == 4 {
			b += 4 << 20
		}
		sawtooth = append(sawtooth, at(float64(i), b))
	}
	for _, tt := range []struct {
		name    string
		s       []growthSample
		want    float64
		ok      bool
		epsilon float64
	}{
		{"one sample", []growthSample{at(0, 1)}, 0, false, 0},
		{"half a second", []growthSample{at(0, 1), at(0.5, 2)}, 0, false, 0},
		{"a steady 60 MiB/min", []growthSample{at(0, 0), at(30, 30<<20), at(60, 60<<20)}, 60 << 20, true, 1},
		{"fork and reap", sawtooth, 0, true, 1 << 20}, // under 1 MiB/min, not ±240
	} {
		got, ok := slopePerMinute(tt.s)
		if ok != tt.ok || math.Abs(got-tt.want) > tt.epsilon {
			t.Errorf("%s: %.0f, %v; want %.0f ± %.0f, %v", tt.name, got, ok, tt.want, tt.epsilon, tt.ok)
		}
	}
}

// The tracker keeps at most a minute of thinned samples of the processes
// read in the last frame, and forgets the others.
func TestGrowth(t *testing.T) {
	g := NewGrowth()
	id := procwalk.ProcID{PID: 7, StartTicks: 1}
	snap := &procwalk.Snapshot{Procs: []procwalk.Process{{ID: id, Read: procwalk.FieldSmaps}}}
	t0 := time.Unix(1700000000, 0)
	for s := 0; s <= 120; s++ {
		snap.Time = t0.Add(time.Duration(s) * time.Second)
		snap.Procs[0].Smaps.USSBytes = uint64(s) << 20 // 60 MiB/min
		g.Observe(snap)
	}
	if n := len(g.byID[id]); n > 16 {
		t.Errorf("%d samples kept, want at most 16", n)
	}
	if v, ok := g.PerMinute(id); !ok || math.Abs(v-60<<20) > 1 {
		t.Errorf("slope %.0f, %v; want 60 MiB/min", v, ok)
	}
	snap.Procs[0].Read = 0 // off screen
	g.Observe(snap)
	if _, ok := g.PerMinute(id); ok || len(g.byID) != 0 {
		t.Errorf("a process not read still tracked")
	}
}
