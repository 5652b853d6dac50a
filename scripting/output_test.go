//go:build linux

package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk/kill"
)

// A run that prints, logs or emits past its budget is stopped with
// ErrLimit naming the budget, and pcall cannot catch it.
func TestOutputBudgets(t *testing.T) {
	limits := Limits{MaxPrintBytes: 1 << 10, MaxEmitLines: 10, MaxEmitBytes: 2 << 10, MaxStringBytes: 4 << 10}
	for _, c := range []struct{ name, src, msg string }{
		{"print", `while true do print("0123456789") end`, "printed and logged more than its budget of 1.0 KiB of text (--script-print-bytes)"},
		{"log in pcall", `while true do pcall(pw.log, "0123456789") end`, "printed and logged more than its budget of 1.0 KiB"},
		{"alert", `while true do pw.alert{message = "over"} end`, "more than its budget of"},
		{"emit lines", `for i = 1, 11 do pw.emit("m", {}, {v = i}) end`, "emitted more than its budget of 10 metrics (--script-emit-lines)"},
		{"emit bytes", `pw.emit("m", {}, {s = ("x"):rep(3000)})`, "emitted more than its budget of 2.0 KiB of metrics (--script-emit-bytes)"},
		{"emit in pcall", `for i = 1, 100 do pcall(pw.emit, "m", {}, {v = i}) end`, "emitted more than its budget of 10 metrics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.cfg.Limits = limits
			_, err := run(t, w.cfg, "flood.lua", "local pw = require 'procwalk'\n"+c.src, w.in)
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "flood.lua:2:") {
				t.Errorf("got %v, want ErrLimit at flood.lua:2 with %q", err, c.msg)
			}
		})
	}
	// Up to the budget, all is well: 10 metrics.
	w := newWorld(t)
	w.cfg.Limits = limits
	if _, err := run(t, w.cfg, "ok.lua", `local pw = require 'procwalk' for i = 1, 10 do pw.emit("m", {}, {v = i}) end`, w.in); err != nil || len(w.emitter.lines) != 10 {
		t.Errorf("10 metrics: %v, %d emitted", err, len(w.emitter.lines))
	}
}

// RunOutput passes a run's metrics and kills' outcomes on in order when
// it succeeded, only the outcomes when it failed.
func TestRunOutput(t *testing.T) {
	var o RunOutput
	record := func(ok bool) string {
		var got []string
		o.End(ok, func(m WorkerEmit) { got = append(got, m.Measurement) }, func(e kill.ActionEvent) { got = append(got, "action "+e.Comm) })
		return strings.Join(got, ", ")
	}
	fill := func() {
		o.Emit(WorkerEmit{Measurement: "a", Fields: map[string]any{"v": 1.0}, Time: time.Unix(1, 0)})
		o.Action(kill.ActionEvent{Comm: "x"})
		o.Emit(WorkerEmit{Measurement: "b", Fields: map[string]any{"s": "text"}})
	}
	fill()
	if lines, bytes := o.Metrics(); lines != 2 || bytes != MetricBytes("a", nil, map[string]any{"v": 1.0})+MetricBytes("b", nil, map[string]any{"s": "text"}) {
		t.Errorf("Metrics() = %d, %d", lines, bytes)
	}
	if got := record(true); got != "a, action x, b" {
		t.Errorf("a run that succeeded: %s", got)
	}
	fill()
	if got := record(false); got != "action x" {
		t.Errorf("a run that failed: %s", got)
	}
	if got := record(true); got != "" {
		t.Errorf("after End: %s", got)
	}
}
