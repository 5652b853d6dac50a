//go:build linux

package metric

import (
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// Growth smooths uss_growth_bytes_per_minute for a live view: USS per
// minute as the slope of a least-squares line through the last minute's
// samples of each process, where the catalogue's value is the change
// between two gathers. The rate between two refreshes one second apart made
// a shell's fork and reap read as ±40 MB/min; a minute's line reads what
// the memory does. The caller owns it and feeds it every frame (Observe);
// it keeps the processes whose smaps_rollup the last frame read, and
// forgets the others. Not safe for concurrent use.
type Growth struct {
	byID  map[procwalk.ProcID][]growthSample
	frame uint64 // frames observed
	seen  map[procwalk.ProcID]uint64
}

// GrowthWindow is how far back Growth looks; growthStep the least time
// between two samples kept (16 at most per process: bounded memory even
// when every process is read).
const (
	GrowthWindow = 60 * time.Second
	growthStep   = GrowthWindow / 15
)

type growthSample struct {
	at    time.Time
	bytes float64
}

// NewGrowth returns a Growth that has seen no frame.
func NewGrowth() *Growth {
	return &Growth{byID: map[procwalk.ProcID][]growthSample{}, seen: map[procwalk.ProcID]uint64{}}
}

// Observe takes the USS of the processes of snap whose smaps_rollup was
// read, at snap.Time, and forgets the processes not read in snap.
func (g *Growth) Observe(snap *procwalk.Snapshot) {
	g.frame++
	now := snap.Time
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if p.Read&procwalk.FieldSmaps == 0 {
			continue
		}
		g.seen[p.ID] = g.frame
		s := g.byID[p.ID]
		// The newest sample always counts; older ones are thinned to one
		// per growthStep and dropped past the window.
		if n := len(s); n >= 2 && s[n-1].at.Sub(s[n-2].at) < growthStep {
			s = s[:n-1]
		}
		for len(s) > 0 && now.Sub(s[0].at) > GrowthWindow {
			s = s[1:]
		}
		g.byID[p.ID] = append(s, growthSample{now, float64(p.Smaps.USSBytes)})
	}
	for id, f := range g.seen {
		if f != g.frame {
			delete(g.seen, id)
			delete(g.byID, id)
		}
	}
}

// PerMinute is id's USS growth in bytes per minute, the slope of the
// least-squares line through its samples; ok is false before two samples
// a second apart.
func (g *Growth) PerMinute(id procwalk.ProcID) (bytesPerMinute float64, ok bool) {
	return slopePerMinute(g.byID[id])
}

// slopePerMinute is the least-squares slope of samples, per minute.
func slopePerMinute(s []growthSample) (float64, bool) {
	if len(s) < 2 || s[len(s)-1].at.Sub(s[0].at) < time.Second {
		return 0, false
	}
	var sx, sy, sxx, sxy float64
	for _, p := range s {
		x := p.at.Sub(s[0].at).Minutes()
		sx += x
		sy += p.bytes
		sxx += x * x
		sxy += x * p.bytes
	}
	n := float64(len(s))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, false
	}
	return (n*sxy - sx*sy) / d, true
}
