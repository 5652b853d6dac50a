//go:build linux

package plugin

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// schema.go maps a gather onto the procwalk measurements. README.md in this
// directory documents every tag and field; a field's type never changes
// (bytes and counts are integers, rates, percentages and seconds floats),
// and a field that cannot be known is left out, never written as zero.

// Measurement names.
const (
	MeasurementSession  = "procwalk_session"
	MeasurementProcess  = "procwalk_process"
	MeasurementSelf     = "procwalk"
	MeasurementAction   = "procwalk_action"
	MeasurementProcstat = "procstat"
	MeasurementLookup   = "procstat_lookup"
)

// writeSession writes one procwalk_session line with the session metrics
// of sessionFields; read are the optional files the snapshot read (swap is
// known only from status or smaps).
func writeSession(w metricWriter, s *session.Session, read procwalk.Fields, t time.Time, metrics []session.MetricDesc) {
	w.begin(MeasurementSession)
	w.tag("kind", s.Kind)
	w.tag("session", s.Name)
	for _, k := range s.TagAttrs() { // pod, unit, agent status ...: the kind says
		w.tag(k, s.Attrs[k])
	}
	for i := range metrics {
		d := &metrics[i]
		v, ok := d.Value(s, read, t)
		switch {
		case !ok:
		case d.Flag:
			w.boolField(d.Name, v != 0)
		case d.Integer:
			w.intField(d.Name, int64(max(min(v, math.MaxInt64), math.MinInt64)))
		default:
			w.floatField(d.Name, v)
		}
		if d.Name == "rss_growth_bytes_per_minute" && ok {
			// The first landing's name for it, kept for the dashboards
			// that use it (README, "Metric names").
			w.floatField("growth_bytes_per_minute", v)
		}
	}
	if s.Agent != nil {
		// An agent's strings (its transcript's path aside); its numbers
		// are session metrics marked Agent.
		for _, attr := range session.AgentStrings() {
			if v := s.Attrs[attr]; v != "" && attr != session.AttrTranscript {
				w.stringField(attr, v)
			}
		}
	}
	w.end(t)
}

// writeProcess writes one procwalk_process line. rank (1 = the top) makes
// each line of a session its own series, so two processes with the same
// name never overwrite each other in InfluxDB, while the number of series
// stays at most Top per session.
func writeProcess(w metricWriter, snap *procwalk.Snapshot, s *session.Session, rank int, p *procwalk.Process, by string, metrics []procwalk.MetricDesc) {
	w.begin(MeasurementProcess)
	w.tag("kind", s.Kind)
	w.tag("session", s.Name)
	w.tag("rank", strconv.Itoa(rank)) // no allocation below 100
	w.tag("by", by)
	w.stringField("comm", p.Comm)
	if p.Read&procwalk.FieldCmdline != 0 {
		w.argsField("cmdline", p.Cmdline)
	}
	w.stringField("state", stateString(p.State))
	for i := range metrics {
		d := &metrics[i]
		v, ok := d.Value(snap, p)
		switch {
		case !ok:
		case d.Integer:
			w.intField(d.Name, int64(max(min(v, math.MaxInt64), math.MinInt64)))
		default:
			w.floatField(d.Name, v)
		}
	}
	w.end(snap.Time)
}

// processFields are the catalogue's metrics that procwalk_process lines
// carry, each under its catalogue name, and only when it has a value.
func processFields() []procwalk.MetricDesc {
	var out []procwalk.MetricDesc
	for _, name := range []string{"pid", "ppid", "start_unix_seconds", "threads", "rss_bytes", "vsize_bytes",
		"swap_bytes", "pss_bytes", "uss_bytes", "cpu_time_seconds", "read_bytes", "write_bytes",
		"cpu_percent", "rss_growth_bytes_per_minute", "read_bytes_per_second", "write_bytes_per_second"} {
		d, _ := procwalk.LookupMetric(name)
		out = append(out, d)
	}
	return out
}

// sessionFields are the session catalogue's metrics that procwalk_session
// lines carry, each under its catalogue name, and only when it has a value:
// all but age_seconds, which a time series has as its timestamp minus
// oldest_start_unix_seconds.
func sessionFields() []session.MetricDesc {
	return slices.DeleteFunc(session.Metrics(), func(d session.MetricDesc) bool { return d.Name == "age_seconds" })
}

// selfStats is what a gather knows about itself.
type selfStats struct {
	schema        string
	gatherSeconds float64 // the whole gather: scan, grouping, encoding
	scanSeconds   float64
	sessions      int
	lines         int // lines written before the self line
	dropped       int // lines the encoder rejected
	errors        int // errors reported for this gather (AddError or logged)
	cpuSeconds    float64
	maxRSSBytes   uint64
	visibility    procwalk.Visibility
	processes     int
	skipped       int    // gathers skipped since the start: stdin lines merged into one gather
	source, note  string // which snapshot source ran, and why
}

func writeSelf(w metricWriter, st *selfStats, t time.Time) {
	v := &st.visibility
	w.begin(MeasurementSelf)
	w.tag("schema", st.schema)
	w.floatField("gather_seconds", st.gatherSeconds)
	w.floatField("scan_seconds", st.scanSeconds)
	w.stringField("source", st.source)
	if st.note != "" {
		w.stringField("source_note", st.note)
	}
	w.intField("processes", int64(st.processes))
	w.intField("processes_listed", int64(v.Listed))
	w.intField("processes_gone", int64(v.Gone))
	w.intField("processes_malformed", int64(v.Malformed))
	w.intField("processes_timed_out", int64(v.TimedOut))
	denied := 0
	for _, n := range v.Denied {
		denied += n
	}
	w.intField("partial_reads", int64(denied))
	w.boolField("others_hidden", v.OthersHidden)
	w.intField("sessions", int64(st.sessions))
	w.intField("lines", int64(st.lines))
	w.intField("dropped_lines", int64(st.dropped))
	w.intField("errors", int64(st.errors))
	w.intField("gathers_skipped", int64(st.skipped))
	w.floatField("cpu_seconds", st.cpuSeconds)
	w.intField("max_rss_bytes", bytesInt(st.maxRSSBytes))
	w.end(t)
}

// stateString names a process state letter (proc_pid_stat(5)).
func stateString(s byte) string {
	switch s {
	case 'R':
		return "running"
	case 'S':
		return "sleeping"
	case 'D':
		return "disk_sleep"
	case 'Z':
		return "zombie"
	case 'T':
		return "stopped"
	case 't':
		return "tracing_stop"
	case 'X', 'x':
		return "dead"
	case 'I':
		return "idle"
	case 'K':
		return "wakekill"
	case 'W':
		return "waking"
	case 'P':
		return "parked"
	}
	return "unknown"
}
