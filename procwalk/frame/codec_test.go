//go:build linux

package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/session"
)

// fillDistinct sets every settable leaf of v to a value of its own, not
// zero: a field the codec leaves out then differs after a round trip.
func fillDistinct(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1700000000+int64(*n), int64(*n))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillDistinct(v.Field(i), n)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillDistinct(s.Index(i), n)
		}
		v.Set(s)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint8:
		v.SetUint(uint64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	default:
		panic("fillDistinct: a field of kind " + v.Kind().String() + ": teach the codec and this test")
	}
}

// TestCodecEveryProcessField round-trips a Process with every field set to
// a value of its own: a field added to Process without the codec fails.
func TestCodecEveryProcessField(t *testing.T) {
	var p procwalk.Process
	n := 0
	fillDistinct(reflect.ValueOf(&p).Elem(), &n)
	p.ID.PID = 42
	s := procwalk.NewSnapshot(procwalk.Host{ClockTicks: 100}, procwalk.FieldStatus, 0, []procwalk.Process{p}, procwalk.Visibility{})
	b, err := NewEncoder().Encode(Frame{Snapshot: s})
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewDecoder().Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Snapshot.Procs[0]; !reflect.DeepEqual(got, p) {
		t.Errorf("round trip of every field:\n got %+v\nwant %+v", got, p)
	}
}

// sessionFixture gathers frames of the session fixture with every kind.
func sessionFixture(t testing.TB) *Pipeline {
	fs, err := procwalk.NewFS("../session/testdata/sessions/proc")
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		CgroupRoot: "/nonexistent",
		Tmux: session.TmuxConfig{
			Sockets: []string{"/tmp/tmux-1000/default", "/tmp/tmux-1000/gone"},
			ListPanes: func(s string) ([]byte, error) {
				if s == "/tmp/tmux-1000/gone" {
					return nil, os.ErrNotExist
				}
				return os.ReadFile("../session/testdata/sessions/tmux/default.txt")
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return New(fs, Config{Grouper: g, System: true, Fields: procwalk.AllFields | procwalk.FieldSmaps,
		Clock: &procwalk.OffsetClock{Start: time.Unix(1800000000, 0), Base: time.Now()}})
}

// TestCodecRoundTrip sends three gathers of a fixture through one Encoder
// and Decoder: the snapshot, its tree, sessions, system figures, notes and
// rates arrive as they left.
func TestCodecRoundTrip(t *testing.T) {
	p := sessionFixture(t)
	enc, dec := NewEncoder(), NewDecoder()
	for i := range 3 {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		// The fixture's host figures are few: those of a real host.
		f.System = procwalk.System{Load1: 1.5, HaveLoad: true, MemTotalBytes: 8 << 30, HaveMemory: true, Pressure: map[string]float64{"memory": 2.5}}
		b, err := enc.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decode(b)
		if err != nil {
			t.Fatalf("frame %d: %v", i+1, err)
		}
		if len(f.Sessions) == 0 || len(f.Notes) == 0 {
			t.Fatalf("the fixture's frame has %d sessions, %d notes: want some of each", len(f.Sessions), len(f.Notes))
		}
		if i > 0 && !f.Snapshot.Procs[0].Rates.Measured {
			t.Fatalf("frame %d has no rates", i+1)
		}
		compareFrames(t, got, f)
	}
}

// compareFrames fails t when got, decoded, differs from want in anything
// a consumer reads.
func compareFrames(t *testing.T, got, want Frame) {
	t.Helper()
	gs, ws := got.Snapshot, want.Snapshot
	if !gs.Time.Equal(ws.Time) || gs.Duration != ws.Duration || gs.Host != ws.Host || gs.Fields != ws.Fields || gs.Selected != ws.Selected ||
		gs.Source != ws.Source || gs.SourceNote != ws.SourceNote || !reflect.DeepEqual(gs.Visibility, ws.Visibility) {
		t.Errorf("snapshot header: got %+v\nwant %+v", *gs, *ws)
	}
	if !reflect.DeepEqual(gs.Procs, ws.Procs) {
		t.Errorf("processes differ:\n got %+v\nwant %+v", gs.Procs, ws.Procs)
	}
	for i := range ws.Procs {
		pid := ws.Procs[i].ID.PID
		if !reflect.DeepEqual(gs.Children(pid), ws.Children(pid)) && len(gs.Children(pid)) != len(ws.Children(pid)) {
			t.Errorf("pid %d: children %v, want %v", pid, gs.Children(pid), ws.Children(pid))
		}
	}
	if !reflect.DeepEqual(normalSessions(got.Sessions), normalSessions(want.Sessions)) {
		t.Errorf("sessions differ:\n got %+v\nwant %+v", got.Sessions, want.Sessions)
	}
	for i := range want.Sessions {
		if g, w := got.Sessions[i].Info(), want.Sessions[i].Info(); g != w {
			t.Errorf("session %s: info %q, want %q", want.Sessions[i].Ref(), g, w)
		}
	}
	if !reflect.DeepEqual(got.System, want.System) || !reflect.DeepEqual(got.Notes, want.Notes) || got.Generation != want.Generation {
		t.Errorf("system, notes, generation: got %+v %q %d, want %+v %q %d", got.System, got.Notes, got.Generation, want.System, want.Notes, want.Generation)
	}
}

// normalSessions are sessions as gob carries them: their exported fields,
// empty maps and slices as nil, times by their instant.
func normalSessions(ss []session.Session) []session.Session {
	out := make([]session.Session, len(ss))
	for i, s := range ss {
		n := session.Session{Kind: s.Kind, Name: s.Name, Roots: s.Roots, Members: s.Members, Totals: s.Totals, Panes: s.Panes, Partial: s.Partial, Agent: s.Agent}
		if len(s.Attrs) > 0 {
			n.Attrs = s.Attrs
		}
		n.Totals.OldestStart = n.Totals.OldestStart.Round(0).UTC()
		out[i] = n
	}
	return out
}

// TestCodecMalformed checks that cuts of an encoded frame (every one in
// its first and last kilobyte, one in 61 between) and a frame of another
// version are errors, never a panic.
func TestCodecMalformed(t *testing.T) {
	p := sessionFixture(t)
	f, err := p.Gather()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewEncoder().Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if n > 1024 && n < len(b)-1024 && n%61 != 0 {
			continue
		}
		if _, err := NewDecoder().Decode(b[:n]); !errors.Is(err, ErrCodec) {
			t.Fatalf("the first %d of %d bytes: %v, want ErrCodec", n, len(b), err)
		}
	}
	other := append([]byte{wireVersion + 1}, b[1:]...)
	if _, err := NewDecoder().Decode(other); !errors.Is(err, ErrCodec) {
		t.Errorf("another version: %v, want ErrCodec", err)
	}
}

// TestCodecHostileCount: a frame whose process count claims a million
// processes, followed by a megabyte of garbage, is refused having
// allocated far less than the million processes would take.
func TestCodecHostileCount(t *testing.T) {
	p := sessionFixture(t)
	f, err := p.Gather()
	if err != nil {
		t.Fatal(err)
	}
	empty := *f.Snapshot
	empty.Procs = nil
	f.Snapshot, f.Sessions = &empty, nil
	b, err := NewEncoder().Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b[len(b)-1] != 0 {
		t.Fatalf("the frame does not end in a count of 0 processes: % x", b[len(b)-8:])
	}
	const claimed = 1 << 20
	hostile := binary.AppendUvarint(bytes.Clone(b[:len(b)-1]), claimed)
	hostile = append(hostile, bytes.Repeat([]byte{0xFF}, claimed)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = NewDecoder().Decode(hostile)
	runtime.ReadMemStats(&after)
	want := uint64(claimed) * uint64(unsafe.Sizeof(procwalk.Process{}))
	if n := after.TotalAlloc - before.TotalAlloc; !errors.Is(err, ErrCodec) || n > want/10 {
		t.Errorf("a count of %d before garbage: err %v, %d bytes allocated (the processes claimed: %d)", claimed, err, n, want)
	}
}

// BenchmarkCodec encodes and decodes a frame of n synthetic processes,
// with command lines, as a script worker's pipe carries each gather.
func BenchmarkCodec(b *testing.B) {
	const n = 2500
	procs := make([]procwalk.Process, n)
	for i := range procs {
		p := &procs[i]
		p.ID = procwalk.ProcID{PID: i + 1, StartTicks: uint64(i) * 7}
		p.PPID, p.Comm, p.State, p.Threads = i/10, fmt.Sprintf("proc%d", i%50), 'S', 1
		p.Start = time.Unix(1700000000, 0)
		p.RSSBytes, p.UserCPUSeconds = uint64(i)<<12, float64(i)/100
		p.Cmdline = []string{"/usr/bin/python3", "-m", fmt.Sprintf("worker%d", i%40)}
		p.Read = procwalk.FieldCmdline
		p.Rates = procwalk.Rates{Measured: true, IntervalSeconds: 10, CPUPercent: 1.5}
	}
	s := procwalk.NewSnapshot(procwalk.Host{ClockTicks: 100}, procwalk.FieldCmdline, 0, procs, procwalk.Visibility{})
	f := Frame{Snapshot: s, Sessions: []session.Session{{Kind: "user", Name: "root", Members: []procwalk.ProcID{{PID: 1}}}}}
	enc, dec := NewEncoder(), NewDecoder()
	b.ReportAllocs()
	bytes := 0
	for b.Loop() {
		out, err := enc.Encode(f)
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(out)
		if _, err := dec.Decode(out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bytes)/n, "bytes/proc")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/proc")
}
