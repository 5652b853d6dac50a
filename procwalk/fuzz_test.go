//go:build linux

package procwalk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Fuzz targets for every parser: none may panic on any input, and what they
// return must keep the invariants below. Seeds live in testdata/fuzz/FuzzXxx
// (real files and the adversarial fixture); run one with e.g.
//
//	go test ./procwalk/ -run '^$' -fuzz '^FuzzParseStat$' -fuzztime 10s

// malformedOnly fails unless err is nil or wraps ErrMalformed: parsers
// report bad input one way only.
func malformedOnly(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrMalformed) {
		t.Fatalf("error %v does not wrap ErrMalformed", err)
	}
}

// kBLines returns the first word after "key:" on every line with that key,
// parsed by strconv: the reference the kB parsers are checked against.
func kBLines(b []byte, key string) []uint64 {
	var out []uint64
	for _, line := range strings.Split(string(b), "\n") {
		k, val, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.FieldsFunc(val, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
		if len(f) == 0 {
			out = append(out, 1<<64-1) // no number: the parser must refuse it
			continue
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			kb = 1<<64 - 1
		}
		out = append(out, kb)
	}
	return out
}

// bytesOfKB converts like the parsers must: false when kb bytes overflow.
func bytesOfKB(kb uint64) (uint64, bool) { return kb << 10, kb <= (1<<64-1)>>10 }

// formatStat writes s back in the kernel's stat format. The state is one
// raw byte (%c would write a non-ASCII byte as a two-byte rune).
func formatStat(s Stat) []byte {
	return fmt.Appendf(nil, "%d (%s) %s %d %d %d %d -1 %d 0 0 0 0 %d %d %d %d 20 0 %d 0 %d %d %d 0 1 2 %d\n",
		s.PID, s.Comm, []byte{s.State}, s.PPID, s.PGRP, s.SID, s.TTY, s.Flags,
		s.UTime, s.STime, s.CUTime, s.CSTime, s.Threads, s.StartTicks, s.VSizeBytes, s.RSSPages, s.StartStack)
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (bash)" + statTail))
	f.Add([]byte("42 (x) Z 9 9 9 (y)" + statTail))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStat(b)
		malformedOnly(t, err)
		if err != nil {
			if s != (Stat{}) {
				t.Fatalf("error %v with a non-zero Stat %+v", err, s)
			}
			return
		}
		// comm lies between the first '(' and the last ')'.
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if s.Comm != string(b[open+1:close]) {
			t.Fatalf("comm %q; want %q", s.Comm, b[open+1:close])
		}
		// The pid is the number before the '('.
		if pid, err := strconv.ParseInt(strings.TrimSpace(string(b[:open])), 10, 64); err != nil || int(pid) != s.PID {
			t.Fatalf("pid %d from %q (%v)", s.PID, b[:open], err)
		}
		if c := s.State; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			t.Fatalf("state %q is not a letter", c)
		}
		// Writing it back and parsing again gives the same Stat, whatever
		// the comm holds.
		again, err := parseStat(formatStat(s))
		if err != nil || again != s {
			t.Fatalf("round trip of %+v: %+v, %v", s, again, err)
		}
		// The scan loop's variant agrees.
		s2, comm, err := parseStatNoComm(b)
		if err != nil || string(comm) != s.Comm || s2.Comm != "" {
			t.Fatalf("parseStatNoComm = %+v, %q, %v", s2, comm, err)
		}
	})
}

func FuzzParseStatm(f *testing.F) {
	f.Add([]byte("765 431 402 5 0 123 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatm(b)
		malformedOnly(t, err)
		if err != nil {
			return
		}
		line := fmt.Appendf(nil, "%d %d %d %d 0 %d 0\n", s.SizePages, s.ResidentPages, s.SharedPages, s.TextPages, s.DataPages)
		if again, err := parseStatm(line); err != nil || again != s {
			t.Fatalf("round trip of %+v: %+v, %v", s, again, err)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusUser))
	f.Add([]byte(statusKernel))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		malformedOnly(t, err)
		if err != nil {
			if s != (Status{}) {
				t.Fatalf("error %v with a non-zero Status %+v", err, s)
			}
			return
		}
		if !bytes.Contains(b, []byte("Uid:")) {
			t.Fatalf("success without a Uid line: %+v", s)
		}
		// The last VmSwap line counts, and its kB fit in bytes.
		var want uint64
		if kbs := kBLines(b, "VmSwap"); len(kbs) > 0 {
			var ok bool
			if want, ok = bytesOfKB(kbs[len(kbs)-1]); !ok {
				t.Fatalf("VmSwap of %d kB overflows bytes, parsed as %d", kbs[len(kbs)-1], s.SwapBytes)
			}
		}
		if s.SwapBytes != want {
			t.Fatalf("SwapBytes %d; want %d", s.SwapBytes, want)
		}
	})
}

func FuzzParseSmapsRollup(f *testing.F) {
	f.Add([]byte(smapsReal))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSmapsRollup(b)
		malformedOnly(t, err)
		if err != nil {
			if s != (SmapsRollup{}) {
				t.Fatalf("error %v with a non-zero result %+v", err, s)
			}
			return
		}
		for _, v := range []uint64{s.RSSBytes, s.PSSBytes, s.USSBytes, s.SwapBytes, s.SwapPSSBytes} {
			if v%1024 != 0 {
				t.Fatalf("%+v: %d is not a whole number of kB", s, v)
			}
		}
		// Recomputed with strconv: the last Rss/Pss/Swap/SwapPss line counts,
		// USS sums every Private_* line, and nothing overflows.
		last := func(key string) uint64 {
			kbs := kBLines(b, key)
			if len(kbs) == 0 {
				return 0
			}
			v, ok := bytesOfKB(kbs[len(kbs)-1])
			if !ok {
				t.Fatalf("%s of %d kB overflows bytes; parsed %+v", key, kbs[len(kbs)-1], s)
			}
			return v
		}
		var uss uint64
		for _, key := range []string{"Private_Clean", "Private_Dirty", "Private_Hugetlb"} {
			for _, kb := range kBLines(b, key) {
				v, ok := bytesOfKB(kb)
				if !ok || uss+v < uss {
					t.Fatalf("%s lines overflow bytes; parsed %+v", key, s)
				}
				uss += v
			}
		}
		want := SmapsRollup{RSSBytes: last("Rss"), PSSBytes: last("Pss"), USSBytes: uss, SwapBytes: last("Swap"), SwapPSSBytes: last("SwapPss")}
		if s != want {
			t.Fatalf("parseSmapsRollup = %+v; want %+v", s, want)
		}
	})
}

func FuzzParseIO(f *testing.F) {
	f.Add([]byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseIO(b)
		malformedOnly(t, err)
		if err != nil {
			if v != (IO{}) {
				t.Fatalf("error %v with a non-zero IO %+v", err, v)
			}
			return
		}
		line := fmt.Appendf(nil, "rchar: %d\nwchar: %d\nsyscr: %d\nsyscw: %d\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: %d\n",
			v.RChar, v.WChar, v.SyscR, v.SyscW, v.ReadBytes, v.WriteBytes, v.CancelledWriteBytes)
		if again, err := parseIO(line); err != nil || again != v {
			t.Fatalf("round trip of %+v: %+v, %v", v, again, err)
		}
	})
}

func FuzzParseCmdline(f *testing.F) {
	f.Add([]byte("python3\x00-m\x00http.server\x00"))
	f.Add([]byte("sshd: dev@pts/3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		args := parseCmdline(b)
		if len(b) == 0 {
			if args != nil {
				t.Fatalf("empty cmdline gave %q", args)
			}
			return
		}
		// Joining the arguments with NULs gives back the input, less one
		// trailing NUL.
		want := strings.TrimSuffix(string(b), "\x00")
		if got := strings.Join(args, "\x00"); got != want || len(args) == 0 {
			t.Fatalf("parseCmdline(%q) = %q", b, args)
		}
	})
}

func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("9:name=systemd:/\n4:memory:/process_api/b084f6\n0::/\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines, err := ParseCgroup(b)
		malformedOnly(t, err)
		if err != nil {
			if lines != nil {
				t.Fatalf("error %v with lines %+v", err, lines)
			}
			return
		}
		var want []string
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				want = append(want, l)
			}
		}
		if len(lines) != len(want) {
			t.Fatalf("%d lines from %d non-empty input lines", len(lines), len(want))
		}
		for i, l := range lines {
			if strings.Contains(l.Controllers, ":") || strings.Contains(l.Path, "\n") || !strings.HasSuffix(want[i], ":"+l.Controllers+":"+l.Path) {
				t.Fatalf("line %q parsed as %+v", want[i], l)
			}
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("cpu  1 2 3\ncpu0 1 2 3\ncpu1 1 2 3\nbtime 1795312712\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		btime, cpus, err := parseProcStat(b)
		malformedOnly(t, err)
		// Recount with the standard library: any bad btime line is an
		// error, else the last one counts; every "cpuN" line is a CPU (at
		// least one).
		var wantBtime int64
		wantCPUs, found, bad := 0, false, false
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok && v != "" {
				v = strings.Trim(v, " \t\r")
				n, err := strconv.ParseInt(v, 10, 64)
				wantBtime, found = n, true
				bad = bad || err != nil || strings.HasPrefix(v, "+")
			}
			if len(line) > 3 && strings.HasPrefix(line, "cpu") && line[3] >= '0' && line[3] <= '9' {
				wantCPUs++
			}
		}
		wantCPUs = max(wantCPUs, 1)
		if (err == nil) != (found && !bad) || err == nil && (btime != wantBtime || cpus != wantCPUs) {
			t.Fatalf("parseProcStat = %d, %d, %v; want %d, %d (found %v, bad %v)", btime, cpus, err, wantBtime, wantCPUs, found, bad)
		}
	})
}

func FuzzParseMemTotal(f *testing.F) {
	f.Add([]byte("MemTotal:       24682416 kB\nMemFree:        19479844 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := parseMemTotal(b)
		// The first MemTotal line counts; 0 when it is missing, unparsable
		// or too big to be bytes.
		var want uint64
		if kbs := kBLines(b, "MemTotal"); len(kbs) > 0 {
			if bytes, ok := bytesOfKB(kbs[0]); ok && kbs[0] != 1<<64-1 {
				want = bytes
			}
		}
		if v != want {
			t.Fatalf("parseMemTotal = %d; want %d", v, want)
		}
	})
}

func FuzzParseAuxvClockTicks(f *testing.F) {
	f.Add(auxv(33, 0x7ffd, 6, 4096, 17, 100, 0, 0))
	f.Add(auxv(17, 250))
	f.Fuzz(func(t *testing.T, b []byte) {
		hz := ParseAuxvClockTicks(b)
		// hz comes from the first AT_CLKTCK entry before AT_NULL.
		var want uint64
		for i := 0; i+16 <= len(b); i += 16 {
			tag := binary.NativeEndian.Uint64(b[i:])
			if tag == 0 {
				break
			}
			if tag == atClkTck {
				want = binary.NativeEndian.Uint64(b[i+8:])
				break
			}
		}
		if hz != want {
			t.Fatalf("parseAuxvClockTicks = %d; want %d", hz, want)
		}
	})
}

func FuzzParseHidePID(f *testing.F) {
	f.Add([]byte("22 27 0:21 / /proc rw,relatime shared:13 - proc proc rw,hidepid=2\n"), "/proc")
	f.Add([]byte("22 27 0:21 / /proc rw - proc proc rw,hidepid=invisible\n95 22 0:60 / /proc rw - proc proc rw\n"), "/proc")
	f.Fuzz(func(t *testing.T, b []byte, root string) {
		v := parseHidePID(b, root)
		if v == "" {
			return
		}
		if v == "0" || v == "off" || strings.ContainsAny(v, ", \t\n") || !bytes.Contains(b, []byte("hidepid="+v)) {
			t.Fatalf("parseHidePID = %q from %q", v, b)
		}
	})
}

func FuzzParseOOMScore(f *testing.F) {
	f.Add([]byte("667\n"))
	f.Add([]byte("-0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseOOMScore(b)
		malformedOnly(t, err)
		if err != nil {
			if v != 0 {
				t.Fatalf("error %v with %d", err, v)
			}
			return
		}
		// What parses is one decimal int32 among spaces, as strconv reads it.
		want, perr := strconv.ParseInt(string(bytes.Trim(b, " \t\n\r")), 10, 32)
		if perr != nil || int(want) != v {
			t.Fatalf("parseOOMScore(%q) = %d; strconv says %d, %v", b, v, want, perr)
		}
	})
}
