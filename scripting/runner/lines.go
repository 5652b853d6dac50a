//go:build linux

package runner

import (
	"io"
	"time"

	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/scripting"
)

// lines.go is a script's output stream: each metric it emits and each of
// its kills' outcomes, encoded by the host's Encoder.

// Encoder encodes metrics and kill outcomes as lines of the host's
// output (line protocol: the plugin's encoder, which scripting never
// imports).
type Encoder interface {
	// AppendMetric appends one metric's line to dst; a metric it refuses
	// is an error and adds nothing.
	AppendMetric(dst []byte, measurement string, tags map[string]string, fields map[string]any, t time.Time) ([]byte, error)
	// AppendActions appends the lines of kill outcomes to dst.
	AppendActions(dst []byte, events ...kill.ActionEvent) ([]byte, error)
}

// Lines buffers a run's lines, written out whole by Flush, so that a
// reader never sees half a line or half a run's lines. Emits and kill
// events (the Killer reports them from the caller's goroutine) all come
// from the goroutine running the script.
type Lines struct {
	Enc Encoder
	// Alert, when set, is told of each alert a run kept
	// (scripting.AlertMeasurement: watch --on-alert).
	Alert func(scripting.WorkerEmit)
	buf   []byte
}

// Emit encodes one metric; a metric the encoder refuses is left out.
func (l *Lines) Emit(measurement string, tags map[string]string, fields map[string]any, t time.Time) error {
	b, err := l.Enc.AppendMetric(l.buf, measurement, tags, fields, t)
	l.buf = b
	return err
}

// Add adds a metric a run kept (scripting.RunOutput); one the encoder
// refuses was refused when the script emitted it (Checked).
func (l *Lines) Add(m scripting.WorkerEmit) {
	l.Emit(m.Measurement, m.Tags, m.Fields, m.Time)
	if l.Alert != nil && m.Measurement == scripting.AlertMeasurement {
		l.Alert(m)
	}
}

// Action adds the line of a kill's outcome.
func (l *Lines) Action(ev kill.ActionEvent) {
	l.buf, _ = l.Enc.AppendActions(l.buf, ev) // an event the encoder refuses is still logged
}

// Flush writes the buffered lines to w and empties the buffer.
func (l *Lines) Flush(w io.Writer) error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// Checked is a script's Emitter in every mode: a metric the encoder takes
// (checked as it will be encoded) goes on to To (a run's RunOutput or, in
// a worker, the parent); one it refuses is the script's nil, err. The
// line is encoded once more where it is written.
type Checked struct {
	Enc Encoder
	To  func(scripting.WorkerEmit)
	buf []byte
}

func (c *Checked) Emit(measurement string, tags map[string]string, fields map[string]any, t time.Time) error {
	b, err := c.Enc.AppendMetric(c.buf[:0], measurement, tags, fields, t)
	c.buf = b
	if err != nil {
		return err
	}
	c.To(scripting.WorkerEmit{Measurement: measurement, Tags: tags, Fields: fields, Time: t})
	return nil
}
