//go:build linux

package procwalk

import "time"

// Clock tells the time. Whatever asks "now" (the time of a scan, which ages
// and rates are measured against) takes one, so that a test fixes it instead
// of depending on today's date.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// OffsetClock runs at the pace of the wall clock from a chosen start: Now
// returns Start plus the (monotonic) time since Base. Tests set Start to a
// fixture's date, so that ages read the same every day while rates, which
// need time to pass between two scans, still measure real intervals.
type OffsetClock struct {
	Start time.Time
	Base  time.Time // the wall-clock moment that reads as Start
}

// NewOffsetClock returns an OffsetClock that reads start now.
func NewOffsetClock(start time.Time) OffsetClock {
	return OffsetClock{Start: start, Base: time.Now()}
}

// Now is Start plus the time elapsed since Base.
func (c OffsetClock) Now() time.Time { return c.Start.Add(time.Since(c.Base)) }
