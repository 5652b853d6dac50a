//go:build linux

package render

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/metric"
)

// json.go is the --json schema: snake_case names, bytes and seconds, and a
// value present only when it was read or measured (an absent rate means "not
// measured", never zero). Field names are stable: add, never rename.

// JSONHost is the host a --json document was read on.
type JSONHost struct {
	BootTime      time.Time `json:"boot_time"`
	ClockTicks    uint64    `json:"clock_ticks"`
	PageSizeBytes uint64    `json:"page_size_bytes"`
	MemTotalBytes uint64    `json:"mem_total_bytes"`
	CPUs          int       `json:"cpus"`
}

// JSONVisibility mirrors procwalk.Visibility: what the snapshot missed.
type JSONVisibility struct {
	Partial      bool           `json:"partial"`
	Listed       int            `json:"listed"`
	Gone         int            `json:"gone"`
	Malformed    int            `json:"malformed"`
	Denied       map[string]int `json:"denied,omitempty"` // field name -> processes
	HidePID      string         `json:"hidepid,omitempty"`
	OthersHidden bool           `json:"others_hidden"`
	TimedOut     int            `json:"timed_out,omitempty"` // processes with a read blocked past the timeout
}

// JSONProcess is one process of a --json document: its members in the
// order NewJSONProcess adds them.
type JSONProcess struct {
	members []jsonMember // in the order written
}

// jsonMember is one key of a JSON object and its value.
type jsonMember struct {
	key   string
	value any
}

// MarshalJSON writes the members in order, with "&", "<" and ">" as they
// are (a command line's "&" is not "\u0026").
func (j JSONProcess) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range j.members {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(m.key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode ends each value with a newline
		b.WriteByte(':')
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type jsonSnapshot struct {
	Time            time.Time      `json:"time"`
	ScanSeconds     float64        `json:"scan_seconds"`
	IntervalSeconds float64        `json:"interval_seconds,omitempty"` // present when rates were sampled
	Host            JSONHost       `json:"host"`
	Visibility      JSONVisibility `json:"visibility"`
	Processes       []JSONProcess  `json:"processes"`
}

// NewJSONVisibility is v for JSON.
func NewJSONVisibility(v procwalk.Visibility) JSONVisibility {
	return JSONVisibility{
		Partial: v.Partial(), Listed: v.Listed, Gone: v.Gone, Malformed: v.Malformed,
		Denied: v.Denied, HidePID: v.HidePID, OthersHidden: v.OthersHidden, TimedOut: v.TimedOut,
	}
}

// NewJSONProcess converts p as seen in s; users names its uid. Its numbers
// are the metric catalogue's, by their catalogue names, each present only
// when it has a value; then the files that were refused or malformed.
func NewJSONProcess(s *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users, metrics []metric.Desc) JSONProcess {
	j := JSONProcess{members: make([]jsonMember, 0, 40)}
	add := func(key string, value any) { j.members = append(j.members, jsonMember{key, value}) }
	add("pid", p.ID.PID)
	add("start_ticks", p.ID.StartTicks) // with pid, names the process for its whole life
	if p.Read&procwalk.FieldStatus != 0 {
		if name, ok := users.LookupName(p.EffectiveUID); ok {
			add("user", name)
		}
	}
	add("state", string(rune(p.State)))
	add("kernel_thread", p.Kernel)
	add("comm", p.Comm)
	if p.Read&procwalk.FieldCmdline != 0 && len(p.Cmdline) > 0 {
		add("cmdline", p.Cmdline)
		if p.CmdlineTruncated {
			add("cmdline_truncated", true)
		}
	}
	add("start_time", p.Start.UTC())
	for i := range metrics {
		d := &metrics[i]
		if d.Name == "pid" {
			continue
		}
		if v, ok := d.Process(s, p); ok {
			add(d.Name, JSONNumber(d, v))
		}
	}
	if p.Denied != 0 {
		add("denied", fieldNames(p.Denied)) // optional files the kernel refused
	}
	if p.Malformed != 0 {
		add("malformed", fieldNames(p.Malformed)) // optional files that did not parse
	}
	return j
}

// JSONNumber is v as JSON writes metric d: whole numbers for integers and
// bytes (per second, per minute), two decimals otherwise, so that JSON
// prints no float noise such as 12.340000000000002.
func JSONNumber(d *metric.Desc, v float64) any {
	switch {
	case d.Integer:
		return int64(v)
	case strings.HasPrefix(d.Unit, "bytes"):
		return math.Round(v)
	}
	return Round(v, 2)
}

// WriteJSONSnapshot writes the processes procs of s as one indented JSON
// object.
func WriteJSONSnapshot(w io.Writer, s *procwalk.Snapshot, procs []*procwalk.Process, users *procwalk.Users) error {
	doc := jsonSnapshot{
		Time:        s.Time.UTC(),
		ScanSeconds: Round(s.Duration.Seconds(), 6),
		Host: JSONHost{
			BootTime: s.Host.BootTime.UTC(), ClockTicks: s.Host.ClockTicks, PageSizeBytes: s.Host.PageSizeBytes,
			MemTotalBytes: s.Host.MemTotalBytes, CPUs: s.Host.CPUs,
		},
		Visibility:      NewJSONVisibility(s.Visibility),
		IntervalSeconds: Round(sampledInterval(s), 3),
		Processes:       make([]JSONProcess, 0, len(procs)),
	}
	metrics := metric.Processes()
	for _, p := range procs {
		doc.Processes = append(doc.Processes, NewJSONProcess(s, p, users, metrics))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a cmdline's "&" stays "&", not "\u0026"
	return enc.Encode(doc)
}

// sampledInterval is the time between the two samples of s's rates, 0 when
// s has none. It is read off any measured process of the whole snapshot, so
// that a filter keeping only new processes still shows it.
func sampledInterval(s *procwalk.Snapshot) float64 {
	for i := range s.Procs {
		if r := s.Procs[i].Rates; r.Measured {
			return r.IntervalSeconds
		}
	}
	return 0
}

// fieldNames lists the names in a non-empty field set: ["io", "smaps"].
func fieldNames(f procwalk.Fields) []string {
	return strings.Split(f.String(), ",")
}

// Ptr is a pointer to a copy of v: an optional JSON number that is set.
func Ptr[T any](v T) *T { return &v }

// Round rounds v to n decimals, so JSON does not print float noise such as
// 12.340000000000002.
func Round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
