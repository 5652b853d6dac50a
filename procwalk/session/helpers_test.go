//go:build linux

package session

import (
	"syscall"
	"testing"
	"time"
)

// Copies of two helpers of procwalk's tests (monitor_test.go, bench_test.go):
// test files are not shared between packages.

// stepClock reads t, then t+step, t+2*step ... one step per call.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

// cpuTime is the CPU time this process has used, user plus system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// kind returns the configured kind named name, nil when not configured.
func (g *Grouper) kind(name string) sessionKind {
	for _, k := range g.kinds {
		if k.name() == name {
			return k
		}
	}
	return nil
}
