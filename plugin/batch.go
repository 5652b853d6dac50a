package plugin

import (
	"fmt"
	"slices"
)

// Add adds one metric to the batch, with the batch's timestamp. Tag values
// and string fields are sanitized like procwalk's own; an empty tag value
// is dropped. Field values may be any Go integer, float32/64, bool or
// string; an error names the first field of another type, or a metric
// without fields, and nothing is added then.
func (b *Batch) Add(measurement string, tags map[string]string, fields map[string]any) error {
	if measurement == "" {
		return fmt.Errorf("%w: empty measurement name", ErrEncode)
	}
	if len(fields) == 0 {
		return fmt.Errorf("%w: %s has no fields", ErrEncode, measurement)
	}
	keys := make([]string, 0, len(fields))
	for k, v := range fields {
		if !fieldTypeOK(v) {
			return fmt.Errorf("%w: %s field %q has type %T: want an integer, float, bool or string", ErrEncode, measurement, k, v)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable field order makes batches comparable
	b.w.begin(measurement)
	for k, v := range tags {
		b.w.tag(k, v)
	}
	for _, k := range keys {
		writeAny(b.w, k, fields[k])
	}
	b.w.end(b.t)
	return nil
}

func fieldTypeOK(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool, string:
		return true
	}
	return false
}

func writeAny(w metricWriter, k string, v any) {
	switch v := v.(type) {
	case int:
		w.intField(k, int64(v))
	case int8:
		w.intField(k, int64(v))
	case int16:
		w.intField(k, int64(v))
	case int32:
		w.intField(k, int64(v))
	case int64:
		w.intField(k, v)
	case uint:
		w.intField(k, bytesInt(uint64(v)))
	case uint8:
		w.intField(k, int64(v))
	case uint16:
		w.intField(k, int64(v))
	case uint32:
		w.intField(k, int64(v))
	case uint64:
		w.intField(k, bytesInt(v))
	case float32:
		w.floatField(k, float64(v))
	case float64:
		w.floatField(k, v)
	case bool:
		w.boolField(k, v)
	case string:
		w.stringField(k, v)
	}
	// Other types never reach here: Add checks every value with fieldTypeOK.
}
