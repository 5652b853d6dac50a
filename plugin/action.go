//go:build linux

package plugin

import (
	"strings"

	"github.com/procwalk/procwalk/procwalk/kill"
	"github.com/procwalk/procwalk/procwalk/session"
)

// writeAction writes one procwalk_action line: the audit record of a signal
// sent, refused or (in a dry run) planned. Its timestamp is the event's.
func writeAction(w metricWriter, e *kill.ActionEvent) {
	w.begin(MeasurementAction)
	w.tag("requester", e.Requester)
	w.tag("outcome", e.Outcome)
	if kind, name, err := session.ParseRef(e.Session); err == nil {
		w.tag("kind", kind) // the same tags as the session's procwalk_session series
		w.tag("session", name)
	} else {
		w.tag("session", e.Session)
	}
	w.intField("pid", int64(e.PID))
	w.intField("start_ticks", bytesInt(e.StartTicks))
	w.stringField("comm", e.Comm)
	if e.Args != "" {
		w.stringField("cmdline", e.Args)
	}
	w.stringField("signals", strings.Join(e.Signals, ","))
	w.stringField("scope", e.Scope)
	if e.Reason != "" {
		w.stringField("reason", e.Reason)
	}
	w.boolField("dry_run", e.DryRun)
	w.intField("rss_bytes", bytesInt(e.RSSBytes))
	if e.PSSBytes > 0 {
		w.intField("pss_bytes", bytesInt(e.PSSBytes))
	}
	if e.GoneSeconds > 0 {
		w.floatField("gone_seconds", e.GoneSeconds)
	}
	w.end(e.Time)
}

// AddAction adds the procwalk_action line of e to the batch.
func (b *Batch) AddAction(e kill.ActionEvent) {
	writeAction(b.w, &e)
}

// AppendActions appends the procwalk_action lines of events to dst, for
// commands that report kills as line protocol. The error names the first
// event the encoder rejected; the others are still appended.
func AppendActions(dst []byte, events ...kill.ActionEvent) ([]byte, error) {
	var w lineWriter
	w.enc.SetBuffer(dst)
	for i := range events {
		writeAction(&w, &events[i])
	}
	return w.bytes(), w.err
}
