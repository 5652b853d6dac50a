//go:build linux

package top

import (
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// growth.go smooths USS+: USS per minute as the slope of a least-squares
// line through the last minute's samples of each process on screen. The
// rate between two refreshes one second apart made a shell's fork and reap
// read as ±40 MB/min; a minute's line reads what the memory does.

// growthWindow is how far back USS+ looks; growthStep the least time
// between two samples kept (16 at most per process: bounded memory even
// when every process is read, sorted by USS+).
const (
	growthWindow = 60 * time.Second
	growthStep   = growthWindow / 15
)

type growthSample struct {
	at    time.Time
	bytes float64
}

// growthTracker keeps the samples of the processes read in the last frame
// (the rows on screen, or every process when sorting needs it).
type growthTracker struct {
	byID  map[procwalk.ProcID][]growthSample
	frame uint64 // frames observed
	seen  map[procwalk.ProcID]uint64
}

func newGrowthTracker() *growthTracker {
	return &growthTracker{byID: map[procwalk.ProcID][]growthSample{}, seen: map[procwalk.ProcID]uint64{}}
}

// observe takes the USS of the processes of snap whose smaps_rollup was
// read, and forgets the processes not read in this frame.
func (g *growthTracker) observe(snap *procwalk.Snapshot) {
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
		for len(s) > 0 && now.Sub(s[0].at) > growthWindow {
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

// perMinute is id's USS growth in bytes per minute, the slope of the
// least-squares line through its samples; ok is false before two samples
// a second apart.
func (g *growthTracker) perMinute(id procwalk.ProcID) (float64, bool) {
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
