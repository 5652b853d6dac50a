//go:build linux

package plugin

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/procwalk/procwalk/procwalk/metric"
)

// writer.go holds the two places a metric can go: line protocol (exec and
// execd modes, hooks) and a Telegraf accumulator (the compiled-in input).
// The schema code writes every measurement once, against metricWriter.

// metricWriter receives metrics one at a time: begin, tags, fields, end. Tag and string values are sanitized by the writer; a tag with
// an empty value is dropped; a float that is NaN or infinite is dropped.
type metricWriter interface {
	begin(measurement string)
	tag(key, value string)
	intField(key string, v int64)
	floatField(key string, v float64)
	stringField(key, v string)
	argsField(key string, args []string) // joined by spaces
	boolField(key string, v bool)
	// typed says the kind of the field key of the current metric: a
	// Telegraf accumulator adds counters with AddCounter, gauges and rates
	// with AddGauge; line protocol has no types.
	typed(key string, k metric.Kind)
	end(t time.Time)
}

// bytesInt converts a byte count for an integer field. Line protocol
// integers are signed; no real byte count reaches 2^63.
func bytesInt(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

type tagKV struct{ key, value string }

// lineWriter encodes line protocol into a buffer it reuses from batch to
// batch. It never uses lax mode: every key and value is checked, and a line
// the encoder rejects is dropped and counted, never half written.
type lineWriter struct {
	enc       lineprotocol.Encoder
	tags      []tagKV // tags of the current line, sent sorted on the first field
	inFields  bool
	lineStart int    // where the current line starts in the buffer
	scratch   []byte // sanitized string field values

	lines   int   // lines written since reset
	dropped int   // lines the encoder rejected since reset
	err     error // first rejection since reset
}

// reset starts a new batch in the same buffer.
func (w *lineWriter) reset() {
	w.enc.Reset()
	w.lines, w.dropped, w.err = 0, 0, nil
}

func (w *lineWriter) bytes() []byte { return w.enc.Bytes() }

func (w *lineWriter) begin(measurement string) {
	w.lineStart = len(w.enc.Bytes())
	w.enc.StartLine(measurement)
	w.tags = w.tags[:0]
	w.inFields = false
}

func (w *lineWriter) tag(key, value string) {
	if w.inFields {
		w.enc.AddTag(key, value) // fails the line: a schema bug, caught by tests
		return
	}
	if !isClean(value, maxTagBytes, true) {
		if value == "" {
			return
		}
		value = string(appendClean(nil, value, maxTagBytes, true)) // rare: odd names only
	}
	for i := range w.tags {
		if w.tags[i].key == key {
			w.tags[i].value = value
			return
		}
	}
	w.tags = append(w.tags, tagKV{key, value})
}

// fields sends the pending tags, in the ascending order line protocol needs.
func (w *lineWriter) fields() {
	if w.inFields {
		return
	}
	w.inFields = true
	slices.SortFunc(w.tags, func(a, b tagKV) int { return cmp.Compare(a.key, b.key) })
	for _, t := range w.tags {
		w.enc.AddTag(t.key, t.value)
	}
}

func (w *lineWriter) intField(key string, v int64) {
	w.fields()
	w.enc.AddField(key, lineprotocol.IntValue(v))
}

func (w *lineWriter) floatField(key string, v float64) {
	if f, ok := lineprotocol.FloatValue(v); ok {
		w.fields()
		w.enc.AddField(key, f)
	}
}

func (w *lineWriter) boolField(key string, v bool) {
	w.fields()
	w.enc.AddField(key, lineprotocol.BoolValue(v))
}

func (w *lineWriter) stringField(key, v string) {
	w.scratch = appendClean(w.scratch[:0], v, maxStringFieldBytes, false)
	w.addScratch(key)
}

func (w *lineWriter) argsField(key string, args []string) {
	w.scratch = appendCmdline(w.scratch[:0], args)
	w.addScratch(key)
}

func (w *lineWriter) addScratch(key string) {
	v, err := lineprotocol.NewValueFromBytes(lineprotocol.String, w.scratch)
	if err != nil {
		return // unreachable: appendClean yields valid UTF-8
	}
	w.fields()
	w.enc.AddField(key, v)
}

func (w *lineWriter) typed(string, metric.Kind) {}

func (w *lineWriter) end(t time.Time) {
	w.fields()
	w.enc.EndLine(t)
	if err := w.enc.Err(); err != nil {
		w.dropped++
		if w.err == nil {
			w.err = err
		}
		// Cut whatever the encoder kept of the line and start the next one
		// from a clean state (a fieldless line would otherwise fail the next).
		w.enc.SetBuffer(w.enc.Bytes()[:w.lineStart])
		return
	}
	w.lines++
}

// accWriter adds each metric to a Telegraf-shaped accumulator. Telegraf may
// keep the maps, so every metric gets its own. A Telegraf metric has one
// type: a line with typed fields is added as up to three metrics of the
// same measurement, tags and time, which InfluxDB merges into one point
// and Prometheus types: its counters (AddCounter), its gauges and rates
// (AddGauge), and the rest, strings (AddFields, untyped: so Prometheus's
// string_as_label never puts them on the numbers' series).
type accWriter struct {
	acc         Accumulator
	measurement string
	tags        map[string]string
	fields      map[string]any
	kinds       map[string]metric.Kind // of the current metric's typed fields
	lines       int
}

func (w *accWriter) begin(measurement string) {
	w.measurement = measurement
	w.tags = make(map[string]string, 4)
	w.fields = make(map[string]any, 16)
}

func (w *accWriter) tag(key, value string) {
	if value == "" {
		return
	}
	if !isClean(value, maxTagBytes, true) {
		value = string(appendClean(nil, value, maxTagBytes, true))
	}
	w.tags[key] = value
}

func (w *accWriter) intField(key string, v int64) { w.fields[key] = v }

func (w *accWriter) floatField(key string, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		w.fields[key] = v
	}
}

func (w *accWriter) boolField(key string, v bool) { w.fields[key] = v }

func (w *accWriter) stringField(key, v string) {
	if !isClean(v, maxStringFieldBytes, false) {
		v = string(appendClean(nil, v, maxStringFieldBytes, false))
	}
	w.fields[key] = v
}

func (w *accWriter) argsField(key string, args []string) {
	w.fields[key] = string(appendCmdline(nil, args))
}

func (w *accWriter) typed(key string, k metric.Kind) {
	if w.kinds == nil {
		w.kinds = make(map[string]metric.Kind)
	}
	w.kinds[key] = k
}

func (w *accWriter) end(t time.Time) {
	if len(w.fields) == 0 {
		w.acc.AddError(fmt.Errorf("%w: %s metric without fields", ErrEncode, w.measurement))
		return
	}
	w.lines++
	if len(w.kinds) == 0 {
		w.acc.AddFields(w.measurement, w.fields, w.tags, t)
		return
	}
	var gauges, counters map[string]any
	for key, k := range w.kinds {
		v, ok := w.fields[key]
		if !ok {
			continue // not written: NaN, say
		}
		delete(w.fields, key)
		if k == metric.Counter {
			if counters == nil {
				counters = make(map[string]any, len(w.kinds))
			}
			counters[key] = v
		} else {
			if gauges == nil {
				gauges = make(map[string]any, len(w.kinds))
			}
			gauges[key] = v
		}
	}
	clear(w.kinds)
	if gauges != nil {
		w.acc.AddGauge(w.measurement, gauges, maps.Clone(w.tags), t)
	}
	if counters != nil {
		w.acc.AddCounter(w.measurement, counters, maps.Clone(w.tags), t)
	}
	if len(w.fields) > 0 {
		w.acc.AddFields(w.measurement, w.fields, w.tags, t)
	}
}
