//go:build linux

package frame

import (
	"context"
	"errors"
	"time"
)

// run.go is the one driver: every long-running consumer (telegraf --execd,
// watch, top, guard) is a Trigger saying when to gather and a function
// taking each Frame.

// A Trigger says when the driver gathers next.
type Trigger interface {
	// Wait blocks until the next gather is due and returns true, or
	// returns false when there will be none: the driver stops. It runs on
	// the driver's goroutine, between frames: it may change the pipeline
	// (SetFields, SetGrouper) for the next gather.
	Wait(ctx context.Context) bool
}

// ErrStop, returned by Run's function, stops Run without an error: the
// reader of a daemon's output went away.
var ErrStop = errors.New("stop gathering")

// Run gathers a frame each time t fires and hands it to fn, until t says
// no more, ctx ends or fn returns an error (ErrStop: Run returns nil). A
// gather that failed reaches fn as err, with a zero Frame; fn returning nil
// goes on with the next trigger (/proc may come back). Between frames the
// pipeline's memory policy runs (Memory.Return). A Trigger with a Stop
// method (Every's) is stopped when Run returns.
func (p *Pipeline) Run(ctx context.Context, t Trigger, fn func(f Frame, err error) error) error {
	if s, ok := t.(interface{ Stop() }); ok {
		defer s.Stop()
	}
	for ctx.Err() == nil && t.Wait(ctx) {
		f, err := p.Gather()
		err = fn(f, err)
		p.betweenFrames(f)
		if errors.Is(err, ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Every returns a Trigger that fires every d, the first time at once when
// now is set, else d from the first Wait. Ticks a slow consumer overlaps
// are dropped, not queued (time.Ticker). It stops when ctx ends.
func Every(d time.Duration, now bool) *Ticker { return &Ticker{d: d, now: now} }

// Ticker is Every's Trigger.
type Ticker struct {
	d   time.Duration
	now bool
	t   *time.Ticker
}

func (t *Ticker) Wait(ctx context.Context) bool {
	if t.t == nil {
		t.t = time.NewTicker(t.d)
		if t.now {
			return ctx.Err() == nil
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-t.t.C:
		return true
	}
}

// Stop releases the ticker.
func (t *Ticker) Stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// Count returns t stopped after n fires (n < 1: never stopped by count).
func Count(t Trigger, n int) Trigger {
	if n < 1 {
		return t
	}
	return &counted{Trigger: t, left: n}
}

type counted struct {
	Trigger
	left int
}

func (c *counted) Wait(ctx context.Context) bool {
	if c.left == 0 {
		return false
	}
	c.left--
	return c.Trigger.Wait(ctx)
}

// Stop stops the Trigger counted, when it has a Stop method.
func (c *counted) Stop() {
	if s, ok := c.Trigger.(interface{ Stop() }); ok {
		s.Stop()
	}
}

// Func is a Trigger written as a function.
type Func func(ctx context.Context) bool

func (f Func) Wait(ctx context.Context) bool { return f(ctx) }
