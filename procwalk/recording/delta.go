//go:build linux

package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/session"
)

// delta.go keeps most processes and sessions out of most frames: one that
// did not change since the frame before is written as its id (a session:
// its place in that frame) alone, and the reader takes it from that frame.
// Sleeping processes do not change from one second to the next but for the
// interval of their rates, which is the same for every process of a frame
// and written once; nor do the sessions holding only them. At 2,042
// processes and 383 sessions, a frame is 38 KB of processes and 20 KB of
// sessions, compressed.

// Record kinds.
const (
	kindKey   = 'K'
	kindDelta = 'D'
)

// keyEvery is how often a key frame is written: a reader stepping back
// decodes this many frames at most.
const keyEvery = 30

// deltaWriter is a Writer's memory of the frame it wrote last.
type deltaWriter struct {
	last     []procwalk.Process // its processes, by pid, their slices copied
	sessions []session.Session  // its sessions, copied
	byRef    map[string]int     // their index by kind and name
}

// split returns how to write f: a key frame (key asked, or nothing to
// compare with), or a delta: the ids of the processes unchanged since the
// last frame written and the rates' interval (kept, in the delta's
// layout), and f without those processes.
func (d *deltaWriter) split(f frame.Frame, key bool) (kind byte, kept []byte, reduced frame.Frame) {
	if key || d.last == nil {
		return kindKey, nil, f
	}
	interval, ok := commonInterval(f.Snapshot.Procs)
	if !ok {
		return kindKey, nil, f
	}
	var ids []procwalk.ProcID
	changed := make([]procwalk.Process, 0, len(f.Snapshot.Procs)/4)
	j := 0
	for i := range f.Snapshot.Procs {
		p := &f.Snapshot.Procs[i]
		for j < len(d.last) && d.last[j].ID.PID < p.ID.PID {
			j++
		}
		if j < len(d.last) && unchanged(&d.last[j], p) {
			ids = append(ids, p.ID)
			continue
		}
		changed = append(changed, *p)
	}
	// Each session is 0, the next of the frame's changed ones, or 1 + 2i:
	// session i of the frame before, unchanged.
	codes := make([]uint64, len(f.Sessions))
	var sessions []session.Session
	for i := range f.Sessions {
		s := &f.Sessions[i]
		if k, ok := d.byRef[s.Ref()]; ok && sameSession(&d.sessions[k], s) {
			codes[i] = 1 + 2*uint64(k)
			continue
		}
		sessions = append(sessions, *s)
	}
	snap := *f.Snapshot
	snap.Procs = changed
	reduced = f
	reduced.Snapshot = &snap
	reduced.Sessions = sessions
	kept = appendKept(nil, ids, interval)
	kept = binary.AppendUvarint(kept, uint64(len(codes)))
	for _, c := range codes {
		kept = binary.AppendUvarint(kept, c)
	}
	return kindDelta, kept, reduced
}

// wrote remembers the processes and sessions of f, written.
func (d *deltaWriter) wrote(f frame.Frame) {
	last := d.last[:0]
	for _, p := range f.Snapshot.Procs {
		p.Cmdline = slices.Clone(p.Cmdline) // the pipeline's memory is reused
		p.Cgroups = slices.Clone(p.Cgroups)
		last = append(last, p)
	}
	d.last = last
	d.sessions = make([]session.Session, len(f.Sessions))
	d.byRef = make(map[string]int, len(f.Sessions))
	for i := range f.Sessions {
		d.sessions[i] = copyExported(reflect.ValueOf(f.Sessions[i])).Interface().(session.Session)
		d.byRef[f.Sessions[i].Ref()] = i
	}
}

// sameSession reports whether s is old in every exported field (what a
// frame's encoding carries), those added later too.
func sameSession(old, s *session.Session) bool {
	a, b := reflect.ValueOf(*old), reflect.ValueOf(*s)
	for i := range a.NumField() {
		if a.Type().Field(i).IsExported() && !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// copyExported is a deep copy of v's exported fields (what a frame's
// encoding carries): the pipeline reuses the memory of its sessions.
func copyExported(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Struct:
		if isTime(v.Type()) {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(copyExported(v.Field(i)))
			}
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(copyExported(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(copyExported(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out.SetMapIndex(copyExported(iter.Key()), copyExported(iter.Value()))
		}
		return out
	}
	return v // numbers, strings, booleans, arrays of them
}

// commonInterval is the interval of the rates of procs, the same for all
// measured by one Sampler; false when they differ.
func commonInterval(procs []procwalk.Process) (float64, bool) {
	interval, have := 0.0, false
	for i := range procs {
		r := &procs[i].Rates
		if !r.Measured {
			continue
		}
		if have && r.IntervalSeconds != interval {
			return 0, false
		}
		interval, have = r.IntervalSeconds, true
	}
	return interval, true
}

// unchanged reports whether p is old in every field a reader sees, but the
// interval of its rates (the frame's, written once).
func unchanged(old, p *procwalk.Process) bool {
	if old.ID != p.ID || !old.Start.Equal(p.Start) {
		return false
	}
	a, b := *old, *p
	a.Start, b.Start = time.Time{}, time.Time{}
	a.Rates.IntervalSeconds, b.Rates.IntervalSeconds = 0, 0
	// Every field, those added later too: a field left out of the
	// comparison would be recorded stale.
	return reflect.DeepEqual(a, b)
}

// appendKept writes the ids of the unchanged processes (ascending pids, as
// differences) and the rates' interval.
func appendKept(b []byte, ids []procwalk.ProcID, interval float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	last := 0
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id.PID-last))
		b = binary.AppendUvarint(b, id.StartTicks)
		last = id.PID
	}
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(interval))
}

var errKept = errors.New("the ids of the unchanged processes are cut")

// readKept reads what split wrote before the frame: the ids of the
// unchanged processes, the rates' interval, the sessions' codes; and
// returns the rest of b.
func readKept(b []byte) (ids []procwalk.ProcID, interval float64, codes []uint64, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, 0, nil, nil, errKept
	}
	b = b[k:]
	ids = make([]procwalk.ProcID, 0, n)
	pid := 0
	for range n {
		d, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return nil, 0, nil, nil, errKept
		}
		ticks, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 || d > math.MaxInt32 {
			return nil, 0, nil, nil, errKept
		}
		b = b[k1+k2:]
		pid += int(d)
		ids = append(ids, procwalk.ProcID{PID: pid, StartTicks: ticks})
	}
	if len(b) < 8 {
		return nil, 0, nil, nil, errKept
	}
	interval = math.Float64frombits(binary.LittleEndian.Uint64(b))
	b = b[8:]
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, 0, nil, nil, errKept
	}
	b = b[k:]
	codes = make([]uint64, n)
	for i := range codes {
		if codes[i], k = binary.Uvarint(b); k <= 0 {
			return nil, 0, nil, nil, errKept
		}
		b = b[k:]
	}
	return ids, interval, codes, b, nil
}

// rebuild returns the whole frame of a delta: f, decoded, with the
// processes of kept taken from base (the frame before), their rates'
// interval set, and the sessions in codes' order, the unchanged ones from
// base.
func rebuild(f frame.Frame, base frame.Frame, kept []procwalk.ProcID, interval float64, codes []uint64) (frame.Frame, error) {
	s := f.Snapshot
	procs := make([]procwalk.Process, 0, len(kept)+len(s.Procs))
	j := 0
	for _, id := range kept {
		for j < len(base.Snapshot.Procs) && base.Snapshot.Procs[j].ID.PID < id.PID {
			j++
		}
		if j >= len(base.Snapshot.Procs) || base.Snapshot.Procs[j].ID != id {
			return frame.Frame{}, fmt.Errorf("process %s is kept from a frame that does not have it", id)
		}
		p := base.Snapshot.Procs[j]
		if p.Rates.Measured {
			p.Rates.IntervalSeconds = interval
		}
		procs = append(procs, p)
	}
	procs = append(procs, s.Procs...)
	whole := procwalk.NewSnapshot(s.Host, s.Fields, s.Selected, procs, s.Visibility)
	whole.Time, whole.Duration, whole.Source, whole.SourceNote = s.Time, s.Duration, s.Source, s.SourceNote
	var sessions []session.Session
	if len(codes) > 0 {
		sessions = make([]session.Session, 0, len(codes))
	}
	next := 0
	for _, c := range codes {
		switch {
		case c == 0 && next < len(f.Sessions):
			sessions = append(sessions, f.Sessions[next])
			next++
		case c%2 == 1 && (c-1)/2 < uint64(len(base.Sessions)):
			sessions = append(sessions, base.Sessions[(c-1)/2])
		default:
			return frame.Frame{}, fmt.Errorf("session %d of %d is in neither frame", len(sessions)+1, len(codes))
		}
	}
	if next != len(f.Sessions) {
		return frame.Frame{}, fmt.Errorf("%d sessions written, %d placed", len(f.Sessions), next)
	}
	f.Snapshot, f.Sessions = whole, sessions
	return f, nil
}
