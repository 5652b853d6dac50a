//go:build linux

package plugin

import (
	"fmt"
	"reflect"
	"slices"
)

// Add adds one metric to the batch, with the batch's timestamp. Tag values
// and string fields are sanitized like procwalk's own; an empty tag value
// is dropped. Field values may be any Go integer, float, bool or string. The
// error names the first problem (an empty name or key, a field of another
// type, a tag and a field of the same name, a key named time, no fields),
// and nothing is added then.
func (b *Batch) Add(measurement string, tags map[string]string, fields map[string]any) error {
	if measurement == "" {
		return fmt.Errorf("%w: empty measurement name", ErrEncode)
	}
	if len(fields) == 0 {
		return fmt.Errorf("%w: %s has no fields", ErrEncode, measurement)
	}
	keys := make([]string, 0, len(fields))
	for k, v := range fields {
		if k == "" {
			return fmt.Errorf("%w: %s has a field without a name", ErrEncode, measurement)
		}
		if !fieldKindOK(reflect.ValueOf(v).Kind()) {
			return fmt.Errorf("%w: %s field %q has type %T: want an integer, float, bool or string", ErrEncode, measurement, k, v)
		}
		if k == "time" {
			// InfluxDB drops a field named time without a word.
			return fmt.Errorf("%w: %s has a field named \"time\", which InfluxDB drops: rename it", ErrEncode, measurement)
		}
		if _, clash := tags[k]; clash {
			// InfluxDB stores both, and queries show the tag renamed (k_1).
			return fmt.Errorf("%w: %s has a tag and a field named %q: rename one", ErrEncode, measurement, k)
		}
		keys = append(keys, k)
	}
	if _, ok := tags[""]; ok {
		return fmt.Errorf("%w: %s has a tag without a name", ErrEncode, measurement)
	}
	if _, ok := tags["time"]; ok {
		return fmt.Errorf("%w: %s has a tag named \"time\", which InfluxDB refuses with the whole point: rename it", ErrEncode, measurement)
	}
	slices.Sort(keys) // a stable field order makes batches comparable
	b.w.begin(measurement)
	for k, v := range tags {
		b.w.tag(k, v)
	}
	for _, k := range keys {
		writeAny(b.w, k, reflect.ValueOf(fields[k]))
	}
	b.w.end(b.t)
	return nil
}

func fieldKindOK(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool, reflect.String:
		return true
	}
	return false
}

// writeAny writes a value fieldKindOK accepted: integers as integers
// (unsigned ones above 2^63-1 capped), floats as floats.
func writeAny(w metricWriter, k string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.intField(k, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.intField(k, bytesInt(v.Uint()))
	case reflect.Float32, reflect.Float64:
		w.floatField(k, v.Float())
	case reflect.Bool:
		w.boolField(k, v.Bool())
	case reflect.String:
		w.stringField(k, v.String())
	}
}
