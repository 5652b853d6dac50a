//go:build linux

package scripting

import (
	"fmt"

	lua "github.com/procwalk/procwalk/scripting/internal/_luavm"

	"github.com/procwalk/procwalk/procwalk/kill"
)

// output.go bounds what one run may write: the text of print, pw.log and
// pw.alert (Limits.MaxPrintBytes), and the metrics of pw.emit and pw.alert
// (Limits.MaxEmitLines, MaxEmitBytes). A script that emits or prints
// without end is stopped when it passes them, before the output is sent
// anywhere: a worker never sends more, and its parent, which keeps a run's
// metrics until the run ends (RunOutput), holds at most one run's budget.

// errOutputBudget is the cancel cause of a run past an output budget.
type errOutputBudget struct {
	what   string // "printed", "emitted"
	budget string // "16.0 MiB of text", "20000 metrics"
	flag   string
}

func (e errOutputBudget) Error() string {
	return fmt.Sprintf("the run %s more than its budget of %s (%s)", e.what, e.budget, e.flag)
}

func (e errOutputBudget) Unwrap() error { return ErrLimit }

// outputLimit stops the run: cancelled, so that pcall cannot catch it.
func (r *Runtime) outputLimit(L *lua.LState, err errOutputBudget) {
	r.cancel(err)
	L.RaiseError("%v", err)
}

// spendText counts n bytes of text a run writes (print, log, alert).
func (r *Runtime) spendText(L *lua.LState, n int) {
	r.printed += n
	if r.printed > r.limits.MaxPrintBytes {
		r.outputLimit(L, errOutputBudget{"printed and logged", formatBytes(float64(r.limits.MaxPrintBytes)) + " of text", "--script-print-bytes"})
	}
}

// spendMetric counts one metric of size bytes (MetricBytes) a run emits.
func (r *Runtime) spendMetric(L *lua.LState, size int) {
	r.emitted++
	r.emittedBytes += size
	switch {
	case r.emitted > r.limits.MaxEmitLines:
		r.outputLimit(L, errOutputBudget{"emitted", fmt.Sprintf("%d metrics", r.limits.MaxEmitLines), "--script-emit-lines"})
	case r.emittedBytes > r.limits.MaxEmitBytes:
		r.outputLimit(L, errOutputBudget{"emitted", formatBytes(float64(r.limits.MaxEmitBytes)) + " of metrics", "--script-emit-bytes"})
	}
}

// MetricBytes is what a metric counts against Limits.MaxEmitBytes: about
// its size as line protocol (a number's or boolean's text taken as 24
// bytes, no escapes). A worker's parent counts the metrics it is sent the
// same way.
func MetricBytes(measurement string, tags map[string]string, fields map[string]any) int {
	size := len(measurement) + 20 // the timestamp and separators
	for k, v := range tags {
		size += len(k) + len(v) + 2
	}
	for k, v := range fields {
		size += len(k) + 24
		if s, ok := v.(string); ok {
			size += len(s)
		}
	}
	return size
}

// RunOutput keeps a run's metrics and kills' outcomes, in order, until the
// run ends: a run that succeeds passes all of them on, one that fails only
// its kills' outcomes (what was done to the host is reported; metrics of a
// run that broke a limit or failed are not). Every mode writes a run's
// output through one, in-process or in a worker's parent, so that both
// write the same bytes. Not safe for concurrent use.
type RunOutput struct {
	items        []outputItem
	lines, bytes int // the metrics kept, and their MetricBytes
}

type outputItem struct {
	emit   *WorkerEmit
	action *kill.ActionEvent
}

// Emit keeps a metric.
func (o *RunOutput) Emit(m WorkerEmit) {
	o.items = append(o.items, outputItem{emit: &m})
	o.lines++
	o.bytes += MetricBytes(m.Measurement, m.Tags, m.Fields)
}

// Action keeps a kill's outcome.
func (o *RunOutput) Action(e kill.ActionEvent) { o.items = append(o.items, outputItem{action: &e}) }

// Metrics returns how many metrics are kept and their MetricBytes.
func (o *RunOutput) Metrics() (lines, bytes int) { return o.lines, o.bytes }

// End passes what was kept on, in order, and empties o: everything when
// the run succeeded (ok), only the kills' outcomes otherwise.
func (o *RunOutput) End(ok bool, emit func(WorkerEmit), action func(kill.ActionEvent)) {
	for _, it := range o.items {
		switch {
		case it.action != nil:
			action(*it.action)
		case ok:
			emit(*it.emit)
		}
	}
	clear(o.items)
	o.items, o.lines, o.bytes = o.items[:0], 0, 0
}
