//go:build linux

package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/gobwire"
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
// its output are a pair: the gob stream sends each type once. The stream
// is gob's format written and read by package gobwire: encoding/gob's
// start-up cost every procwalk process, and recordings of encodings 1 to
// 3, written with it, read the same (TestOldFramesReadAsGobReadsThem).

// wireVersion is the first byte of an encoded frame: the encoding an
// Encoder writes. A Decoder reads it and every version down to
// oldestWireVersion (recordings made before stay readable) and refuses
// another. Versions: 1 every field of a process in a fixed order, a
// session's members in the gob stream (codec_v1.go); 2 the same with
// Process.StartStack after DataBytes; 3 a process's non-zero fields and a
// mask, members and roots written by hand.
const (
	wireVersion       = 3
	oldestWireVersion = 1
)

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
	gob  *gobwire.Encoder
	// sessions are the frame's, shallow copies without their members,
	// which are written by hand (thousands a frame).
	sessions []session.Session
}

// NewEncoder returns an Encoder whose frames a new Decoder reads, in the
// order they were encoded.
func NewEncoder() *Encoder {
	e := &Encoder{}
	e.gob = gobwire.NewEncoder(&e.rest)
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
	e.sessions = append(e.sessions[:0], f.Sessions...)
	for i := range e.sessions {
		e.sessions[i].Members, e.sessions[i].Roots = nil, nil
	}
	err := e.gob.Encode(&wireRest{Time: s.Time, Duration: s.Duration, Host: s.Host, Fields: s.Fields, Selected: s.Selected,
		Visibility: s.Visibility, Source: s.Source, SourceNote: s.SourceNote,
		Sessions: e.sessions, System: f.System, Notes: f.Notes, Generation: f.Generation})
	clear(e.sessions) // hold nothing of the frame
	if err != nil {
		return nil, fmt.Errorf("frame: encoding sessions: %w", err)
	}
	b := append(e.buf[:0], wireVersion)
	b = binary.AppendUvarint(b, uint64(e.rest.Len()))
	b = append(b, e.rest.Bytes()...)
	for i := range f.Sessions {
		b = appendIDs(b, f.Sessions[i].Members)
		b = appendIDs(b, f.Sessions[i].Roots)
	}
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
	gob      *gobwire.Decoder
	comms    fsio.Interner
	strs     fsio.Interner       // exe, cwd, cgroup paths
	cmdlines map[string][]string // by their bytes, as the Scanner interns them
	cmdBytes int
}

// NewDecoder returns a Decoder of one Encoder's frames.
func NewDecoder() *Decoder {
	d := &Decoder{comms: fsio.Interner{Max: fsio.MaxInterned}, strs: fsio.Interner{Max: fsio.MaxInterned}, cmdlines: map[string][]string{}}
	d.gob = gobwire.NewDecoder(&d.in)
	return d
}

// Decode returns the frame of b, made elsewhere (Generation is the
// encoder's; ReadMore reads nothing until WithReader).
func (d *Decoder) Decode(b []byte) (f Frame, err error) {
	if len(b) == 0 || b[0] < oldestWireVersion || b[0] > wireVersion {
		return Frame{}, fmt.Errorf("%w: not a version from %d to %d", ErrCodec, oldestWireVersion, wireVersion)
	}
	version := b[0]
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
	readProcess := d.readProcess
	if version < 3 {
		// Members and roots came with the gob stream.
		readProcess = func(r *wireReader, p *procwalk.Process) { d.readProcessV1(r, p, version == 2) }
	} else {
		for i := range rest.Sessions {
			ss := &rest.Sessions[i]
			ss.Members, ss.Roots = r.ids(), r.ids()
		}
	}
	count := r.uvarint()
	if count > uint64(len(r.b)) { // every process takes more than a byte
		return Frame{}, fmt.Errorf("%w: %d processes in %d bytes", ErrCodec, count, len(r.b))
	}
	// A damaged or hostile count (a recording is anyone's file) gets the
	// storage of presizeProcs processes at most before they are read: a
	// byte on the wire is hundreds in memory.
	procs := make([]procwalk.Process, min(count, presizeProcs))
	for i := range count {
		if i == uint64(len(procs)) {
			procs = append(procs, procwalk.Process{})
		}
		readProcess(&r, &procs[i])
		if r.err != nil {
			break
		}
	}
	if r.err != nil {
		return Frame{}, fmt.Errorf("%w: processes: %v", ErrCodec, r.err)
	}
	s := procwalk.NewSnapshot(rest.Host, rest.Fields, rest.Selected, procs, rest.Visibility)
	s.Time, s.Duration, s.Source, s.SourceNote = rest.Time, rest.Duration, rest.Source, rest.SourceNote
	return Frame{Snapshot: s, Sessions: rest.Sessions, System: rest.System, Notes: rest.Notes, Generation: rest.Generation}, nil
}

// presizeProcs is how many processes a frame's count may claim before
// they are read (about 8 MB): more than most hosts run.
const presizeProcs = 16384

// appendIDs appends ids, in ascending pid order (a session's members and
// roots): their count, then each pid as the difference from the one
// before and its start ticks.
func appendIDs(b []byte, ids []procwalk.ProcID) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	last := 0
	for _, id := range ids {
		b = binary.AppendVarint(b, int64(id.PID-last))
		b = binary.AppendUvarint(b, id.StartTicks)
		last = id.PID
	}
	return b
}

// ids reads what appendIDs wrote; nil for none.
func (r *wireReader) ids() []procwalk.ProcID {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.b)) {
		if n > 0 {
			r.fail()
		}
		return nil
	}
	ids := make([]procwalk.ProcID, n)
	last := 0
	for i := range ids {
		last += r.int()
		ids[i] = procwalk.ProcID{PID: last, StartTicks: r.uvarint()}
	}
	return ids
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

// A process is its pid and start ticks, then a mask saying which of its
// other fields are not zero, then those fields in the order of the mask's
// bits (processFields): most of a process's counters are zero (a sleeping
// shell's IO, a rate not measured), and a field left out costs a bit.
// Integers are varints, floats the varint of their bits byte-reversed (as
// gob writes them: the exponent's bytes first, so round numbers are short).

// processFields are a process's fields after its ID: ints, uints, floats
// and the text, each with a bit of the mask in this order.
type processFields struct {
	ints   [10]int64
	uints  [26]uint64
	floats [11]float64
}

// Bits of the mask after the numbers: the text fields.
const (
	bitComm = len(processFields{}.ints) + len(processFields{}.uints) + len(processFields{}.floats) + iota
	bitCmdline
	bitExe
	bitCwd
	bitCgroups
)

// fieldsOf gathers p's numbers. Every field of Process is here or in the
// text: TestCodecEveryProcessField fails on one left out.
func fieldsOf(p *procwalk.Process) processFields {
	r := &p.Rates
	return processFields{
		ints: [...]int64{int64(p.PPID), int64(p.PGRP), int64(p.SID), int64(p.TTY), int64(p.Threads), p.Start.UnixNano(),
			int64(p.RealUID), int64(p.EffectiveUID), int64(p.FDs), int64(p.OOMScore)},
		uints: [...]uint64{uint64(p.State), uint64(flag(p.Kernel, flagKernel) | flag(p.CmdlineTruncated, flagCmdlineTruncated) | flag(p.ReadTimedOut, flagReadTimedOut) |
			flag(r.Measured, flagMeasured) | flag(r.HaveIO, flagHaveIO) | flag(r.HaveSmaps, flagHaveSmaps)),
			uint64(p.Read), uint64(p.Denied), uint64(p.Malformed),
			p.VSizeBytes, p.RSSBytes, p.SharedBytes, p.TextBytes, p.DataBytes, p.SwapBytes, p.VoluntaryCtxSwitches, p.InvoluntaryCtxSwitches,
			p.IO.RChar, p.IO.WChar, p.IO.SyscR, p.IO.SyscW, p.IO.ReadBytes, p.IO.WriteBytes, p.IO.CancelledWriteBytes,
			p.Smaps.RSSBytes, p.Smaps.PSSBytes, p.Smaps.USSBytes, p.Smaps.SwapBytes, p.Smaps.SwapPSSBytes, p.StartStack},
		floats: [...]float64{p.UserCPUSeconds, p.SystemCPUSeconds, p.ChildrenUserCPUSeconds, p.ChildrenSystemCPUSeconds,
			r.IntervalSeconds, r.CPUPercent, r.ReadBytesPerSecond, r.WriteBytesPerSecond,
			r.RSSGrowthBytesPerMinute, r.PSSGrowthBytesPerMinute, r.USSGrowthBytesPerMinute},
	}
}

// setFields sets p's numbers from f.
func setFields(p *procwalk.Process, f *processFields) {
	i, u, x := &f.ints, &f.uints, &f.floats
	p.PPID, p.PGRP, p.SID, p.TTY, p.Threads = int(i[0]), int(i[1]), int(i[2]), int(i[3]), int(i[4])
	p.Start = time.Unix(0, i[5])
	p.RealUID, p.EffectiveUID, p.FDs, p.OOMScore = int(i[6]), int(i[7]), int(i[8]), int(i[9])
	p.State = byte(u[0])
	flags := u[1]
	p.Kernel, p.CmdlineTruncated, p.ReadTimedOut = flags&flagKernel != 0, flags&flagCmdlineTruncated != 0, flags&flagReadTimedOut != 0
	r := &p.Rates
	r.Measured, r.HaveIO, r.HaveSmaps = flags&flagMeasured != 0, flags&flagHaveIO != 0, flags&flagHaveSmaps != 0
	p.Read, p.Denied, p.Malformed = procwalk.Fields(u[2]), procwalk.Fields(u[3]), procwalk.Fields(u[4])
	p.VSizeBytes, p.RSSBytes, p.SharedBytes, p.TextBytes, p.DataBytes, p.SwapBytes = u[5], u[6], u[7], u[8], u[9], u[10]
	p.VoluntaryCtxSwitches, p.InvoluntaryCtxSwitches = u[11], u[12]
	p.IO = procwalk.IO{RChar: u[13], WChar: u[14], SyscR: u[15], SyscW: u[16], ReadBytes: u[17], WriteBytes: u[18], CancelledWriteBytes: u[19]}
	p.Smaps = procwalk.SmapsRollup{RSSBytes: u[20], PSSBytes: u[21], USSBytes: u[22], SwapBytes: u[23], SwapPSSBytes: u[24]}
	p.StartStack = u[25]
	p.UserCPUSeconds, p.SystemCPUSeconds, p.ChildrenUserCPUSeconds, p.ChildrenSystemCPUSeconds = x[0], x[1], x[2], x[3]
	r.IntervalSeconds, r.CPUPercent, r.ReadBytesPerSecond, r.WriteBytesPerSecond = x[4], x[5], x[6], x[7]
	r.RSSGrowthBytesPerMinute, r.PSSGrowthBytesPerMinute, r.USSGrowthBytesPerMinute = x[8], x[9], x[10]
}

// appendProcess appends p.
func appendProcess(b []byte, p *procwalk.Process) []byte {
	b = binary.AppendVarint(b, int64(p.ID.PID))
	b = binary.AppendUvarint(b, p.ID.StartTicks)
	f := fieldsOf(p)
	var mask uint64
	bit := 0
	for _, v := range f.ints {
		mask |= boolBit(v != 0, bit)
		bit++
	}
	for _, v := range f.uints {
		mask |= boolBit(v != 0, bit)
		bit++
	}
	for _, v := range f.floats {
		mask |= boolBit(v != 0, bit)
		bit++
	}
	mask |= boolBit(p.Comm != "", bitComm) | boolBit(len(p.Cmdline) > 0, bitCmdline) | boolBit(p.Exe != "", bitExe) |
		boolBit(p.Cwd != "", bitCwd) | boolBit(len(p.Cgroups) > 0, bitCgroups)
	b = binary.AppendUvarint(b, mask)
	for _, v := range f.ints {
		if v != 0 {
			b = binary.AppendVarint(b, v)
		}
	}
	for _, v := range f.uints {
		if v != 0 {
			b = binary.AppendUvarint(b, v)
		}
	}
	for _, v := range f.floats {
		if v != 0 {
			b = binary.AppendUvarint(b, bits.ReverseBytes64(math.Float64bits(v)))
		}
	}
	if p.Comm != "" {
		b = appendString(b, p.Comm)
	}
	if len(p.Cmdline) > 0 {
		b = binary.AppendUvarint(b, uint64(len(p.Cmdline)))
		for _, a := range p.Cmdline {
			b = appendString(b, a)
		}
	}
	if p.Exe != "" {
		b = appendString(b, p.Exe)
	}
	if p.Cwd != "" {
		b = appendString(b, p.Cwd)
	}
	if len(p.Cgroups) > 0 {
		b = binary.AppendUvarint(b, uint64(len(p.Cgroups)))
		for _, c := range p.Cgroups {
			b = binary.AppendVarint(b, int64(c.HierarchyID))
			b = appendString(b, c.Controllers)
			b = appendString(b, c.Path)
		}
	}
	return b
}

// boolBit is 1<<bit when set, else 0.
func boolBit(set bool, bit int) uint64 {
	if set {
		return 1 << bit
	}
	return 0
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
	mask := r.uvarint()
	var f processFields
	bit := 0
	for i := range f.ints {
		if mask&(1<<bit) != 0 {
			f.ints[i] = r.varint()
		}
		bit++
	}
	for i := range f.uints {
		if mask&(1<<bit) != 0 {
			f.uints[i] = r.uvarint()
		}
		bit++
	}
	for i := range f.floats {
		if mask&(1<<bit) != 0 {
			f.floats[i] = math.Float64frombits(bits.ReverseBytes64(r.uvarint()))
		}
		bit++
	}
	setFields(p, &f)
	if mask&(1<<bitComm) != 0 {
		p.Comm = d.comms.String(r.bytes())
	}
	if mask&(1<<bitCmdline) != 0 {
		if args, ok := d.readCmdline(r); ok {
			p.Cmdline = args
		}
	}
	if mask&(1<<bitExe) != 0 {
		p.Exe = d.str(r.bytes())
	}
	if mask&(1<<bitCwd) != 0 {
		p.Cwd = d.str(r.bytes())
	}
	if mask&(1<<bitCgroups) != 0 {
		if n := r.uvarint(); n > 0 && n <= uint64(len(r.b)) {
			p.Cgroups = make([]procwalk.CgroupLine, n)
			for i := range p.Cgroups {
				c := &p.Cgroups[i]
				c.HierarchyID = r.int()
				c.Controllers = d.str(r.bytes())
				c.Path = d.str(r.bytes())
			}
		} else {
			r.fail()
		}
	}
}

// str interns b, most often empty (a field not read).
func (d *Decoder) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return d.strs.String(b)
}

// maxDecodedCmdlineBytes bounds the command lines a Decoder keeps (their
// encoded bytes), as the Scanner bounds its own (maxInternedCmdlineBytes).
const maxDecodedCmdlineBytes = 256 << 10

// readCmdline reads a command line as the append functions wrote it, its
// count then each argument; ok is false for none, or when r failed.
func (d *Decoder) readCmdline(r *wireReader) (args []string, ok bool) {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil, false
	}
	start := r.b
	for range n {
		r.bytes()
	}
	if r.err != nil {
		return nil, false
	}
	return d.cmdline(start[:len(start)-len(r.b)], n), true
}

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
