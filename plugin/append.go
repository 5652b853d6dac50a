//go:build linux

package plugin

import "time"

// AppendMetric appends one metric to dst as a line of line protocol with
// timestamp t, checked and sanitized as Batch.Add does (for commands that
// write a script's metrics without a gather, such as procwalk run). A
// metric Add refuses, or the encoder rejects, is left out and named by the
// error; dst then ends as it was.
func AppendMetric(dst []byte, measurement string, tags map[string]string, fields map[string]any, t time.Time) ([]byte, error) {
	var w lineWriter
	w.enc.SetBuffer(dst)
	b := Batch{w: &w, t: t}
	if err := b.Add(measurement, tags, fields); err != nil {
		return dst, err
	}
	return w.bytes(), w.err
}
