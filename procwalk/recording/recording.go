//go:build linux

package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
)

// recording.go is the file: a recording is what `procwalk record` saw of
// a host, frame by frame, for `run --replay`, `watch --replay`,
// `top --replay` and rule tests. The layout, in order:
//
//	procwalk-recording 2\n      the magic and the format version, plain text
//	{"format_version":2,...}\n  the Header, one line of JSON
//	record*                     one per frame, in the order gathered
//
// A record is a kind byte ('K' a key frame, 'D' a delta), the length of
// what follows (a uvarint) and one gzip member. A key frame's member holds
// the frame as frame.Encoder wrote it. A delta's holds the processes that
// did not change since the frame before (their ids alone: most of a host
// sleeps from one second to the next), the rates' interval, and the frame
// without them as frame.Encoder wrote it (delta.go). One Encoder writes
// every frame of a file, so its Decoder reads them (the first frame
// carries the types of the gob stream). A key frame comes every
// keyEvery frames, so that a reader stepping back decodes a few frames,
// not the whole file. Each record compressed on its own costs little
// (gzip's window is 32 KiB, a frame hundreds of KiB), and lets a reader
// index the file without decompressing it; a recorder killed mid-write
// leaves every frame before the cut readable. Format 1 (no kind byte,
// every frame whole) is read too.

// FormatVersion is the version of the layout above, written in the magic
// line; a reader refuses a newer one with a message saying so.
const FormatVersion = 2

const magic = "procwalk-recording"

// Bounds on what a reader takes from a file, which may come from anyone
// (a bug report): the header line, one record, and one frame decompressed.
// A frame of 10,000 processes with command lines is about 2 MiB.
const (
	maxHeaderBytes = 1 << 20
	maxRecordBytes = 64 << 20
	maxFrameBytes  = 256 << 20
	// maxFrames bounds the index of a file's frames (8 bytes each): a
	// year at a frame every 10 seconds is 3.2 million.
	maxFrames = 1 << 22
)

// DefaultMaxBytes bounds a recording when Options.MaxBytes is 0: about 20
// minutes of a host of 2,000 processes at one frame a second.
const DefaultMaxBytes = 256 << 20

// Errors of Writer.Write and of readers, checked with errors.Is.
var (
	// ErrFull: the next frame would take the file past its MaxBytes; it
	// was not written, the file is complete without it.
	ErrFull = errors.New("the recording reached its size bound")
	// ErrFormat: the file is no recording this procwalk reads (not one,
	// a newer format, a damaged header or frame).
	ErrFormat = errors.New("not a recording this procwalk reads")
	// ErrTruncated: the file ends inside a frame (its recorder was killed,
	// or the disk filled up); every frame before the cut was read.
	ErrTruncated = errors.New("the recording ends in the middle of a frame")
)

// Header describes a recording: who made it, how, and what it holds.
type Header struct {
	// FormatVersion is the file layout's (FormatVersion when written).
	FormatVersion int `json:"format_version"`
	// FrameCodec is the frame encoding's version (frame.WireVersion).
	FrameCodec int `json:"frame_codec"`
	// Procwalk is the version line of the procwalk that recorded.
	Procwalk string    `json:"procwalk"`
	Created  time.Time `json:"created"`
	// Host is the recorded host's name (hashed when anonymized).
	Host string `json:"host,omitempty"`
	// IntervalSeconds is the time asked for between frames.
	IntervalSeconds float64 `json:"interval_seconds,omitempty"`
	// Kinds are the session kinds grouped (empty: every kind).
	Kinds []string `json:"kinds,omitempty"`
	// Fields are the optional fields read of every process (Fields.String).
	Fields string `json:"fields,omitempty"`
	// Anonymized is set when names, command lines, users and paths are
	// hashes (Anonymizer).
	Anonymized bool `json:"anonymized"`
	// Users names the uids of the recorded host's user database, so that
	// a replay names them as the host did (decimal uid -> name).
	Users map[string]string `json:"users,omitempty"`
}

// Interval is IntervalSeconds as a Duration.
func (h Header) Interval() time.Duration {
	return time.Duration(h.IntervalSeconds * float64(time.Second))
}

// UserNames returns Users as procwalk.Users, nil when the header has none.
func (h Header) UserNames() *procwalk.Users {
	if len(h.Users) == 0 {
		return nil
	}
	names := make(map[int]string, len(h.Users))
	for k, v := range h.Users {
		if uid, err := strconv.Atoi(k); err == nil {
			names[uid] = v
		}
	}
	return procwalk.NewUsers(names)
}

// UserTable is users' names by decimal uid, for Header.Users (nil when
// it names none); UserNames reads it back.
func UserTable(users *procwalk.Users) map[string]string {
	names := users.Names()
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]string, len(names))
	for uid, name := range names {
		out[strconv.Itoa(uid)] = name
	}
	return out
}

// Options of a Writer.
type Options struct {
	// MaxBytes bounds the file: a frame that would take it past is not
	// written (ErrFull). 0 means DefaultMaxBytes.
	MaxBytes int64
	// Anonymize hashes names, command lines, users and paths (Anonymizer).
	Anonymize bool
}

// Writer writes a recording. Not safe for concurrent use.
type Writer struct {
	w      io.Writer
	enc    *frame.Encoder
	anon   *Anonymizer
	max    int64
	size   int64
	frames int
	gz     *gzip.Writer
	buf    bytes.Buffer
	delta  deltaWriter
}

// NewWriter writes the magic line and h to w and returns a Writer of
// frames after them. It fills in h's versions and, anonymizing, hashes
// its host and user names.
func NewWriter(w io.Writer, h Header, opt Options) (*Writer, error) {
	wr := &Writer{w: w, enc: frame.NewEncoder(), max: opt.MaxBytes}
	if wr.max <= 0 {
		wr.max = DefaultMaxBytes
	}
	h.FormatVersion, h.FrameCodec, h.Anonymized = FormatVersion, frame.WireVersion, opt.Anonymize
	if opt.Anonymize {
		wr.anon = NewAnonymizer()
		h.Host = wr.anon.String(h.Host)
		users := make(map[string]string, len(h.Users))
		for uid, name := range h.Users {
			users[uid] = wr.anon.String(name)
		}
		h.Users = users
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	line := fmt.Sprintf("%s %d\n%s\n", magic, FormatVersion, head)
	if int64(len(line)) > wr.max {
		return nil, fmt.Errorf("%w: its header alone takes %d bytes", ErrFull, len(line))
	}
	n, err := io.WriteString(w, line)
	wr.size += int64(n)
	if err != nil {
		return nil, err
	}
	wr.gz, _ = gzip.NewWriterLevel(&wr.buf, gzip.DefaultCompression)
	return wr, nil
}

// Write appends f, anonymized when the Writer does. A frame that would
// take the file past its bound is not written: ErrFull.
func (w *Writer) Write(f frame.Frame) error {
	if w.anon != nil {
		f = w.anon.Frame(f)
	}
	f.Check()
	kind, kept, reduced := w.delta.split(f, w.frames%keyEvery == 0)
	b, err := w.enc.Encode(reduced)
	if err != nil {
		return err
	}
	w.buf.Reset()
	w.gz.Reset(&w.buf)
	if kind == kindDelta {
		w.gz.Write(kept) // into a bytes.Buffer: no error
	}
	w.gz.Write(b)
	if err := w.gz.Close(); err != nil {
		return err
	}
	prefix := binary.AppendUvarint([]byte{kind}, uint64(w.buf.Len()))
	if w.size+int64(len(prefix)+w.buf.Len()) > w.max {
		return fmt.Errorf("%w of %s after %d frames (the next takes %s)", ErrFull, procwalk.FormatBytes(uint64(w.max)), w.frames, procwalk.FormatBytes(uint64(len(prefix)+w.buf.Len())))
	}
	n, err := w.w.Write(append(prefix, w.buf.Bytes()...))
	w.size += int64(n)
	if err != nil {
		return err
	}
	w.delta.wrote(f)
	w.frames++
	return nil
}

// Record writes the frames p gathers on each of t's ticks until ctx ends,
// t stops, a gather fails or the recording is full: full says the last,
// which is no error (the frames before it are the recording).
func (w *Writer) Record(ctx context.Context, p *frame.Pipeline, t frame.Trigger) (full bool, err error) {
	var stopped error
	err = p.Run(ctx, t, func(f frame.Frame, err error) error {
		if err != nil {
			return err
		}
		if err := w.Write(f); err != nil {
			stopped = err
			return frame.ErrStop
		}
		return nil
	})
	full = errors.Is(stopped, ErrFull)
	if err == nil && stopped != nil && !full {
		err = stopped
	}
	return full, err
}

// Frames is how many frames were written; Size the file's bytes so far.
func (w *Writer) Frames() int    { return w.frames }
func (w *Writer) Size() int64    { return w.size }
func (w *Writer) MaxSize() int64 { return w.max }

// Reader reads a recording: frames in order (Next), or any frame by its
// index (Frame), as a live view steps back and forth.
type Reader struct {
	name    string // for errors: the file's path
	f       io.ReadSeeker
	closer  io.Closer
	h       Header
	version int
	// offsets are where the records found so far start, keys whether each
	// is a key frame; indexed is set once the whole file was indexed.
	offsets []int64
	keys    []bool
	indexed bool
	// seq reads the frames in order for Next, next is its place; any reads
	// those Frame asks for.
	seq, any  cursor
	next      int
	zr        *gzip.Reader
	buf       bytes.Buffer
	truncated error // why indexing stopped before the file's end
}

// Open opens the recording at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the recording in f, named name in errors.
func NewReader(f io.ReadSeeker, name string) (*Reader, error) {
	r := &Reader{name: name, f: f, seq: newCursor(), any: newCursor()}
	br := bufio.NewReaderSize(io.LimitReader(f, maxHeaderBytes+int64(len(magic))+32), 64<<10)
	first, err := br.ReadString('\n')
	if err != nil && first == "" {
		return nil, fmt.Errorf("%w: %s is empty", ErrFormat, name)
	}
	version, ok := strings.CutPrefix(strings.TrimSuffix(first, "\n"), magic+" ")
	v, verr := strconv.Atoi(version)
	if !ok || verr != nil || v < 1 {
		return nil, fmt.Errorf("%w: %s is not a procwalk recording: it starts with %q, not %q (procwalk record -o FILE makes one)",
			ErrFormat, name, procwalk.Printable(cut(first, 40)), fmt.Sprintf("%s %d", magic, FormatVersion))
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the header line is cut or longer than %s", ErrFormat, name, procwalk.FormatBytes(maxHeaderBytes))
	}
	if err := json.Unmarshal([]byte(line), &r.h); err != nil && v == FormatVersion {
		return nil, fmt.Errorf("%w: %s: the header line: %v", ErrFormat, name, err)
	}
	switch {
	case v > FormatVersion:
		return nil, fmt.Errorf("%w: %s is a recording of format %d (by %s), newer than this procwalk reads (format %d): replay it with a newer procwalk",
			ErrFormat, name, v, cmpOr(procwalk.Printable(r.h.Procwalk), "a newer procwalk"), FormatVersion)
	case r.h.FrameCodec > frame.WireVersion:
		return nil, fmt.Errorf("%w: %s holds frames of encoding %d (by %s), newer than this procwalk reads (encoding %d): replay it with a newer procwalk",
			ErrFormat, name, r.h.FrameCodec, cmpOr(procwalk.Printable(r.h.Procwalk), "a newer procwalk"), frame.WireVersion)
	case r.h.FrameCodec < frame.OldestWireVersion:
		return nil, fmt.Errorf("%w: %s holds frames of encoding %d (by %s), which this procwalk no longer reads (it reads encodings %d to %d): replay it with the procwalk that recorded it",
			ErrFormat, name, r.h.FrameCodec, cmpOr(procwalk.Printable(r.h.Procwalk), "an older procwalk"), frame.OldestWireVersion, frame.WireVersion)
	}
	r.version = v
	r.offsets = []int64{int64(len(first) + len(line))}
	return r, nil
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Header is the recording's header.
func (r *Reader) Header() Header { return r.h }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next returns the next frame in order; io.EOF after the last, ErrTruncated
// (wrapped) when the file ends inside one.
func (r *Reader) Next() (frame.Frame, error) {
	f, err := r.at(&r.seq, r.next)
	if err == nil {
		r.next++
	}
	return f, err
}

// Len returns how many whole frames the file holds, indexing it once
// (record lengths only: nothing is decompressed). A file cut inside its
// last frame counts the frames before it; Truncated says so.
func (r *Reader) Len() (int, error) {
	for !r.indexed {
		if _, err := r.locate(len(r.offsets) - 1); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) {
			return 0, err
		}
	}
	return len(r.offsets) - 1, nil
}

// Truncated is why the file ended inside a frame, once Len or a read
// found that; nil for a whole file.
func (r *Reader) Truncated() error { return r.truncated }

// Frame returns frame i (from 0), in any order: the key frame at or
// before it and the deltas after that are decoded (keyEvery at most),
// none when it follows the frame Frame returned last.
func (r *Reader) Frame(i int) (frame.Frame, error) {
	if i < 0 {
		return frame.Frame{}, fmt.Errorf("frame %d: no such frame", i)
	}
	f, err := r.at(&r.any, i)
	if errors.Is(err, frame.ErrCodec) && r.any.at >= 0 {
		// A type first sent after frame 0 (none today): read the frames
		// before it in order, with a Decoder of their own.
		r.any = newCursor()
		for j := 0; j <= i && err == nil; j++ {
			f, err = r.at(&r.any, j)
		}
	}
	return f, err
}

// IndexAt is the index of the frame shown at t: the last one taken at or
// before t; -1 when the recording starts after t. A frame that cannot
// be read ends the search, at the frame before it.
func (r *Reader) IndexAt(t time.Time) (int, error) {
	n, err := r.Len()
	if err != nil {
		return -1, err
	}
	at := -1
	for i := 0; i < n; i++ {
		f, err := r.Frame(i)
		if err != nil || f.Snapshot.Time.After(t) {
			break
		}
		at = i
	}
	return at, nil
}

// Recent is random access to a recording's frames for a viewer that
// steps back and forth: the frames it decoded last are kept, so that a
// step back to one of them decodes nothing (Reader.Frame decodes from
// the key frame before it, up to keyEvery frames). Not safe for
// concurrent use.
type Recent struct {
	r      *Reader
	max    int
	frames map[int]frame.Frame
	order  []int // the kept frames' indexes, oldest first
}

// NewRecent keeps the max frames of r decoded last (at least one).
func NewRecent(r *Reader, max int) *Recent {
	if max < 1 {
		max = 1
	}
	return &Recent{r: r, max: max, frames: make(map[int]frame.Frame, max)}
}

// Frame is frame i, decoded now or kept from before.
func (c *Recent) Frame(i int) (frame.Frame, error) {
	if f, ok := c.frames[i]; ok {
		return f, nil
	}
	f, err := c.r.Frame(i)
	if err != nil {
		return frame.Frame{}, err
	}
	if len(c.order) == c.max {
		delete(c.frames, c.order[0])
		c.order = c.order[1:]
	}
	c.frames[i], c.order = f, append(c.order, i)
	return f, nil
}

// cursor decodes the frames of a file with one Decoder, keeping the
// processes of the frame it decoded last (a delta's base).
type cursor struct {
	dec  *frame.Decoder
	at   int // the frame decoded last, -1 before the first
	base frame.Frame
}

func newCursor() cursor { return cursor{dec: frame.NewDecoder(), at: -1} }

// at decodes frame i with c: the next one as it is, another from the key
// frame at or before it (and frame 0 first, for its gob types).
func (r *Reader) at(c *cursor, i int) (frame.Frame, error) {
	if _, err := r.locate(i); err != nil {
		return frame.Frame{}, err
	}
	from := i
	if i != c.at+1 {
		for from > 0 && !r.keys[from] {
			from--
		}
		if c.at < 0 && from > 0 {
			if _, err := r.decode(c, 0); err != nil {
				return frame.Frame{}, err
			}
		}
	}
	var f frame.Frame
	var err error
	for j := from; j <= i; j++ {
		if f, err = r.decode(c, j); err != nil {
			return frame.Frame{}, err
		}
	}
	return f, nil
}

// locate returns where record i starts, indexing up to it: io.EOF when
// the file has no record i.
func (r *Reader) locate(i int) (int64, error) {
	for len(r.offsets) <= i+1 && !r.indexed {
		last := len(r.offsets) - 1
		start := r.offsets[last]
		if _, err := r.f.Seek(start, io.SeekStart); err != nil {
			return 0, err
		}
		var head [1 + binary.MaxVarintLen64]byte
		n, err := io.ReadFull(r.f, head[:])
		if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			r.indexed = true
			break
		}
		key, lenAt := true, 0
		if r.version >= 2 {
			key, lenAt = head[0] == kindKey, 1
			if head[0] != kindKey && head[0] != kindDelta {
				r.indexed = true
				r.truncated = fmt.Errorf("%w: %s: frame %d is of no kind this procwalk knows (%q): the %d frames before it are read", ErrTruncated, r.name, last+1, head[0], last)
				break
			}
		}
		size, k := binary.Uvarint(head[min(lenAt, n):n])
		k += lenAt
		if last >= maxFrames {
			r.indexed = true
			r.truncated = fmt.Errorf("%w: %s: more than %d frames: the first %d are read", ErrTruncated, r.name, maxFrames, last)
			break
		}
		if k <= 0 || size > maxRecordBytes {
			r.indexed = true
			r.truncated = fmt.Errorf("%w: %s: frame %d has a damaged length: the %d frames before it are read", ErrTruncated, r.name, last+1, last)
			break
		}
		end := start + int64(k) + int64(size)
		if got, err := r.f.Seek(end-1, io.SeekStart); err != nil || got != end-1 {
			r.indexed, r.truncated = true, r.cutAt(last)
			break
		}
		var one [1]byte
		if _, err := io.ReadFull(r.f, one[:]); err != nil {
			r.indexed, r.truncated = true, r.cutAt(last)
			break
		}
		r.offsets = append(r.offsets, end)
		r.keys = append(r.keys, key)
	}
	if i+1 < len(r.offsets) {
		return r.offsets[i], nil
	}
	if r.truncated != nil {
		return 0, r.truncated
	}
	return 0, io.EOF
}

func (r *Reader) cutAt(frames int) error {
	return fmt.Errorf("%w: %s ends inside frame %d (its recorder was stopped, or the disk filled up); the %d frames before it are read", ErrTruncated, r.name, frames+1, frames)
}

// decode reads record i with c, which decoded record i-1 when i is a
// delta.
func (r *Reader) decode(c *cursor, i int) (frame.Frame, error) {
	start, err := r.locate(i)
	if err != nil {
		return frame.Frame{}, err
	}
	if _, err := r.f.Seek(start, io.SeekStart); err != nil {
		return frame.Frame{}, err
	}
	br := bufio.NewReader(io.LimitReader(r.f, r.offsets[i+1]-start))
	if r.version >= 2 {
		br.ReadByte() // the kind, read by locate
	}
	if _, err := binary.ReadUvarint(br); err != nil {
		return frame.Frame{}, r.damaged(i, err)
	}
	if r.zr == nil {
		r.zr, err = gzip.NewReader(br)
	} else {
		err = r.zr.Reset(br)
	}
	if err != nil {
		return frame.Frame{}, r.damaged(i, err)
	}
	r.zr.Multistream(false)
	r.buf.Reset()
	n, err := r.buf.ReadFrom(io.LimitReader(r.zr, maxFrameBytes+1))
	switch {
	case err != nil:
		return frame.Frame{}, r.damaged(i, err)
	case n > maxFrameBytes:
		return frame.Frame{}, r.damaged(i, fmt.Errorf("more than %s decompressed", procwalk.FormatBytes(maxFrameBytes)))
	}
	if i == 0 && c.at != -1 {
		// Frame 0 carries the gob stream's types: a Decoder that read
		// it already would take them for a second definition.
		c.dec = frame.NewDecoder()
	}
	b := r.buf.Bytes()
	var kept []procwalk.ProcID
	var codes []uint64
	var interval float64
	if !r.keys[i] {
		if c.at != i-1 {
			return frame.Frame{}, r.damaged(i, errors.New("a delta read without the frame before it"))
		}
		if kept, interval, codes, b, err = readKept(b); err != nil {
			return frame.Frame{}, r.damaged(i, err)
		}
	}
	f, err := c.dec.Decode(b)
	if err == nil && !r.keys[i] {
		f, err = rebuild(f, c.base, kept, interval, codes)
	}
	if err != nil {
		c.at = -2 // its base is lost: only a key frame goes on
		return frame.Frame{}, r.damaged(i, err)
	}
	c.at, c.base = i, f
	return f, nil
}

func (r *Reader) damaged(i int, err error) error {
	return fmt.Errorf("%w: %s: frame %d is damaged: %w", ErrFormat, r.name, i+1, err)
}
