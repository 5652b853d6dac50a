//go:build linux

package frame

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"github.com/procwalk/procwalk/procwalk/session"
)

// codec.go turns frames into bytes and back: a script worker gets its
// parent's frame this way instead of scanning /proc again, and a recorded
// frame can be replayed. The processes, thousands a frame, are written by
// hand (a few hundred nanoseconds each; gob takes several microseconds);
// the rest (snapshot header, sessions, system figures, notes: tens of
// values) goes through one gob stream per Encoder, so that new session
// fields travel without a change here. An Encoder and the Decoder reading
// its output are a pair: the gob stream sends each type once.

// wireVersion is the first byte of an encoded frame; a Decoder refuses
// another.
const wireVersion = 2 // 2: Process.StartStack

// ErrCodec wraps a frame that does not decode.
var ErrCodec = errors.New("frame: malformed encoded frame")

// wireRest is what an encoded frame holds besides its processes.
type wireRest struct {
	Time               time.Time // the snapshot's
	Duration           time.Duration
	Host               procwalk.Host
	Fields, Selected   procwalk.Fields
	Visibility         procwalk.Visibility
	Source, SourceNote string
	Sessions           []session.Session
	System             procwalk.System
	Notes              []string
	Generation         uint64
}

// Encoder writes frames for a Decoder. Not safe for concurrent use.
type Encoder struct {
	buf  []byte
	rest bytes.Buffer
	gob  *gob.Encoder
}

// NewEncoder returns an Encoder whose frames a new Decoder reads, in the
// order they were encoded.
func NewEncoder() *Encoder {
	e := &Encoder{}
	e.gob = gob.NewEncoder(&e.rest)
	return e
}

// Encode returns f as bytes, valid until the next Encode.
func (e *Encoder) Encode(f Frame) ([]byte, error) {
	f.Check()
	s := f.Snapshot
	if s == nil {
		return nil, errors.New("frame: encoding a frame without a snapshot")
	}
	e.rest.Reset()
	err := e.gob.Encode(&wireRest{Time: s.Time, Duration: s.Duration, Host: s.Host, Fields: s.Fields, Selected: s.Selected,
		Visibility: s.Visibility, Source: s.Source, SourceNote: s.SourceNote,
		Sessions: f.Sessions, System: f.System, Notes: f.Notes, Generation: f.Generation})
	if err != nil {
		return nil, fmt.Errorf("frame: encoding sessions: %w", err)
	}
	b := append(e.buf[:0], wireVersion)
	b = binary.AppendUvarint(b, uint64(e.rest.Len()))
	b = append(b, e.rest.Bytes()...)
	b = binary.AppendUvarint(b, uint64(len(s.Procs)))
	for i := range s.Procs {
		b = appendProcess(b, &s.Procs[i])
	}
	e.buf = b
	return b, nil
}

// Decoder reads the frames of one Encoder. Frames it returns are its
// caller's: nothing of them is reused. Not safe for concurrent use.
type Decoder struct {
	in       chunkReader
	gob      *gob.Decoder
	comms    fsio.Interner
	strs     fsio.Interner       // exe, cwd, cgroup paths
	cmdlines map[string][]string // by their bytes, as the Scanner interns them
	cmdBytes int
}

// NewDecoder returns a Decoder of one Encoder's frames.
func NewDecoder() *Decoder {
	d := &Decoder{comms: fsio.Interner{Max: fsio.MaxInterned}, strs: fsio.Interner{Max: fsio.MaxInterned}, cmdlines: map[string][]string{}}
	d.gob = gob.NewDecoder(&d.in)
	return d
}

// Decode returns the frame of b, made elsewhere (Generation is the
// encoder's; ReadMore reads nothing until WithReader).
func (d *Decoder) Decode(b []byte) (f Frame, err error) {
	if len(b) == 0 || b[0] != wireVersion {
		return Frame{}, fmt.Errorf("%w: not version %d", ErrCodec, wireVersion)
	}
	r := wireReader{b: b[1:]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return Frame{}, fmt.Errorf("%w: header", ErrCodec)
	}
	d.in.b = r.b[:n]
	r.b = r.b[n:]
	var rest wireRest
	if err := d.gob.Decode(&rest); err != nil {
		return Frame{}, fmt.Errorf("%w: sessions: %v", ErrCodec, err)
	}
	count := r.uvarint()
	if count > uint64(len(r.b)) { // every process takes more than a byte
		return Frame{}, fmt.Errorf("%w: %d processes in %d bytes", ErrCodec, count, len(r.b))
	}
	procs := make([]procwalk.Process, count)
	for i := range procs {
		d.readProcess(&r, &procs[i])
	}
	if r.err != nil {
		return Frame{}, fmt.Errorf("%w: processes: %v", ErrCodec, r.err)
	}
	s := procwalk.NewSnapshot(rest.Host, rest.Fields, rest.Selected, procs, rest.Visibility)
	s.Time, s.Duration, s.Source, s.SourceNote = rest.Time, rest.Duration, rest.Source, rest.SourceNote
	return Frame{Snapshot: s, Sessions: rest.Sessions, System: rest.System, Notes: rest.Notes, Generation: rest.Generation}, nil
}

// chunkReader is the gob stream: the gob part of each frame in turn.
type chunkReader struct{ b []byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

func (c *chunkReader) ReadByte() (byte, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	b := c.b[0]
	c.b = c.b[1:]
	return b, nil
}

// Process flags, one byte.
const (
	flagKernel = 1 << iota
	flagCmdlineTruncated
	flagReadTimedOut
	flagMeasured
	flagHaveIO
	flagHaveSmaps
)

// appendProcess appends p. Every field of Process is here:
// TestCodecEveryProcessField fails on one left out.
func appendProcess(b []byte, p *procwalk.Process) []byte {
	b = binary.AppendVarint(b, int64(p.ID.PID))
	b = binary.AppendUvarint(b, p.ID.StartTicks)
	b = binary.AppendVarint(b, int64(p.PPID))
	b = binary.AppendVarint(b, int64(p.PGRP))
	b = binary.AppendVarint(b, int64(p.SID))
	b = binary.AppendVarint(b, int64(p.TTY))
	b = appendString(b, p.Comm)
	b = binary.AppendVarint(b, int64(p.Threads))
	b = binary.AppendVarint(b, p.Start.UnixNano())
	b = append(b, p.State)
	b = append(b, flag(p.Kernel, flagKernel)|flag(p.CmdlineTruncated, flagCmdlineTruncated)|flag(p.ReadTimedOut, flagReadTimedOut)|
		flag(p.Rates.Measured, flagMeasured)|flag(p.Rates.HaveIO, flagHaveIO)|flag(p.Rates.HaveSmaps, flagHaveSmaps))
	b = binary.AppendUvarint(b, uint64(p.Read))
	b = binary.AppendUvarint(b, uint64(p.Denied))
	b = binary.AppendUvarint(b, uint64(p.Malformed))
	for _, v := range [...]float64{p.UserCPUSeconds, p.SystemCPUSeconds, p.ChildrenUserCPUSeconds, p.ChildrenSystemCPUSeconds} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	for _, v := range [...]uint64{p.VSizeBytes, p.RSSBytes, p.SharedBytes, p.TextBytes, p.DataBytes, p.StartStack, p.SwapBytes,
		p.VoluntaryCtxSwitches, p.InvoluntaryCtxSwitches,
		p.IO.RChar, p.IO.WChar, p.IO.SyscR, p.IO.SyscW, p.IO.ReadBytes, p.IO.WriteBytes, p.IO.CancelledWriteBytes,
		p.Smaps.RSSBytes, p.Smaps.PSSBytes, p.Smaps.USSBytes, p.Smaps.SwapBytes, p.Smaps.SwapPSSBytes} {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range [...]int{p.RealUID, p.EffectiveUID, p.FDs, p.OOMScore} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(p.Cmdline)))
	for _, a := range p.Cmdline {
		b = appendString(b, a)
	}
	b = appendString(b, p.Exe)
	b = appendString(b, p.Cwd)
	b = binary.AppendUvarint(b, uint64(len(p.Cgroups)))
	for _, c := range p.Cgroups {
		b = binary.AppendVarint(b, int64(c.HierarchyID))
		b = appendString(b, c.Controllers)
		b = appendString(b, c.Path)
	}
	r := &p.Rates
	for _, v := range [...]float64{r.IntervalSeconds, r.CPUPercent, r.ReadBytesPerSecond, r.WriteBytesPerSecond,
		r.RSSGrowthBytesPerMinute, r.PSSGrowthBytesPerMinute, r.USSGrowthBytesPerMinute} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// flag is bit when set, else 0.
func flag(set bool, bit byte) byte {
	if set {
		return bit
	}
	return 0
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readProcess reads what appendProcess wrote into p.
func (d *Decoder) readProcess(r *wireReader, p *procwalk.Process) {
	p.ID.PID = r.int()
	p.ID.StartTicks = r.uvarint()
	p.PPID, p.PGRP, p.SID, p.TTY = r.int(), r.int(), r.int(), r.int()
	p.Comm = d.comms.String(r.bytes())
	p.Threads = r.int()
	p.Start = time.Unix(0, r.varint())
	p.State = r.byte()
	flags := r.byte()
	p.Kernel, p.CmdlineTruncated, p.ReadTimedOut = flags&flagKernel != 0, flags&flagCmdlineTruncated != 0, flags&flagReadTimedOut != 0
	p.Rates.Measured, p.Rates.HaveIO, p.Rates.HaveSmaps = flags&flagMeasured != 0, flags&flagHaveIO != 0, flags&flagHaveSmaps != 0
	p.Read, p.Denied, p.Malformed = procwalk.Fields(r.uvarint()), procwalk.Fields(r.uvarint()), procwalk.Fields(r.uvarint())
	for _, v := range [...]*float64{&p.UserCPUSeconds, &p.SystemCPUSeconds, &p.ChildrenUserCPUSeconds, &p.ChildrenSystemCPUSeconds} {
		*v = r.float()
	}
	for _, v := range [...]*uint64{&p.VSizeBytes, &p.RSSBytes, &p.SharedBytes, &p.TextBytes, &p.DataBytes, &p.StartStack, &p.SwapBytes,
		&p.VoluntaryCtxSwitches, &p.InvoluntaryCtxSwitches,
		&p.IO.RChar, &p.IO.WChar, &p.IO.SyscR, &p.IO.SyscW, &p.IO.ReadBytes, &p.IO.WriteBytes, &p.IO.CancelledWriteBytes,
		&p.Smaps.RSSBytes, &p.Smaps.PSSBytes, &p.Smaps.USSBytes, &p.Smaps.SwapBytes, &p.Smaps.SwapPSSBytes} {
		*v = r.uvarint()
	}
	for _, v := range [...]*int{&p.RealUID, &p.EffectiveUID, &p.FDs, &p.OOMScore} {
		*v = r.int()
	}
	if n := r.uvarint(); n > 0 && r.err == nil {
		start := r.b
		for range n {
			r.bytes()
		}
		if r.err == nil {
			p.Cmdline = d.cmdline(start[:len(start)-len(r.b)], n)
		}
	}
	p.Exe = d.strs.String(r.bytes())
	p.Cwd = d.strs.String(r.bytes())
	if n := r.uvarint(); n > 0 && n <= uint64(len(r.b)) {
		p.Cgroups = make([]procwalk.CgroupLine, n)
		for i := range p.Cgroups {
			c := &p.Cgroups[i]
			c.HierarchyID = r.int()
			c.Controllers = d.strs.String(r.bytes())
			c.Path = d.strs.String(r.bytes())
		}
	} else if n > 0 {
		r.fail()
	}
	rt := &p.Rates
	for _, v := range [...]*float64{&rt.IntervalSeconds, &rt.CPUPercent, &rt.ReadBytesPerSecond, &rt.WriteBytesPerSecond,
		&rt.RSSGrowthBytesPerMinute, &rt.PSSGrowthBytesPerMinute, &rt.USSGrowthBytesPerMinute} {
		*v = r.float()
	}
}

// maxDecodedCmdlineBytes bounds the command lines a Decoder keeps (their
// encoded bytes), as the Scanner bounds its own (maxInternedCmdlineBytes).
const maxDecodedCmdlineBytes = 256 << 10

// cmdline returns the n arguments encoded in enc, the same slice for the
// same bytes: most command lines repeat from frame to frame.
func (d *Decoder) cmdline(enc []byte, n uint64) []string {
	if args, ok := d.cmdlines[string(enc)]; ok {
		return args
	}
	r := wireReader{b: enc}
	args := make([]string, n)
	for i := range args {
		args[i] = string(r.bytes())
	}
	if d.cmdBytes+len(enc) > maxDecodedCmdlineBytes {
		clear(d.cmdlines)
		d.cmdBytes = 0
	}
	d.cmdlines[string(enc)] = args
	d.cmdBytes += len(enc)
	return args
}

// wireReader reads what the append functions wrote; the first error
// sticks and every read after it returns zero.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) fail() {
	if r.err == nil {
		r.err = io.ErrUnexpectedEOF
	}
	r.b = nil
}

func (r *wireReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) int() int { return int(r.varint()) }

func (r *wireReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *wireReader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// bytes returns a length-prefixed string's bytes, aliasing the input.
func (r *wireReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}
