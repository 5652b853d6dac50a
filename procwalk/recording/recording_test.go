//go:build linux

package recording

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/procwalk/metric"
	"github.com/procwalk/procwalk/procwalk/session"
)

// fixturePipeline gathers frames of the session fixture (procwalk/session/
// testdata/sessions: tmux, sids, users, agents' trees, cgroups with their
// cgroupfs v1 usage and limits ...) with every kind and every field, on a
// clock of its own.
func fixturePipeline(t testing.TB) *frame.Pipeline {
	fs, err := procwalk.NewFS("../session/testdata/sessions/proc")
	if err != nil {
		t.Fatal(err)
	}
	g, err := session.NewGrouper(fs, session.Config{
		CgroupRoot: "../session/testdata/sessions/cgroupfs-v1",
		Tmux: session.TmuxConfig{
			Sockets: []string{"/tmp/tmux-1000/default"},
			ListPanes: func(string) ([]byte, error) {
				return os.ReadFile("../session/testdata/sessions/tmux/default.txt")
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return frame.New(fs, frame.Config{Grouper: g, System: true, Fields: procwalk.AllFields | procwalk.FieldSmaps,
		Clock: &procwalk.OffsetClock{Start: time.Unix(1800000000, 0), Base: time.Now()}})
}

// record gathers n frames of the fixture into a recording, returning its
// bytes and the frames (kept: the pipeline keeps every frame valid).
func record(t testing.TB, n int, opt Options) ([]byte, []frame.Frame) {
	t.Helper()
	p := fixturePipeline(t)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Procwalk: "procwalk test", Created: time.Unix(1800000000, 0), Host: "fixturehost",
		IntervalSeconds: 10, Users: map[string]string{"1000": "alice", "0": "root"}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var frames []frame.Frame
	for i := range n {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		f.System = procwalk.System{Load1: 1.5 + float64(i), HaveLoad: true, MemTotalBytes: 8 << 30, HaveMemory: true, Pressure: map[string]float64{"memory": 2.5}}
		enrich(&f, i)
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
		c := deepCopy(f)
		if got, want := catalogue(c), catalogue(f); !reflect.DeepEqual(got, want) {
			t.Errorf("frame %d through the frame codec: catalogue values\n got %v\nwant %v", i, got, want)
		}
		frames = append(frames, c)
	}
	if w.Frames() != n || w.Size() != int64(buf.Len()) {
		t.Errorf("writer: %d frames, %d bytes; the file has %d bytes", w.Frames(), w.Size(), buf.Len())
	}
	return buf.Bytes(), frames
}

// enrich gives frame i of the fixture what its /proc lacks, so that every
// catalogue value is there in some process or session: smaps_rollup, fds
// and the OOM score of a process and its PSS and USS growth, a session's
// PSS and USS sums, an agent's transcript (procwalk/session's own tests
// parse real transcripts and cgroupfs; here they only have to survive).
func enrich(f *frame.Frame, i int) {
	p := &f.Snapshot.Procs[len(f.Snapshot.Procs)-1]
	p.Read |= procwalk.FieldSmaps | procwalk.FieldFDs | procwalk.FieldOOMScore
	p.Smaps = procwalk.SmapsRollup{RSSBytes: p.RSSBytes, PSSBytes: uint64(3+i) << 20, USSBytes: uint64(2+i) << 20, SwapBytes: 4096}
	p.FDs, p.OOMScore = 17+i, 666
	if p.Rates.Measured {
		p.Rates.HaveSmaps, p.Rates.PSSGrowthBytesPerMinute, p.Rates.USSGrowthBytesPerMinute = true, 6<<20, 6<<20
	}
	for j := range f.Sessions {
		s := &f.Sessions[j]
		s.Totals.PSSBytes, s.Totals.USSBytes, s.Totals.SmapsRead = uint64(5+i)<<20, uint64(4+i)<<20, 1
		if s.Totals.RatesMeasured > 0 {
			s.Totals.PSSGrowthBytesPerMinute = 6 << 20
		}
		if s.Agent != nil {
			a := *s.Agent
			a.ContextWindowTokens, a.ContextPercent = 200000, 21.5
			a.Transcript = &session.Transcript{Path: "/home/alice/.claude/projects/-home-alice-secretproject/4f1d.jsonl",
				SessionID: "4f1d9a7b-secret-session", Model: "claude-sonnet-4-5", ContextUsedTokens: 43000,
				InputTokens: 1200 + int64(i), OutputTokens: 3400, CacheReadTokens: 56000, CacheCreationTokens: 7800, Turns: 9,
				LastActivity: time.Unix(1800000000+int64(i), 0).UTC(), PendingTools: 1, Bytes: 123456, SkippedBytes: 1024, Malformed: 2}
			tr := a.Transcript
			tr.ReasoningTokens, tr.WebSearchRequests, tr.WebFetchRequests = 512, 2, 3
			tr.HaveReasoning, tr.HaveServerTools, tr.HaveRateLimits = true, true, true
			tr.RateLimitPrimaryPercent, tr.RateLimitSecondaryPercent = 12.5, 40
			a.CostUSD, a.HaveCost = 0.42, true
			s.Agent = &a
		}
	}
}

// catalogue is every catalogue value of f's processes and sessions that is
// there ("pid 42 rss_bytes", "tmux:build procs").
func catalogue(f frame.Frame) map[string]float64 {
	s, out := f.Snapshot, map[string]float64{}
	for _, d := range metric.Processes() {
		for i := range s.Procs {
			if v, ok := d.Process(s, &s.Procs[i]); ok {
				out[fmt.Sprintf("pid %d %s", s.Procs[i].ID.PID, d.Name)] = v
			}
		}
	}
	for _, d := range metric.Sessions() {
		for i := range f.Sessions {
			if v, ok := d.Session(&f.Sessions[i], s.Fields, s.Time); ok {
				out[f.Sessions[i].Ref()+" "+d.Name] = v
			}
		}
	}
	return out
}

// deepCopy is f through a codec of its own: the frame as recorded, kept
// past the pipeline's next gather.
func deepCopy(f frame.Frame) frame.Frame {
	b, err := frame.NewEncoder().Encode(f)
	if err != nil {
		panic(err)
	}
	c, err := frame.NewDecoder().Decode(b)
	if err != nil {
		panic(err)
	}
	return c
}

// TestRoundTrip reads a recording of three gathers in order and out of
// order: every process field, session, system figure and note arrives as
// recorded, and so does every value of the metric catalogue.
func TestRoundTrip(t *testing.T) {
	b, want := record(t, 3, Options{})
	r, err := NewReader(bytes.NewReader(b), "test.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.FormatVersion != FormatVersion || h.FrameCodec != frame.WireVersion || h.Procwalk != "procwalk test" || h.Host != "fixturehost" ||
		h.Interval() != 10*time.Second || h.Anonymized || h.UserNames().Name(1000) != "alice" {
		t.Errorf("header: %+v", h)
	}
	for i := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		sameFrame(t, fmt.Sprintf("frame %d in order", i), got, want[i])
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
	if n, err := r.Len(); n != 3 || err != nil || r.Truncated() != nil {
		t.Errorf("Len: %d, %v (truncated: %v), want 3", n, err, r.Truncated())
	}
	for _, i := range []int{2, 0, 1, 2} {
		got, err := r.Frame(i)
		if err != nil {
			t.Fatalf("Frame(%d): %v", i, err)
		}
		sameFrame(t, fmt.Sprintf("Frame(%d)", i), got, want[i])
	}
	if _, err := r.Frame(3); err != io.EOF {
		t.Errorf("Frame(3) of 3: %v, want io.EOF", err)
	}
	// A catalogue value the fixture never has would not be checked.
	present := map[string]bool{}
	for _, f := range want {
		for k := range catalogue(f) {
			present[k[strings.LastIndexByte(k, ' ')+1:]] = true
		}
	}
	for _, d := range append(metric.Processes(), metric.Sessions()...) {
		if !present[d.Name] {
			t.Errorf("%s: no process or session of the recorded fixture has it: its round trip is not checked", d.Name)
		}
	}
}

// sameFrame fails t when got differs from want in what a consumer reads,
// and compares every catalogue value of every process and session.
func sameFrame(t *testing.T, what string, got, want frame.Frame) {
	t.Helper()
	gs, ws := got.Snapshot, want.Snapshot
	if !gs.Time.Equal(ws.Time) || gs.Host != ws.Host || gs.Fields != ws.Fields || !reflect.DeepEqual(gs.Visibility, ws.Visibility) {
		t.Errorf("%s: snapshot header %v %+v, want %v %+v", what, gs.Time, gs.Host, ws.Time, ws.Host)
	}
	if !reflect.DeepEqual(gs.Procs, ws.Procs) {
		t.Errorf("%s: processes differ", what)
	}
	if !reflect.DeepEqual(got.Sessions, want.Sessions) || !reflect.DeepEqual(got.System, want.System) || !reflect.DeepEqual(got.Notes, want.Notes) {
		t.Errorf("%s: sessions, system or notes differ:\n got %+v %+v %q\nwant %+v %+v %q", what, got.Sessions, got.System, got.Notes, want.Sessions, want.System, want.Notes)
	}
	compared := 0
	for _, d := range metric.Processes() {
		for i := range ws.Procs {
			g, gok := d.Process(gs, &gs.Procs[i])
			w, wok := d.Process(ws, &ws.Procs[i])
			if g != w || gok != wok {
				t.Errorf("%s: pid %d %s = %v (%v), recorded %v (%v)", what, ws.Procs[i].ID.PID, d.Name, g, gok, w, wok)
			}
			compared++
		}
	}
	for _, d := range metric.Sessions() {
		for i := range want.Sessions {
			g, gok := d.Session(&got.Sessions[i], gs.Fields, gs.Time)
			w, wok := d.Session(&want.Sessions[i], ws.Fields, ws.Time)
			if g != w || gok != wok {
				t.Errorf("%s: session %s %s = %v (%v), recorded %v (%v)", what, want.Sessions[i].Ref(), d.Name, g, gok, w, wok)
			}
			compared++
		}
	}
	if compared < 100 {
		t.Errorf("%s: only %d catalogue values compared", what, compared)
	}
}

// TestAnonymize records the fixture anonymized: no name, command line
// argument, user, path component or session name of the host is left in
// the file, compressed or not, and the numbers and the shape (members,
// the tree, a path's depth) are as recorded.
func TestAnonymize(t *testing.T) {
	b, want := record(t, 2, Options{Anonymize: true})
	plain := decompressed(t, b)
	secrets := map[string]bool{"alice": true, "root": true, "fixturehost": true}
	for _, f := range want {
		for _, p := range f.Snapshot.Procs {
			secrets[p.Comm] = true
			for _, a := range p.Cmdline {
				secrets[a] = true
			}
			for _, s := range []string{p.Exe, p.Cwd} {
				secrets[s] = true
				for _, c := range strings.Split(s, "/") {
					secrets[c] = true
				}
			}
			for _, c := range p.Cgroups {
				for _, part := range strings.Split(c.Path, "/") {
					secrets[part] = true
				}
			}
		}
		for _, s := range f.Sessions {
			secrets[s.Name] = true
			for k, v := range s.Attrs {
				if !keptAttr(k) {
					secrets[v] = true
				}
			}
			for _, p := range s.Panes {
				secrets[p.Target], secrets[p.WindowName], secrets[p.Cwd], secrets[p.Command] = true, true, true, true
			}
			if c := s.Totals.Cgroup; c != nil {
				secrets[c.MemoryLimitPath], secrets[c.CPUQuotaPath] = true, true
			}
			if s.Agent != nil && s.Agent.Transcript != nil {
				tr := s.Agent.Transcript
				secrets[tr.Path], secrets[tr.SessionID], secrets["secretproject"] = true, true, true
			}
		}
		for _, n := range f.Notes {
			secrets[n] = true
		}
	}
	// procwalk's and the kernel's own words stay: session kinds, attribute
	// names and kept values (an agent rule's name, a QoS class), cgroup
	// controllers ("name=systemd"). A name that is one of them (a process
	// called tmux) cannot be told from them.
	var vocabulary []string
	for _, f := range want {
		for _, s := range f.Sessions {
			vocabulary = append(vocabulary, s.Kind)
			for k, v := range s.Attrs {
				vocabulary = append(vocabulary, k)
				if keptAttr(k) {
					vocabulary = append(vocabulary, v)
				}
			}
		}
		for _, p := range f.Snapshot.Procs {
			for _, c := range p.Cgroups {
				vocabulary = append(vocabulary, c.Controllers)
			}
		}
	}
	ours := func(s string) bool {
		for _, v := range vocabulary {
			if strings.Contains(v, s) {
				return true
			}
		}
		return false
	}
	// A hash is "x" and ten random letters and digits: a 4-letter name
	// ("sshd") turns up inside one of a few hundred hashes in a run of
	// some thousands, so hashes are masked before names are looked for. In
	// the compressed bytes (chance bytes too) only names of 8 bytes or
	// more are looked for: the decompressed text holds every record.
	hashes := regexp.MustCompile(`x[a-z2-7]{10}`) // see token
	masked := hashes.ReplaceAll(plain, []byte("x##########"))
	checked := 0
	for s := range secrets {
		if len(s) < 4 || isNumber(s) || s == "(deleted)" || ours(s) {
			continue // too short to be told from chance bytes, or our own word
		}
		checked++
		if bytes.Contains(masked, []byte(s)) || len(s) >= 8 && bytes.Contains(b, []byte(s)) {
			t.Errorf("%q is in the anonymized recording", s)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d names checked: the fixture lost its names", checked)
	}

	r, err := NewReader(bytes.NewReader(b), "anon.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); !h.Anonymized || h.Host == "fixturehost" || h.Users["1000"] == "alice" || h.Users["1000"] == "" {
		t.Errorf("header: %+v", h)
	}
	for i := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		gs, ws := got.Snapshot, want[i].Snapshot
		if len(gs.Procs) != len(ws.Procs) || len(got.Sessions) != len(want[i].Sessions) || got.Notes != nil {
			t.Fatalf("frame %d: %d processes, %d sessions, notes %q; recorded %d, %d", i, len(gs.Procs), len(got.Sessions), got.Notes, len(ws.Procs), len(want[i].Sessions))
		}
		for j := range ws.Procs {
			g, w := gs.Procs[j], ws.Procs[j]
			if g.ID != w.ID || g.PPID != w.PPID || g.RSSBytes != w.RSSBytes || g.Rates != w.Rates || g.Smaps != w.Smaps ||
				len(g.Cmdline) != len(w.Cmdline) || strings.Count(g.Cwd, "/") != strings.Count(w.Cwd, "/") {
				t.Errorf("frame %d: pid %d: %+v\nrecorded %+v", i, w.ID.PID, g, w)
			}
			if g.Comm == w.Comm && len(w.Comm) >= 4 {
				t.Errorf("pid %d: comm %q kept", w.ID.PID, w.Comm)
			}
		}
		for j := range want[i].Sessions {
			g, w := got.Sessions[j], want[i].Sessions[j]
			if g.Kind != w.Kind || !reflect.DeepEqual(g.Members, w.Members) || !sameNumbers(g.Totals, w.Totals) {
				t.Errorf("frame %d: session %s: %+v\nrecorded %+v", i, w.Ref(), g, w)
			}
		}
	}
}

// sameNumbers reports whether a session's totals are b's but for the
// names a cgroup's usage holds (the cgroups setting its limits).
func sameNumbers(a, b session.Totals) bool {
	if (a.Cgroup == nil) != (b.Cgroup == nil) {
		return false
	}
	if a.Cgroup != nil {
		ac, bc := *a.Cgroup, *b.Cgroup
		ac.MemoryLimitPath, ac.CPUQuotaPath, bc.MemoryLimitPath, bc.CPUQuotaPath = "", "", "", ""
		if ac != bc {
			return false
		}
	}
	a.Cgroup, b.Cgroup = nil, nil
	return a == b
}

// TestAnonymizerConsistent: one name, one hash across kinds of strings;
// a path keeps its depth; numbers, "" and " (deleted)" stay.
func TestAnonymizerConsistent(t *testing.T) {
	a := NewAnonymizer()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"1000", "1000"},
		{"/home/alice/src", "/" + a.String("home") + "/" + a.String("alice") + "/" + a.String("src")},
		{"/usr/bin/python3 (deleted)", a.String("/usr/bin/python3") + " (deleted)"},
		{"/a/../b/./", "/" + a.String("a") + "/../" + a.String("b") + "/./"},
	} {
		if got := a.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	h := a.String("python3")
	if len(h) != 1+tokenLen || h == "python3" || a.String("python3") != h || NewAnonymizer().String("python3") == h {
		t.Errorf("hash of python3: %q (another key: %q)", h, NewAnonymizer().String("python3"))
	}
}

// TestTokenIsBase32: token spells a hash as the lower-case base32 of
// RFC 4648 did before it (the first tokenLen characters), for sums of
// every bit pattern in its first bytes.
func TestTokenIsBase32(t *testing.T) {
	enc := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	sum := make([]byte, 32)
	for i := 0; i < 2000; i++ {
		for j := range sum {
			sum[j] = byte((i*131 + j*29 + i*j*7) ^ i>>3)
		}
		if i < 8 {
			for j := range sum {
				sum[j] = byte(0xff*(i&1)) ^ byte(1<<(i%8)) // all ones, all zeros, one bit
			}
		}
		if got, want := token(sum), enc.EncodeToString(sum)[:tokenLen]; got != want {
			t.Fatalf("token(% x) = %q, want %q", sum[:8], got, want)
		}
	}
}

func decompressed(t *testing.T, b []byte) []byte {
	t.Helper()
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	head, rest, _ := bytes.Cut(rest, []byte("\n"))
	out := append([]byte(nil), head...)
	for len(rest) > 0 {
		rest = rest[1:] // the record's kind
		n, k := binary.Uvarint(rest)
		zr, err := gzip.NewReader(bytes.NewReader(rest[k : k+int(n)]))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, plain...)
		rest = rest[k+int(n):]
	}
	return out
}

// TestReadErrors: what is not a recording, a newer format or encoding,
// and a file cut anywhere are errors that say so; the frames before a cut
// are read.
func TestReadErrors(t *testing.T) {
	b, _ := record(t, 2, Options{})
	headerEnd := bytes.Index(b[bytes.IndexByte(b, '\n')+1:], []byte("\n")) + bytes.IndexByte(b, '\n') + 2
	codec := fmt.Appendf(nil, `"frame_codec":%d`, frame.WireVersion) // as the header states it
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "is empty"},
		{"not a recording", []byte("PID COMM\n1 init\n"), `not a procwalk recording: it starts with "PID COMM\\n"`},
		{"newer format", append([]byte(fmt.Sprintf("procwalk-recording %d\n", FormatVersion+1)), b[bytes.IndexByte(b, '\n')+1:]...),
			fmt.Sprintf("is a recording of format %d (by procwalk test), newer than this procwalk reads (format %d)", FormatVersion+1, FormatVersion)},
		{"newer encoding", bytes.Replace(b, codec, []byte(`"frame_codec":99`), 1),
			fmt.Sprintf("holds frames of encoding 99 (by procwalk test), newer than this procwalk reads (encoding %d)", frame.WireVersion)},
		{"older encoding", bytes.Replace(b, codec, []byte(`"frame_codec":0`), 1),
			fmt.Sprintf("which this procwalk no longer reads (it reads encodings %d to %d)", frame.OldestWireVersion, frame.WireVersion)},
		{"cut header", b[:headerEnd-5], "the header line is cut"},
	} {
		_, err := NewReader(bytes.NewReader(c.file), "f.pwrec")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrFormat saying %q", c.name, err, c.want)
		}
	}

	first, size := binary.Uvarint(b[headerEnd+1:]) // after the kind
	secondStart := headerEnd + 1 + size + int(first)
	for cut := headerEnd; cut < len(b); cut += max(1, (len(b)-headerEnd)/200) {
		r, err := NewReader(bytes.NewReader(b[:cut]), "cut.pwrec")
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		frames := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrFormat) {
					t.Fatalf("cut at %d: %v", cut, err)
				}
				break
			}
			frames++
		}
		if want := map[bool]int{true: 1, false: 0}[cut >= secondStart]; frames != want {
			t.Errorf("cut at %d of %d: %d frames read, want %d", cut, len(b), frames, want)
		}
	}

	// A damaged byte inside a frame is an error naming the frame, never a panic.
	bad := bytes.Clone(b)
	bad[secondStart+40] ^= 0xff
	r, _ := NewReader(bytes.NewReader(bad), "bad.pwrec")
	r.Next()
	if _, err := r.Next(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "frame 2 is damaged") {
		t.Errorf("a damaged second frame: %v", err)
	}
}

// TestMaxBytes: a frame that would pass the bound is not written, and
// the file stays whole.
func TestMaxBytes(t *testing.T) {
	oneFrame := func(max int64) (*Writer, *bytes.Buffer, error) {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Procwalk: "procwalk test"}, Options{MaxBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		p := fixturePipeline(t)
		f, _ := p.Gather()
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
		f, _ = p.Gather()
		return w, &buf, w.Write(f)
	}
	w, _, err := oneFrame(0)
	if err != nil || w.Frames() != 2 || w.MaxSize() != DefaultMaxBytes {
		t.Fatalf("unbounded: %v, %d frames, bound %d", err, w.Frames(), w.MaxSize())
	}
	w, buf, err := oneFrame(w.Size() - 256) // short of two frames (times make sizes differ by a few bytes)
	if !errors.Is(err, ErrFull) {
		t.Fatalf("second frame past the bound: %v, want ErrFull", err)
	}
	if w.Frames() != 1 || int64(buf.Len()) > w.MaxSize() || w.Size() != int64(buf.Len()) {
		t.Errorf("%d frames in %d bytes, bound %d", w.Frames(), buf.Len(), w.MaxSize())
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "full.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.Len(); n != 1 || err != nil || r.Truncated() != nil {
		t.Errorf("Len: %d %v %v", n, err, r.Truncated())
	}
}

// TestOpen reads a recording from a file.
func TestOpen(t *testing.T) {
	b, want := record(t, 1, Options{})
	path := filepath.Join(t.TempDir(), "host.pwrec")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, "from a file", f, want[0])
}

// TestDelta: a process unchanged since the frame before is written as its
// id; the frames read back are whole, in order and in any order, across
// key frames; a host that mostly sleeps takes a fraction of the bytes.
func TestDelta(t *testing.T) {
	p := fixturePipeline(t)
	var whole, delta bytes.Buffer
	dw, err := NewWriter(&delta, Header{Procwalk: "test"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 2*keyEvery + 5
	var want []frame.Frame
	enc := frame.NewEncoder()
	for i := range n {
		f, err := p.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 { // one process changes now and then
			procs := append([]procwalk.Process(nil), f.Snapshot.Procs...)
			procs[len(procs)/2].RSSBytes += uint64(i) << 20
			s := procwalk.NewSnapshot(f.Snapshot.Host, f.Snapshot.Fields, f.Snapshot.Selected, procs, f.Snapshot.Visibility)
			s.Time, s.Duration, s.Source = f.Snapshot.Time, f.Snapshot.Duration, f.Snapshot.Source
			f.Snapshot = s
		}
		if err := dw.Write(f); err != nil {
			t.Fatal(err)
		}
		b, _ := enc.Encode(f)
		zw := gzip.NewWriter(&whole)
		zw.Write(b)
		zw.Close()
		want = append(want, deepCopy(f))
	}
	t.Logf("%d frames of %d processes: %d bytes, %d as whole frames", n, len(want[0].Snapshot.Procs), delta.Len(), whole.Len())
	if delta.Len()*2 > whole.Len() {
		t.Errorf("%d bytes for %d frames of a sleeping fixture, %d as whole frames", delta.Len(), n, whole.Len())
	}
	r, err := NewReader(bytes.NewReader(delta.Bytes()), "delta.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		sameFrame(t, fmt.Sprintf("frame %d in order", i), f, want[i])
	}
	if keys := strings.Count(fmt.Sprint(r.keys), "true"); keys != 3 {
		t.Errorf("%d key frames in %d, want 3: %v", keys, n, r.keys)
	}
	for _, i := range []int{n - 1, 0, keyEvery + 3, keyEvery + 4, keyEvery - 1, 5, 4, 2 * keyEvery, n - 2} {
		f, err := r.Frame(i)
		if err != nil {
			t.Fatalf("Frame(%d): %v", i, err)
		}
		sameFrame(t, fmt.Sprintf("Frame(%d)", i), f, want[i])
	}
}

// TestReadFormat1: a recording of format 1 (no kind bytes, every frame
// whole) reads as it did.
func TestReadFormat1(t *testing.T) {
	p := fixturePipeline(t)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "procwalk-recording 1\n{\"format_version\":1,\"frame_codec\":%d,\"procwalk\":\"old\"}\n", frame.WireVersion)
	enc := frame.NewEncoder()
	var want []frame.Frame
	for range 3 {
		f, _ := p.Gather()
		b, _ := enc.Encode(f)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		buf.Write(binary.AppendUvarint(nil, uint64(z.Len())))
		buf.Write(z.Bytes())
		want = append(want, deepCopy(f))
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "v1.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		sameFrame(t, fmt.Sprintf("format 1, frame %d", i), f, want[i])
	}
	if f, err := r.Frame(1); err != nil {
		t.Error(err)
	} else {
		sameFrame(t, "format 1, Frame(1)", f, want[1])
	}
}

// TestReadEncoding1: a recording whose frames are of frame encoding 1
// (../frame/testdata/encoding1.frames: two frames of the session fixture,
// written by the encoder of that version) reads, in order and at random.
func TestReadEncoding1(t *testing.T) {
	frames, err := os.ReadFile("../frame/testdata/encoding1.frames")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString("procwalk-recording 1\n{\"format_version\":1,\"frame_codec\":1,\"procwalk\":\"0.1\"}\n")
	for len(frames) > 0 {
		n, k := binary.Uvarint(frames)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(frames[k : k+int(n)])
		zw.Close()
		buf.Write(binary.AppendUvarint(nil, uint64(z.Len())))
		buf.Write(z.Bytes())
		frames = frames[k+int(n):]
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "encoding1.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, f frame.Frame, measured bool) {
		t.Helper()
		p := f.Snapshot.Process(201)
		if p == nil || p.Comm != "sshd" || p.PPID != 200 || p.RSSBytes != 1000*4096 || len(f.Sessions) == 0 {
			t.Fatalf("%s: pid 201 %+v, %d sessions: want sshd, ppid 200, RSS 4096000 and sessions", what, p, len(f.Sessions))
		}
		if p.Rates.Measured != measured {
			t.Errorf("%s: rates measured %v, want %v", what, p.Rates.Measured, measured)
		}
	}
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	check("frame 0", f, false)
	if f, err = r.Frame(1); err != nil {
		t.Fatal(err)
	}
	check("Frame(1)", f, true)
}

// TestReadFormat2Encoding1 reads a file as procwalk recorded it before
// the frame encoding's version 2: testdata/format2-codec1.pwrec, three
// frames a second apart of the session fixture, written by
//
//	procwalk record -o format2-codec1.pwrec --count 3 --interval 1s \
//	  --proc ../session/testdata/sessions/proc --cgroup-root ../session/testdata/sessions/cgroupfs-v1 \
//	  --passwd ../session/testdata/sessions/passwd --tmux-socket /nonexistent/tmux
//
// at commit 3e6da27 (format 2: frames 1 and 2 hold the unchanged processes
// and sessions by their ids). Every frame reads, in order and at random,
// with the fixture's processes, sessions, cgroup limits, user names and
// the rates measured between frames.
func TestReadFormat2Encoding1(t *testing.T) {
	r, err := Open("testdata/format2-codec1.pwrec")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if h.FormatVersion != 2 || h.FrameCodec != 1 || h.Interval() != time.Second || h.UserNames().Name(1000) != "dev" {
		t.Errorf("header: %+v", h)
	}
	if n, err := r.Len(); n != 3 || err != nil {
		t.Fatalf("Len: %d, %v; want 3 frames", n, err)
	}
	check := func(what string, f frame.Frame, measured bool) {
		t.Helper()
		p := f.Snapshot.Process(201)
		if p == nil || p.Comm != "sshd" || p.PPID != 200 || p.RSSBytes != 1000*4096 || p.Rates.Measured != measured {
			t.Fatalf("%s: pid 201 %+v: want sshd, ppid 200, RSS 4096000, rates measured %v", what, p, measured)
		}
		limited := 0
		for _, s := range f.Sessions {
			if c := s.Totals.Cgroup; c != nil && c.MemoryLimitBytes > 0 {
				limited++
			}
		}
		if len(f.Snapshot.Procs) != 35 || len(f.Sessions) != 70 || limited != 3 {
			t.Errorf("%s: %d processes, %d sessions, %d under a memory limit; want 35, 70, 3", what, len(f.Snapshot.Procs), len(f.Sessions), limited)
		}
	}
	var times []time.Time
	for i := range 3 {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		check(fmt.Sprintf("frame %d", i), f, i > 0)
		times = append(times, f.Snapshot.Time)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after 3 frames: %v, want io.EOF", err)
	}
	for _, i := range []int{2, 0, 1} {
		f, err := r.Frame(i)
		if err != nil {
			t.Fatalf("Frame(%d): %v", i, err)
		}
		check(fmt.Sprintf("Frame(%d)", i), f, i > 0)
		if !f.Snapshot.Time.Equal(times[i]) {
			t.Errorf("Frame(%d) at %v, read in order at %v", i, f.Snapshot.Time, times[i])
		}
	}
	if d := times[2].Sub(times[0]); d < 2*time.Second || d > 3*time.Second {
		t.Errorf("frames %v apart over two intervals of 1s", d)
	}
}

// nowTrigger fires n times at once: frames without a clock to wait on.
type nowTrigger struct{ n int }

func (t *nowTrigger) Wait(context.Context) bool { t.n--; return t.n >= 0 }

// TestRecord: frames are written until the trigger stops, or until the
// recording is full, which is no error.
func TestRecord(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Procwalk: "procwalk test"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := w.Record(context.Background(), fixturePipeline(t), &nowTrigger{n: 3})
	if full || err != nil || w.Frames() != 3 {
		t.Fatalf("full %v, err %v, %d frames; want 3 frames", full, err, w.Frames())
	}
	one := w.Size() / 3
	var small bytes.Buffer
	w, err = NewWriter(&small, Header{Procwalk: "procwalk test"}, Options{MaxBytes: 2*one - 256})
	if err != nil {
		t.Fatal(err)
	}
	full, err = w.Record(context.Background(), fixturePipeline(t), &nowTrigger{n: 3})
	if !full || err != nil || w.Frames() != 1 {
		t.Errorf("bounded: full %v, err %v, %d frames; want full after 1", full, err, w.Frames())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, _ = NewWriter(&bytes.Buffer{}, Header{Procwalk: "procwalk test"}, Options{})
	if full, err := w.Record(ctx, fixturePipeline(t), &nowTrigger{n: 3}); full || err != nil || w.Frames() != 0 {
		t.Errorf("cancelled: full %v, err %v, %d frames", full, err, w.Frames())
	}
}

// IndexAt finds the frame shown at a time: the last at or before it.
// Recent hands out the same frames as Reader.Frame, keeping the last ones.
func TestIndexAtAndRecent(t *testing.T) {
	b, frames := record(t, 5, Options{})
	r, err := NewReader(bytes.NewReader(b), "mem")
	if err != nil {
		t.Fatal(err)
	}
	times := make([]time.Time, len(frames))
	for i, f := range frames {
		times[i] = f.Snapshot.Time
	}
	if !times[4].After(times[0]) {
		t.Fatalf("the fixture's frames are not in time order: %v", times)
	}
	for _, tt := range []struct {
		at   time.Time
		want int
	}{
		{times[0].Add(-time.Second), -1},
		{times[0], 0},
		{times[2], 2},
		{times[2].Add(times[3].Sub(times[2]) / 2), 2},
		{times[4].Add(time.Hour), 4},
	} {
		if got, err := r.IndexAt(tt.at); got != tt.want || err != nil {
			t.Errorf("IndexAt(%v) = %d, %v; want %d", tt.at, got, err, tt.want)
		}
	}
	c := NewRecent(r, 2)
	for _, i := range []int{3, 1, 3, 4, 1} {
		f, err := c.Frame(i)
		if err != nil || !f.Snapshot.Time.Equal(times[i]) {
			t.Fatalf("Recent.Frame(%d): %v, %v; want the frame of %v", i, f.Snapshot.Time, err, times[i])
		}
	}
	// 3 and 1 decoded, 3 kept, 4 decoded in 3's place, 1 kept.
	if len(c.frames) != 2 || c.order[0] != 1 || c.order[1] != 4 {
		t.Errorf("kept %v (order %v); want the last two decoded, 1 then 4", len(c.frames), c.order)
	}
	// Asked to keep none, it keeps one (it panicked on its first frame).
	if f, err := NewRecent(r, 0).Frame(2); err != nil || !f.Snapshot.Time.Equal(times[2]) {
		t.Errorf("NewRecent(r, 0).Frame(2): %v, %v", f.Snapshot.Time, err)
	}
}

// UserTable writes what UserNames reads back; no users, no table.
func TestUserTable(t *testing.T) {
	users := procwalk.NewUsers(map[int]string{0: "root", 1000: "alice"})
	h := Header{Users: UserTable(users)}
	if !maps.Equal(h.Users, map[string]string{"0": "root", "1000": "alice"}) {
		t.Errorf("UserTable = %v", h.Users)
	}
	if back := h.UserNames(); back.Name(1000) != "alice" || back.Name(0) != "root" {
		t.Errorf("read back: 1000 is %q, 0 is %q", back.Name(1000), back.Name(0))
	}
	if got := UserTable(nil); got != nil {
		t.Errorf("UserTable(nil) = %v, want nil", got)
	}
}
