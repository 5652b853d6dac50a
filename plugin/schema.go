//go:build linux

package plugin

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
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
	MeasurementAgent    = "procwalk_agent_status"
	MeasurementProcstat = "procstat"
	MeasurementLookup   = "procstat_lookup"
)

// writeSession writes one procwalk_session line with the session metrics
// of SessionFields; read are the optional files the snapshot read (swap is
// known only from status or smaps).
func writeSession(w metricWriter, s *session.Session, read procwalk.Fields, t time.Time, metrics []metric.Desc) {
	w.begin(MeasurementSession)
	w.tag("kind", s.Kind)
	w.tag("session", s.Name)
	for _, k := range s.TagAttrs() { // pod, unit, agent status ...: the kind says
		w.tag(k, s.Attrs[k])
	}
	for i := range metrics {
		d := &metrics[i]
		if v, ok := d.Session(s, read, t); ok {
			writeMetric(w, d, v)
		}
	}
	if s.Agent != nil {
		// An agent's strings (its transcript's path aside); its numbers are
		// session metrics marked Agent. The status is a field, never a tag:
		// a tag that changes would start new series of the session's
		// counters at every change.
		w.stringField("status", s.Agent.Status)
		for _, attr := range session.AgentStrings() {
			if v := s.Attrs[attr]; v != "" && attr != session.AttrTranscript {
				w.stringField(attr, v)
			}
		}
	}
	w.end(t)
}

// writeAgentStatus writes an agent session's status as a state set, as
// kube-state-metrics writes a pod's phase: one procwalk_agent_status line
// per status, value 1 for the agent's and 0 for the others. Each (agent,
// status) series is written at every gather, so summing the last values
// of a window by status counts every agent once (Prometheus:
// sum by (status) (procwalk_agent_status)).
func writeAgentStatus(w metricWriter, s *session.Session, t time.Time) {
	for _, status := range session.AgentStatuses() {
		w.begin(MeasurementAgent)
		w.tag("kind", s.Kind)
		w.tag("session", s.Name)
		for _, k := range s.TagAttrs() {
			w.tag(k, s.Attrs[k])
		}
		w.tag("status", status)
		v := int64(0)
		if s.Agent.Status == status {
			v = 1
		}
		w.intField("value", v)
		w.typed("value", metric.Gauge)
		w.end(t)
	}
}

// writeProcess writes one procwalk_process line. rank (1 = the top) makes
// each line of a session its own series, so two processes with the same
// name never overwrite each other in InfluxDB, while the number of series
// stays at most Top per session.
func writeProcess(w metricWriter, snap *procwalk.Snapshot, s *session.Session, rank int, p *procwalk.Process, by string, metrics []metric.Desc) {
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
		if v, ok := d.Process(snap, p); ok {
			writeMetric(w, d, v)
		}
	}
	w.end(snap.Time)
}

// writeMetric writes value v of catalogue metric d under its name, typed
// by its kind: a flag as a boolean, a whole number as an integer.
func writeMetric(w metricWriter, d *metric.Desc, v float64) {
	switch {
	case d.Flag:
		w.boolField(d.Name, v != 0)
	case d.Integer:
		w.intField(d.Name, int64(max(min(v, math.MaxInt64), math.MinInt64)))
	default:
		w.floatField(d.Name, v)
	}
	w.typed(d.Name, d.Kind)
}

// ProcessFields are the catalogue's metrics that procwalk_process lines
// carry, each under its catalogue name, and only when it has a value:
// every metric of a process but age_seconds, which a time series has as
// its timestamp minus start_unix_seconds.
func ProcessFields() []metric.Desc {
	return slices.DeleteFunc(metric.Processes(), func(d metric.Desc) bool { return d.Name == "age_seconds" })
}

// SessionFields are the catalogue's metrics that procwalk_session lines
// carry, each under its catalogue name, and only when it has a value:
// every metric of a session but age_seconds (as for processes).
func SessionFields() []metric.Desc {
	return slices.DeleteFunc(metric.Sessions(), func(d metric.Desc) bool { return d.Name == "age_seconds" })
}

// StringField is a string field of a measurement: its name, when it is
// written and what it holds (a measurement's numbers are metrics of the
// catalogue).
type StringField struct{ Name, When, Help string }

// SessionStrings are the string fields of procwalk_session.
func SessionStrings() []StringField {
	return []StringField{
		{"status", "agent sessions", "`working`, `idle`, `blocked`, `ended`, `rate_limited` or `error` (main README, \"Agent status\"); also the state set of `procwalk_agent_status`"},
		{"model", "agent sessions whose transcript names it", "the model of the last turn, e.g. `claude-sonnet-4-5-20250929`"},
		{"session_id", "agent sessions with a transcript", "the agent's own session id"},
		{"title", "agent sessions whose transcript names one", "the session's title: Claude Code's `custom-title`, `ai-title` or `summary` line"},
		{"git_branch", "agent sessions whose transcript says", "the git branch the agent works on (`gitBranch`)"},
		{"agent_version", "agent sessions whose transcript says", "the agent's version, e.g. Claude Code's `2.1.42` or Codex's `cli_version`"},
		{"permission_mode", "Claude Code sessions whose transcript says", "`default`, `acceptEdits`, `plan` or `bypassPermissions` (`permissionMode`)"},
		{"last_error", "agents whose model call failed", "the last failed call's error, e.g. `rate_limit` (`rate_limited` and `error` statuses)"},
	}
}

// ProcessStrings are the string fields of procwalk_process.
func ProcessStrings() []StringField {
	return []StringField{
		{"comm", "always", "the kernel's name (up to 15 bytes), sanitized"},
		{"cmdline", "always (cmdline is read when process_top > 0)", "arguments joined by spaces, sanitized, at most 64 KiB"},
		{"state", "always", "`running`, `sleeping`, `disk_sleep`, `zombie`, `stopped`, `tracing_stop`, `dead`, `idle`, ..."},
	}
}

// SelfField is a field of the procwalk self line: its type (int, float,
// bool or string), unit, kind (none for a string) and meaning, as
// plugin/README.md's table shows it. A test checks that writeSelf writes
// these fields, typed so, and no other.
type SelfField struct {
	Name, Type, Unit string
	Kind             metric.Kind
	Help             string
}

// SelfFields are the fields of the procwalk line, in the order written.
func SelfFields() []SelfField {
	return []SelfField{
		{"gather_seconds", "float", "seconds", metric.Gauge, "the whole gather: scan, sessions, encoding, up to this line"},
		{"scan_seconds", "float", "seconds", metric.Gauge, "the snapshot alone (the /proc scan, or the BPF iterator's read)"},
		{"source", "string", "", 0, "which snapshot source took it: `proc` or `bpf` (the `source` option, `procwalk telegraf --source`)"},
		{"source_note", "string", "", 0, "why that source: `asked for bpf`, `auto: bpf needs root (CAP_SYS_ADMIN) or CAP_BPF and CAP_PERFMON`, `bpf source failed to load: ...; read /proc instead`; and what the BPF source could not do in this gather: `N of M processes hidden from the iterator read from /proc`, `RSS of N processes lacks its per-CPU parts (the shared count alone ...)`"},
		{"processes", "int", "", metric.Gauge, "processes seen"},
		{"processes_listed", "int", "", metric.Gauge, "pid directories listed"},
		{"processes_gone", "int", "", metric.Gauge, "listed but exited mid-scan (normal churn)"},
		{"processes_malformed", "int", "", metric.Gauge, "processes with a file that did not parse"},
		{"processes_timed_out", "int", "", metric.Gauge, "processes with a read that blocked past the read timeout (2 s: a stuck memory-map lock): kept with stat and statm only, or left out when stat or statm blocked"},
		{"partial_reads", "int", "", metric.Gauge, "files the kernel refused (io, smaps of other users' processes without root; hidepid)"},
		{"others_hidden", "bool", "", metric.Gauge, "/proc is mounted hidepid and we are not root: other users' processes may be missing"},
		{"sessions", "int", "", metric.Gauge, "sessions written"},
		{"lines", "int", "", metric.Gauge, "lines written before this one in the batch"},
		{"dropped_lines", "int", "", metric.Gauge, "lines the encoder rejected (0 unless there is a bug)"},
		{"errors", "int", "", metric.Gauge, "partial failures of this gather (a hook's error ...)"},
		{"gathers_skipped", "int", "", metric.Counter, "execd: stdin lines merged into one gather since the start (lines queued while a gather ran are answered by one batch)"},
		{"cpu_time_seconds", "float", "seconds", metric.Counter, "CPU procwalk has used since it started (its `cpu_time_seconds` as a process); in the compiled-in input, Telegraf's process: every plugin it runs"},
		{"max_rss_bytes", "int", "bytes", metric.Gauge, "procwalk's peak resident memory; in the compiled-in input, Telegraf's"},
	}
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
	gauge := func(key string, n int) {
		w.intField(key, int64(n))
		w.typed(key, metric.Gauge)
	}
	w.begin(MeasurementSelf)
	w.tag("schema", st.schema)
	w.floatField("gather_seconds", st.gatherSeconds)
	w.typed("gather_seconds", metric.Gauge)
	w.floatField("scan_seconds", st.scanSeconds)
	w.typed("scan_seconds", metric.Gauge)
	w.stringField("source", st.source)
	if st.note != "" {
		w.stringField("source_note", st.note)
	}
	gauge("processes", st.processes)
	gauge("processes_listed", v.Listed)
	gauge("processes_gone", v.Gone)
	gauge("processes_malformed", v.Malformed)
	gauge("processes_timed_out", v.TimedOut)
	denied := 0
	for _, n := range v.Denied {
		denied += n
	}
	gauge("partial_reads", denied)
	w.boolField("others_hidden", v.OthersHidden)
	w.typed("others_hidden", metric.Gauge)
	gauge("sessions", st.sessions)
	gauge("lines", st.lines)
	gauge("dropped_lines", st.dropped)
	gauge("errors", st.errors)
	w.intField("gathers_skipped", int64(st.skipped))
	w.typed("gathers_skipped", metric.Counter)
	w.floatField("cpu_time_seconds", st.cpuSeconds) // procwalk's own, as a process's
	w.typed("cpu_time_seconds", metric.Counter)
	w.intField("max_rss_bytes", bytesInt(st.maxRSSBytes))
	w.typed("max_rss_bytes", metric.Gauge)
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
