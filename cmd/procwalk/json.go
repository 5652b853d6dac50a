package main

import (
	"encoding/json"
	"io"
	"math"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// json.go is the --json schema: snake_case names, bytes and seconds, and a
// value present only when it was read or measured (an absent rate means "not
// measured", never zero). Field names are stable: add, never rename.

type jsonHost struct {
	BootTime      time.Time `json:"boot_time"`
	ClockTicks    uint64    `json:"clock_ticks"`
	PageSizeBytes uint64    `json:"page_size_bytes"`
	MemTotalBytes uint64    `json:"mem_total_bytes"`
	CPUs          int       `json:"cpus"`
}

// jsonVisibility mirrors procwalk.Visibility: what the snapshot missed.
type jsonVisibility struct {
	Partial      bool           `json:"partial"`
	Listed       int            `json:"listed"`
	Gone         int            `json:"gone"`
	Malformed    int            `json:"malformed"`
	Denied       map[string]int `json:"denied,omitempty"` // field name -> processes
	HidePID      string         `json:"hidepid,omitempty"`
	OthersHidden bool           `json:"others_hidden"`
}

type jsonProcess struct {
	PID              int       `json:"pid"`
	StartTicks       uint64    `json:"start_ticks"` // with pid, names the process for its whole life
	PPID             int       `json:"ppid"`
	PGRP             int       `json:"pgrp"`
	SID              int       `json:"sid"`
	TTY              int       `json:"tty_nr"`
	UID              *int      `json:"uid,omitempty"` // effective uid
	User             string    `json:"user,omitempty"`
	State            string    `json:"state"`
	Kernel           bool      `json:"kernel_thread"`
	Threads          int       `json:"threads"`
	Comm             string    `json:"comm"`
	Cmdline          []string  `json:"cmdline,omitempty"`
	CmdlineTruncated bool      `json:"cmdline_truncated,omitempty"`
	StartTime        time.Time `json:"start_time"`
	AgeSeconds       float64   `json:"age_seconds"`
	CPUUserSeconds   float64   `json:"cpu_user_seconds"`
	CPUSystemSeconds float64   `json:"cpu_system_seconds"`
	RSSBytes         uint64    `json:"rss_bytes"`
	VSizeBytes       uint64    `json:"vsize_bytes"`
	SharedBytes      uint64    `json:"shared_bytes"`
	SwapBytes        *uint64   `json:"swap_bytes,omitempty"`
	PSSBytes         *uint64   `json:"pss_bytes,omitempty"`
	USSBytes         *uint64   `json:"uss_bytes,omitempty"`
	ReadBytes        *uint64   `json:"read_bytes,omitempty"`  // storage reads, reaped children included
	WriteBytes       *uint64   `json:"write_bytes,omitempty"` // storage writes, reaped children included

	CPUPercent              *float64 `json:"cpu_percent,omitempty"` // of one core
	ReadBytesPerSecond      *float64 `json:"read_bytes_per_second,omitempty"`
	WriteBytesPerSecond     *float64 `json:"write_bytes_per_second,omitempty"`
	RSSGrowthBytesPerMinute *float64 `json:"rss_growth_bytes_per_minute,omitempty"`
	PSSGrowthBytesPerMinute *float64 `json:"pss_growth_bytes_per_minute,omitempty"`
	USSGrowthBytesPerMinute *float64 `json:"uss_growth_bytes_per_minute,omitempty"`
	Denied                  []string `json:"denied,omitempty"`    // optional files the kernel refused
	Malformed               []string `json:"malformed,omitempty"` // optional files that did not parse
}

type jsonSnapshot struct {
	Time            time.Time      `json:"time"`
	ScanSeconds     float64        `json:"scan_seconds"`
	IntervalSeconds float64        `json:"interval_seconds,omitempty"` // present when rates were sampled
	Host            jsonHost       `json:"host"`
	Visibility      jsonVisibility `json:"visibility"`
	Processes       []jsonProcess  `json:"processes"`
}

func newJSONVisibility(v procwalk.Visibility) jsonVisibility {
	return jsonVisibility{
		Partial: v.Partial(), Listed: v.Listed, Gone: v.Gone, Malformed: v.Malformed,
		Denied: v.Denied, HidePID: v.HidePID, OthersHidden: v.OthersHidden,
	}
}

// newJSONProcess converts p as seen in s; users names its uid.
func newJSONProcess(s *procwalk.Snapshot, p *procwalk.Process, users *procwalk.Users) jsonProcess {
	j := jsonProcess{
		PID: p.ID.PID, StartTicks: p.ID.StartTicks, PPID: p.PPID, PGRP: p.PGRP, SID: p.SID, TTY: p.TTY,
		State: string(rune(p.State)), Kernel: p.Kernel, Threads: p.Threads, Comm: p.Comm,
		Cmdline: p.Cmdline, CmdlineTruncated: p.CmdlineTruncated,
		StartTime: p.Start.UTC(), AgeSeconds: round(p.Age(s.Time).Seconds(), 2),
		CPUUserSeconds: round(p.UserCPUSeconds, 2), CPUSystemSeconds: round(p.SystemCPUSeconds, 2),
		RSSBytes: p.RSSBytes, VSizeBytes: p.VSizeBytes, SharedBytes: p.SharedBytes,
	}
	if p.Read&procwalk.FieldStatus != 0 {
		uid := p.EffectiveUID
		j.UID = &uid
		j.User, _ = users.LookupName(uid)
	}
	if p.Read&(procwalk.FieldStatus|procwalk.FieldSmaps) != 0 {
		j.SwapBytes = ptr(p.SwapBytes)
	}
	if p.Read&procwalk.FieldSmaps != 0 {
		j.PSSBytes, j.USSBytes = ptr(p.Smaps.PSSBytes), ptr(p.Smaps.USSBytes)
	}
	if p.Read&procwalk.FieldIO != 0 {
		j.ReadBytes, j.WriteBytes = ptr(p.IO.ReadBytes), ptr(p.IO.WriteBytes)
	}
	if r := p.Rates; r.Measured {
		j.CPUPercent = ptr(round(r.CPUPercent, 2))
		j.RSSGrowthBytesPerMinute = ptr(math.Round(r.RSSGrowthBytesPerMinute))
		if r.HaveIO {
			j.ReadBytesPerSecond = ptr(math.Round(r.ReadBytesPerSecond))
			j.WriteBytesPerSecond = ptr(math.Round(r.WriteBytesPerSecond))
		}
		if r.HaveSmaps {
			j.PSSGrowthBytesPerMinute = ptr(math.Round(r.PSSGrowthBytesPerMinute))
			j.USSGrowthBytesPerMinute = ptr(math.Round(r.USSGrowthBytesPerMinute))
		}
	}
	if p.Denied != 0 {
		j.Denied = fieldNames(p.Denied)
	}
	if p.Malformed != 0 {
		j.Malformed = fieldNames(p.Malformed)
	}
	return j
}

// writeJSONSnapshot writes the processes procs of s as one indented JSON
// object.
func writeJSONSnapshot(w io.Writer, s *procwalk.Snapshot, procs []*procwalk.Process, users *procwalk.Users) error {
	doc := jsonSnapshot{
		Time:        s.Time.UTC(),
		ScanSeconds: round(s.Duration.Seconds(), 6),
		Host: jsonHost{
			BootTime: s.Host.BootTime.UTC(), ClockTicks: s.Host.ClockTicks, PageSizeBytes: s.Host.PageSizeBytes,
			MemTotalBytes: s.Host.MemTotalBytes, CPUs: s.Host.CPUs,
		},
		Visibility:      newJSONVisibility(s.Visibility),
		IntervalSeconds: round(sampledInterval(s), 3),
		Processes:       make([]jsonProcess, 0, len(procs)),
	}
	for _, p := range procs {
		doc.Processes = append(doc.Processes, newJSONProcess(s, p, users))
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

func ptr[T any](v T) *T { return &v }

// round rounds v to n decimals, so JSON does not print float noise such as
// 12.340000000000002.
func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
