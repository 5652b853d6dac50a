//go:build linux

package plugin

import (
	"bytes"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// point is one decoded line, for assertions.
type point struct {
	measurement string
	tags        map[string]string
	fields      map[string]any // int64, float64, bool or string
	time        time.Time
}

// decode parses line protocol strictly, failing the test on any error, and
// checks that every point sits on exactly one physical line.
func decode(t *testing.T, b []byte) []point {
	t.Helper()
	if n := bytes.Count(b, []byte("\n")); len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("batch does not end in a newline (%d newlines): %q", n, b)
	}
	var out []point
	dec := lineprotocol.NewDecoderWithBytes(b)
	for dec.Next() {
		m, err := dec.Measurement()
		if err != nil {
			t.Fatalf("measurement: %v in %q", err, b)
		}
		p := point{measurement: string(m), tags: map[string]string{}, fields: map[string]any{}}
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatalf("tag: %v", err)
			}
			if k == nil {
				break
			}
			p.tags[string(k)] = string(v)
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatalf("field: %v", err)
			}
			if k == nil {
				break
			}
			if _, dup := p.tags[string(k)]; dup {
				t.Errorf("%s: %q is both a tag and a field", p.measurement, k)
			}
			p.fields[string(k)] = v.Interface()
		}
		ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
		if err != nil {
			t.Fatalf("time: %v", err)
		}
		p.time = ts
		out = append(out, p)
	}
	if err := dec.Err(); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if lines := bytes.Count(b, []byte("\n")); lines != len(out) {
		t.Fatalf("%d points on %d lines: a value spilled onto its own line in\n%s", len(out), lines, b)
	}
	return out
}

// only returns the points of one measurement.
func only(ps []point, measurement string) []point {
	var out []point
	for _, p := range ps {
		if p.measurement == measurement {
			out = append(out, p)
		}
	}
	return out
}
