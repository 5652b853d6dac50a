//go:build linux

package main

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// sessions_json.go is the JSON of procwalk sessions --json and procwalk
// session --json.

// JSON schema: snake_case, bytes and seconds; a value absent when not read
// or not measured. Add fields, never rename.

type jsonProcID struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
}

type jsonSessionTotals struct {
	Procs                   int       `json:"procs"`
	Threads                 int       `json:"threads"`
	Zombies                 int       `json:"zombies"`
	RSSBytes                uint64    `json:"rss_bytes"` // over-counts pages members share
	PSSBytes                *uint64   `json:"pss_bytes,omitempty"`
	USSBytes                *uint64   `json:"uss_bytes,omitempty"`
	SmapsRead               int       `json:"smaps_read"` // members whose PSS/USS is in the sums
	SwapBytes               uint64    `json:"swap_bytes"`
	CPUSeconds              float64   `json:"cpu_seconds"` // members' own, now
	ReadBytes               uint64    `json:"read_bytes"`
	WriteBytes              uint64    `json:"write_bytes"`
	IORead                  int       `json:"io_read"` // members whose IO is in the sums
	CumulativeCPUSeconds    float64   `json:"cumulative_cpu_seconds"`
	CumulativeReadBytes     uint64    `json:"cumulative_read_bytes"`
	CumulativeWriteBytes    uint64    `json:"cumulative_write_bytes"`
	CPUPercent              *float64  `json:"cpu_percent,omitempty"` // of one core
	ReadBytesPerSecond      *float64  `json:"read_bytes_per_second,omitempty"`
	WriteBytesPerSecond     *float64  `json:"write_bytes_per_second,omitempty"`
	RSSGrowthBytesPerMinute *float64  `json:"rss_growth_bytes_per_minute,omitempty"`
	PSSGrowthBytesPerMinute *float64  `json:"pss_growth_bytes_per_minute,omitempty"`
	RatesMeasured           int       `json:"rates_measured"` // members with rates
	OldestStart             time.Time `json:"oldest_start"`
	AgeSeconds              float64   `json:"age_seconds"`
}

type jsonCgroup struct {
	Version          int      `json:"version"`
	MemoryUsageBytes *uint64  `json:"memory_usage_bytes,omitempty"`
	MemoryLimitBytes *uint64  `json:"memory_limit_bytes,omitempty"`
	MemoryLimitPath  string   `json:"memory_limit_cgroup,omitempty"`
	MemoryPercent    *float64 `json:"memory_percent,omitempty"`
	CPUQuotaCores    *float64 `json:"cpu_quota_cores,omitempty"`
	CPUQuotaPath     string   `json:"cpu_quota_cgroup,omitempty"`
	CPUCoresUsed     *float64 `json:"cpu_cores_used,omitempty"`
	CPUQuotaPercent  *float64 `json:"cpu_quota_percent,omitempty"`
	Danger           bool     `json:"danger"`
}

type jsonPane struct {
	Target     string `json:"target"`
	PaneID     string `json:"pane_id"`
	WindowName string `json:"window_name"`
	PID        int    `json:"pid"`
	TTY        string `json:"tty"`
	Cwd        string `json:"cwd"`
	Command    string `json:"command"`
	Dead       bool   `json:"dead"`
}

type jsonSession struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Ref  string `json:"ref"` // KIND:NAME, for procwalk session and kill --session
	// ID is the leader's "PID.STARTTICKS"; RefID is KIND:NAME@ID, which
	// kill --session refuses when the name has passed to another session.
	ID      string            `json:"id,omitempty"`
	RefID   string            `json:"ref_id"`
	Attrs   map[string]any    `json:"attrs"`             // counts and ids as numbers (jsonAttrs)
	Partial bool              `json:"partial,omitempty"` // members may be missing: see notes
	Totals  jsonSessionTotals `json:"totals"`
	// Metrics are the session metric catalogue (session.Metrics)
	// under the names Telegraf and Lua use, each only when it has a value.
	// Totals keeps the names JSON had before the catalogue.
	Metrics map[string]any `json:"metrics"`
	Cgroup  *jsonCgroup    `json:"cgroup,omitempty"`
	Panes   []jsonPane     `json:"panes,omitempty"`
	// Agent is an agent session's status, model and token use: "status",
	// "status_since", "why", "model", "session_id", "transcript",
	// "last_activity" and the session metrics marked Agent.
	Agent   map[string]any `json:"agent,omitempty"`
	Roots   []jsonProcID   `json:"roots"`
	Members []jsonProcID   `json:"members"`
	// Processes is set by procwalk session: each member in full.
	Processes []jsonProcess `json:"processes,omitempty"`
}

type jsonSessions struct {
	Time            time.Time      `json:"time"`
	ScanSeconds     float64        `json:"scan_seconds"`
	IntervalSeconds float64        `json:"interval_seconds,omitempty"`
	Visibility      jsonVisibility `json:"visibility"`
	Notes           []string       `json:"notes"`
	Sessions        []jsonSession  `json:"sessions"`
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
	for _, d := range session.Metrics() {
		v, ok := d.Value(s, read, now)
		switch {
		case !ok:
		case d.Flag:
			out[d.Name] = v != 0
		case d.Integer:
			out[d.Name] = int64(v)
		default:
			out[d.Name] = round(v, 3)
		}
	}
	return out
}

func newJSONSession(now time.Time, read procwalk.Fields, s *session.Session) jsonSession {
	t := s.Totals
	j := jsonSession{Kind: s.Kind, Name: s.Name, Ref: s.Ref(), ID: s.ID(), RefID: s.RefID(), Attrs: jsonAttrs(s), Partial: s.Partial,
		Metrics: jsonMetrics(s, read, now)}
	j.Totals = jsonSessionTotals{
		Procs: t.Procs, Threads: t.Threads, Zombies: t.Zombies, RSSBytes: t.RSSBytes, SmapsRead: t.SmapsRead,
		SwapBytes: t.SwapBytes, CPUSeconds: round(t.CPUSeconds, 2), ReadBytes: t.ReadBytes, WriteBytes: t.WriteBytes,
		IORead: t.IORead, CumulativeCPUSeconds: round(t.CumulativeCPUSeconds, 2),
		CumulativeReadBytes: t.CumulativeReadBytes, CumulativeWriteBytes: t.CumulativeWriteBytes,
		RatesMeasured: t.RatesMeasured, OldestStart: t.OldestStart.UTC(), AgeSeconds: round(now.Sub(t.OldestStart).Seconds(), 2),
	}
	if t.SmapsRead > 0 {
		j.Totals.PSSBytes, j.Totals.USSBytes = ptr(t.PSSBytes), ptr(t.USSBytes)
	}
	if t.RatesMeasured > 0 {
		j.Totals.CPUPercent = ptr(round(t.CPUPercent, 2))
		j.Totals.RSSGrowthBytesPerMinute = ptr(round(t.RSSGrowthBytesPerMinute, 0))
		if t.IORead > 0 {
			j.Totals.ReadBytesPerSecond = ptr(round(t.ReadBytesPerSecond, 0))
			j.Totals.WriteBytesPerSecond = ptr(round(t.WriteBytesPerSecond, 0))
		}
		if t.SmapsRead > 0 {
			j.Totals.PSSGrowthBytesPerMinute = ptr(round(t.PSSGrowthBytesPerMinute, 0))
		}
	}
	if u := t.Cgroup; u != nil {
		c := &jsonCgroup{Version: u.Version, MemoryLimitPath: u.MemoryLimitPath, CPUQuotaPath: u.CPUQuotaPath, Danger: u.Danger}
		if u.HaveMemoryUsage {
			c.MemoryUsageBytes = ptr(u.MemoryUsageBytes)
		}
		if u.MemoryLimitBytes > 0 {
			c.MemoryLimitBytes = ptr(u.MemoryLimitBytes)
			if u.HaveMemoryUsage {
				c.MemoryPercent = ptr(round(u.MemoryPercent, 2))
			}
		}
		if u.CPUQuotaCores > 0 {
			c.CPUQuotaCores = ptr(round(u.CPUQuotaCores, 3))
			if t.RatesMeasured > 0 {
				c.CPUCoresUsed = ptr(round(u.CPUCoresUsed, 3))
				c.CPUQuotaPercent = ptr(round(u.CPUQuotaPercent, 2))
			}
		}
		j.Cgroup = c
	}
	for _, p := range s.Panes {
		j.Panes = append(j.Panes, jsonPane{Target: p.Target, PaneID: p.PaneID, WindowName: p.WindowName, PID: p.PID,
			TTY: p.TTY, Cwd: p.Cwd, Command: p.Command, Dead: p.Dead})
	}
	if a := s.Agent; a != nil {
		j.Agent = newJSONAgent(s, a, j.Metrics)
	}
	j.Roots, j.Members = []jsonProcID{}, []jsonProcID{} // an ended agent has none
	for _, id := range s.Roots {
		j.Roots = append(j.Roots, jsonProcID{id.PID, id.StartTicks})
	}
	for _, id := range s.Members {
		j.Members = append(j.Members, jsonProcID{id.PID, id.StartTicks})
	}
	return j
}

// newJSONAgent is an agent session's agent object: its status and, from
// metrics (jsonMetrics), the numbers of the catalogue marked Agent.
func newJSONAgent(s *session.Session, a *session.AgentState, metrics map[string]any) map[string]any {
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
	for _, d := range session.Metrics() {
		if v, ok := metrics[d.Name]; ok && d.Agent {
			j[d.Name] = v
		}
	}
	return j
}

func newJSONSessions(gd gathered) jsonSessions {
	doc := jsonSessions{
		Time: gd.Snapshot.Time.UTC(), ScanSeconds: round(gd.Snapshot.Duration.Seconds(), 6),
		Visibility: newJSONVisibility(gd.Snapshot.Visibility), Notes: gd.Notes, Sessions: []jsonSession{},
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	for i := range gd.Snapshot.Procs {
		if r := gd.Snapshot.Procs[i].Rates; r.Measured {
			doc.IntervalSeconds = round(r.IntervalSeconds, 3)
			break
		}
	}
	return doc
}

func writeJSONSessions(w io.Writer, gd gathered, sessions []session.Session) error {
	doc := newJSONSessions(gd)
	for i := range sessions {
		gd.pipeline.Grouper().PaneForegrounds(gd.Snapshot, &sessions[i]) // the panes' command and cwd
		doc.Sessions = append(doc.Sessions, newJSONSession(gd.Snapshot.Time, gd.Snapshot.Fields, &sessions[i]))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
