//go:build linux

package render

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// sessions_json.go is the JSON of procwalk sessions --json and procwalk
// session --json.

// JSON schema: snake_case, bytes and seconds; a value absent when not read
// or not measured. Add fields, never rename.

// JSONProcID names a process for its whole life: pid and start ticks.
type JSONProcID struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
}

// JSONCgroup is what a cgroup session's numbers (memory_usage_bytes,
// memory_limit_bytes, cpu_quota_cores ... in metrics) do not say: the
// cgroup version and which cgroups set the limits.
type JSONCgroup struct {
	Version         int    `json:"version"`
	MemoryLimitPath string `json:"memory_limit_cgroup,omitempty"`
	CPUQuotaPath    string `json:"cpu_quota_cgroup,omitempty"`
}

// JSONPane is a tmux pane of a session.
type JSONPane struct {
	Target     string `json:"target"`
	PaneID     string `json:"pane_id"`
	WindowName string `json:"window_name"`
	PID        int    `json:"pid"`
	TTY        string `json:"tty"`
	Cwd        string `json:"cwd"`
	Command    string `json:"command"`
	Dead       bool   `json:"dead"`
}

// JSONSession is one session of a --json document.
type JSONSession struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Ref  string `json:"ref"` // KIND:NAME, for procwalk session and kill --session
	// ID is the leader's "PID.STARTTICKS"; RefID is KIND:NAME@ID, which
	// kill --session refuses when the name has passed to another session.
	ID      string         `json:"id,omitempty"`
	RefID   string         `json:"ref_id"`
	Attrs   map[string]any `json:"attrs"`             // counts and ids as numbers (jsonAttrs)
	Partial bool           `json:"partial,omitempty"` // members may be missing: see notes
	// Metrics are the session's numbers: the metric catalogue's values
	// (metric.Sessions) under the names Telegraf and Lua use, each only
	// when it has a value.
	Metrics map[string]any `json:"metrics"`
	Cgroup  *JSONCgroup    `json:"cgroup,omitempty"`
	Panes   []JSONPane     `json:"panes,omitempty"`
	// Agent is an agent session's status and what its transcript names:
	// "status", "status_since", "why", "model", "session_id", "transcript",
	// "last_activity". Its numbers (tokens, context ...) are in Metrics.
	Agent   map[string]any `json:"agent,omitempty"`
	Roots   []JSONProcID   `json:"roots"`
	Members []JSONProcID   `json:"members"`
	// Processes is set by procwalk session: each member in full.
	Processes []JSONProcess `json:"processes,omitempty"`
}

// JSONSessions is the --json document of sessions.
type JSONSessions struct {
	Time            time.Time      `json:"time"`
	ScanSeconds     float64        `json:"scan_seconds"`
	IntervalSeconds float64        `json:"interval_seconds,omitempty"`
	Visibility      JSONVisibility `json:"visibility"`
	Notes           []string       `json:"notes"`
	Sessions        []JSONSession  `json:"sessions"`
}

// jsonAttrs is a session's attributes for JSON: the counts and ids among
// them as numbers ("panes": 2, "uid": 1000; the kind says which), the rest
// as the strings they are. A value that does not parse stays a string:
// never a made-up 0.
func jsonAttrs(s *session.Session) map[string]any {
	out := make(map[string]any, len(s.Attrs))
	for k, v := range s.Attrs {
		out[k] = v
	}
	for _, k := range s.NumberAttrs() {
		if v, ok := s.Attrs[k]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out
}

// jsonMetrics is s's values of the session metric catalogue, by name: a
// flag as true or false, a count as an integer; absent when not measured.
func jsonMetrics(s *session.Session, read procwalk.Fields, now time.Time) map[string]any {
	out := map[string]any{}
	for _, d := range metric.Sessions() {
		v, ok := d.Session(s, read, now)
		switch {
		case !ok:
		case d.Flag:
			out[d.Name] = v != 0
		case d.Integer:
			out[d.Name] = int64(v)
		default:
			out[d.Name] = Round(v, 3)
		}
	}
	return out
}

// NewJSONSession is s for JSON, its metrics measured at now with the
// fields read.
func NewJSONSession(now time.Time, read procwalk.Fields, s *session.Session) JSONSession {
	j := JSONSession{Kind: s.Kind, Name: s.Name, Ref: s.Ref(), ID: s.ID(), RefID: s.RefID(), Attrs: jsonAttrs(s), Partial: s.Partial,
		Metrics: jsonMetrics(s, read, now)}
	if u := s.Totals.Cgroup; u != nil {
		j.Cgroup = &JSONCgroup{Version: u.Version, MemoryLimitPath: u.MemoryLimitPath, CPUQuotaPath: u.CPUQuotaPath}
	}
	for _, p := range s.Panes {
		j.Panes = append(j.Panes, JSONPane{Target: p.Target, PaneID: p.PaneID, WindowName: p.WindowName, PID: p.PID,
			TTY: p.TTY, Cwd: p.Cwd, Command: p.Command, Dead: p.Dead})
	}
	if a := s.Agent; a != nil {
		j.Agent = newJSONAgent(s, a)
	}
	j.Roots, j.Members = []JSONProcID{}, []JSONProcID{} // an ended agent has none
	for _, id := range s.Roots {
		j.Roots = append(j.Roots, JSONProcID{id.PID, id.StartTicks})
	}
	for _, id := range s.Members {
		j.Members = append(j.Members, JSONProcID{id.PID, id.StartTicks})
	}
	return j
}

// newJSONAgent is an agent session's agent object: its status and the
// strings and times of its transcript.
func newJSONAgent(s *session.Session, a *session.AgentState) map[string]any {
	j := map[string]any{"status": a.Status, "why": a.Why}
	if !a.StatusSince.IsZero() {
		j["status_since"] = a.StatusSince.UTC()
	}
	for _, attr := range session.AgentStrings() {
		if v := s.Attrs[attr]; v != "" {
			j[attr] = v
		}
	}
	if t := a.Transcript; t != nil && !t.LastActivity.IsZero() {
		j["last_activity"] = t.LastActivity.UTC()
	}
	if a.Binding != "" {
		j["binding"] = a.Binding
	}
	if len(a.Candidates) > 0 {
		j["candidates"] = a.Candidates
	}
	if len(a.Skipped) > 0 {
		skipped := make([]map[string]string, 0, len(a.Skipped))
		for _, f := range a.Skipped {
			skipped = append(skipped, map[string]string{"path": f.Path, "why": f.Why})
		}
		j["skipped"] = skipped
		if a.SkippedMore > 0 {
			j["skipped_more"] = a.SkippedMore
		}
	}
	return j
}

// NewJSONSessions is the document of sessions listed from snap, without
// its sessions; notes say what grouping could not do.
func NewJSONSessions(snap *procwalk.Snapshot, notes []string) JSONSessions {
	doc := JSONSessions{
		Time: snap.Time.UTC(), ScanSeconds: Round(snap.Duration.Seconds(), 6),
		Visibility: NewJSONVisibility(snap.Visibility), Notes: notes, Sessions: []JSONSession{},
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	for i := range snap.Procs {
		if r := snap.Procs[i].Rates; r.Measured {
			doc.IntervalSeconds = Round(r.IntervalSeconds, 3)
			break
		}
	}
	return doc
}

// WriteJSONSessions writes the sessions listed from snap (notes: what
// grouping could not do) as one indented JSON object.
func WriteJSONSessions(w io.Writer, snap *procwalk.Snapshot, notes []string, sessions []session.Session) error {
	doc := NewJSONSessions(snap, notes)
	for i := range sessions {
		doc.Sessions = append(doc.Sessions, NewJSONSession(snap.Time, snap.Fields, &sessions[i]))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteJSONSession writes session s of snap (notes: what grouping could
// not do) as one indented JSON object: the visibility, the notes, the
// session and its member processes.
func WriteJSONSession(w io.Writer, snap *procwalk.Snapshot, notes []string, s *session.Session, users *procwalk.Users) error {
	j := NewJSONSession(snap.Time, snap.Fields, s)
	metrics := metric.Processes()
	for _, id := range s.Members {
		if p := snap.Lookup(id); p != nil {
			j.Processes = append(j.Processes, NewJSONProcess(snap, p, users, metrics))
		}
	}
	all := NewJSONSessions(snap, notes)
	doc := struct {
		Time            time.Time      `json:"time"`
		ScanSeconds     float64        `json:"scan_seconds"`
		IntervalSeconds float64        `json:"interval_seconds,omitempty"`
		Visibility      JSONVisibility `json:"visibility"`
		Notes           []string       `json:"notes"`
		Session         JSONSession    `json:"session"`
	}{all.Time, all.ScanSeconds, all.IntervalSeconds, all.Visibility, all.Notes, j}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
