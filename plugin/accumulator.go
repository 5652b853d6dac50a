package plugin

import (
	"errors"
	"time"
)

// Accumulator is what Input.Gather needs of Telegraf's accumulator. Its
// methods are exactly those of telegraf.Accumulator that can be named without
// importing Telegraf (all but AddMetric and WithTracking, whose types live in
// the telegraf package), so a telegraf.Accumulator satisfies it; the nested
// module plugin/telegraf checks that at compile time.
type Accumulator interface {
	AddFields(measurement string, fields map[string]interface{}, tags map[string]string, t ...time.Time)
	AddGauge(measurement string, fields map[string]interface{}, tags map[string]string, t ...time.Time)
	AddCounter(measurement string, fields map[string]interface{}, tags map[string]string, t ...time.Time)
	AddSummary(measurement string, fields map[string]interface{}, tags map[string]string, t ...time.Time)
	AddHistogram(measurement string, fields map[string]interface{}, tags map[string]string, t ...time.Time)
	SetPrecision(precision time.Duration)
	AddError(err error)
}

// Logger is the part of telegraf.Logger that procwalk uses; telegraf.Logger
// satisfies it, and NewLineLogger writes Telegraf execd's stderr format.
type Logger interface {
	Errorf(format string, args ...interface{})
	Warnf(format string, args ...interface{})
	Infof(format string, args ...interface{})
	Debugf(format string, args ...interface{})
}

// Sentinel errors, wrapped with %w: test them with errors.Is.
var (
	// ErrConfig means an option has a bad value; the message names it.
	ErrConfig = errors.New("bad procwalk plugin option")
	// ErrNothingGathered means no metric could be gathered at all (the
	// /proc root could not be listed). Partial data is not an error.
	ErrNothingGathered = errors.New("nothing could be gathered")
	// ErrEncode means a metric could not be encoded and was dropped.
	ErrEncode = errors.New("metric dropped")
)
