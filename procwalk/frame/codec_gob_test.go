//go:build linux

package frame

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"io"
	"reflect"
	"testing"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/gobwire"
)

// The part of a frame that is not processes (wireRest) is in gob's
// format, written and read by package gobwire: encodings 1 to 3 were
// written by encoding/gob, whose start-up cost every procwalk process paid.
// These tests hold gobwire to encoding/gob on the frames themselves.

// rests returns the gob part of each of frames, in order: one stream.
func rests(t *testing.T, frames [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	for i, b := range frames {
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || uint64(len(b)-1-k) < n {
			t.Fatalf("frame %d: no gob part", i)
		}
		out = append(out, b[1+k:1+k+int(n)])
	}
	return out
}

// gobRests decodes the gob parts of frames with encoding/gob.
func gobRests(t *testing.T, parts [][]byte) []wireRest {
	t.Helper()
	var in chunkReader
	dec := gob.NewDecoder(&in)
	out := make([]wireRest, len(parts))
	for i, b := range parts {
		in.b = b
		if err := dec.Decode(&out[i]); err != nil {
			t.Fatalf("encoding/gob, frame %d: %v", i, err)
		}
	}
	return out
}

// TestOldFramesReadAsGobReadsThem: the sessions, host and visibility of
// the frames of encodings 1 and 2 (recordings made before) decode as
// encoding/gob decodes them.
func TestOldFramesReadAsGobReadsThem(t *testing.T) {
	for _, name := range []string{"encoding1.frames", "encoding2.frames"} {
		frames := oldFrames(t, name)
		want := gobRests(t, rests(t, frames))
		dec := NewDecoder()
		for i, part := range rests(t, frames) {
			dec.in.b = part
			var got wireRest
			if err := dec.gob.Decode(&got); err != nil {
				t.Fatalf("%s frame %d: %v", name, i, err)
			}
			if len(got.Sessions) == 0 || !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s frame %d: %d sessions, not as encoding/gob reads them", name, i, len(got.Sessions))
			}
		}
	}
}

// TestGobReadsNewFrames: encoding/gob reads the gob part of the frames
// an Encoder writes now, as the Decoder does (a procwalk built with
// encoding/gob still reads a recording made today).
func TestGobReadsNewFrames(t *testing.T) {
	p := sessionFixture(t)
	enc := NewEncoder()
	var frames [][]byte
	for range 3 {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		f.System = procwalk.System{Load1: 1.5, HaveLoad: true, MemTotalBytes: 8 << 30, HaveMemory: true, Pressure: map[string]float64{"memory": 2.5}}
		b, err := enc.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, append([]byte(nil), b...))
	}
	want := gobRests(t, rests(t, frames))
	dec := NewDecoder()
	for i, part := range rests(t, frames) {
		dec.in.b = part
		var got wireRest
		if err := dec.gob.Decode(&got); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if len(got.Sessions) == 0 || len(got.Notes) == 0 || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("frame %d: %d sessions, %d notes, not as encoding/gob reads them", i, len(got.Sessions), len(got.Notes))
		}
	}
}

// BenchmarkRestCodec writes and reads the sessions part of a frame (the
// session fixture's 72 sessions, three gathers' worth) with package
// gobwire and with encoding/gob, in one run:
//
//	go test ./procwalk/frame -run '^$' -bench RestCodec
func BenchmarkRestCodec(b *testing.B) {
	p := sessionFixture(b)
	var rests []wireRest
	for range 3 {
		f, err := p.Gather()
		if err != nil {
			b.Fatal(err)
		}
		s := f.Snapshot
		rests = append(rests, wireRest{Time: s.Time, Duration: s.Duration, Host: s.Host, Fields: s.Fields, Visibility: s.Visibility,
			Source: s.Source, Sessions: f.Sessions, System: f.System, Notes: f.Notes, Generation: f.Generation})
	}
	type codec struct {
		enc func(any) error
		dec func(any) error
	}
	for _, c := range []struct {
		name string
		make func(w io.Writer, r io.Reader) codec
	}{
		{"gobwire", func(w io.Writer, r io.Reader) codec {
			return codec{gobwire.NewEncoder(w).Encode, gobwire.NewDecoder(r).Decode}
		}},
		{"encoding-gob", func(w io.Writer, r io.Reader) codec {
			return codec{gob.NewEncoder(w).Encode, gob.NewDecoder(r).Decode}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			cd := c.make(&buf, &buf)
			for b.Loop() {
				for i := range rests {
					if err := cd.enc(&rests[i]); err != nil {
						b.Fatal(err)
					}
					var got wireRest
					if err := cd.dec(&got); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
