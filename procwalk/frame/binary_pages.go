//go:build linux

package frame

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// binary_pages.go hands back the pages of procwalk's own executable that
// the process has mapped: its code and read-only data, 8 to 9 MiB of a
// daemon's resident size once start-up (flags, the BPF program's load,
// the first gather) has run through most of the binary. A gather runs
// through about 5 MiB of it. The pages stay in the page cache: the next
// use maps them again (a minor fault, with the pages around), and what
// start-up alone used stays out of the resident size. Unmapped, they are
// also pages the kernel may reclaim first when memory is short.
//
// Only mappings that cannot differ from the file are dropped: private,
// not writable, with no anonymous page (a debugger's breakpoint or a
// uprobe copies the page it writes: such a mapping is left alone). A
// running executable cannot be written (ETXTBSY), so what comes back is
// what was there.

// span is an address range [start, end).
type span struct{ start, end uint64 }

// releaseBinaryPages unmaps the pages of the executable's read-only
// mappings, reading /proc/self/smaps into *buf (kept for the next call).
// It is best effort: on any failure it leaves the mappings as they are.
func releaseBinaryPages(buf *[]byte) {
	pc, _, _, ok := runtime.Caller(0) // an address in the executable's code
	if !ok {
		return
	}
	b, err := readSelfSmaps(buf)
	if err != nil {
		return
	}
	for _, s := range binaryMappings(b, uint64(pc)) {
		unix.Syscall(unix.SYS_MADVISE, uintptr(s.start), uintptr(s.end-s.start), unix.MADV_DONTNEED)
	}
}

// readSelfSmaps reads /proc/self/smaps whole into *buf (fsio.ReadAllFD);
// a file cut at fsio.MaxFileBytes is an error: a mapping could be missed.
func readSelfSmaps(buf *[]byte) ([]byte, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if cap(*buf) == 0 {
		*buf = make([]byte, 0, 64<<10)
	}
	b, truncated, err := fsio.ReadAllFD(int(f.Fd()), *buf, false)
	*buf = b
	if err == nil && truncated {
		err = errors.New("/proc/self/smaps is over fsio.MaxFileBytes")
	}
	return b, err
}

// binaryMappings returns, from smaps (the format of /proc/PID/smaps), the
// mappings of the file mapped at code that are private, not writable and
// hold no anonymous page.
func binaryMappings(smaps []byte, code uint64) []span {
	type mapping struct {
		span
		perms, dev, inode []byte
		anonymous         bool
	}
	var maps []mapping
	var fields [6][]byte
	for rest := smaps; len(rest) > 0; {
		var line []byte
		line, rest = fsio.NextLine(rest)
		n := fsio.SplitFields(line, fields[:])
		if n == 0 {
			continue
		}
		if key := fields[0]; key[len(key)-1] == ':' {
			if len(maps) > 0 && string(key) == "Anonymous:" && n >= 2 && string(fields[1]) != "0" {
				maps[len(maps)-1].anonymous = true
			}
			continue
		}
		// A mapping's first line: "START-END PERMS OFFSET DEV INODE [PATH]".
		lo, hi, ok := bytes.Cut(fields[0], []byte{'-'})
		if !ok || n < 5 {
			continue
		}
		start, ok1 := parseHex(lo)
		end, ok2 := parseHex(hi)
		if !ok1 || !ok2 || end <= start || len(fields[1]) != 4 {
			continue
		}
		maps = append(maps, mapping{span: span{start, end}, perms: fields[1], dev: fields[3], inode: fields[4]})
	}
	var exe *mapping
	for i := range maps {
		if m := &maps[i]; m.start <= code && code < m.end {
			exe = m
		}
	}
	if exe == nil || string(exe.inode) == "0" {
		return nil
	}
	var out []span
	for _, m := range maps {
		if bytes.Equal(m.dev, exe.dev) && bytes.Equal(m.inode, exe.inode) &&
			m.perms[1] != 'w' && m.perms[3] == 'p' && !m.anonymous {
			out = append(out, m.span)
		}
	}
	return out
}

// parseHex parses a hexadecimal address of smaps.
func parseHex(b []byte) (uint64, bool) {
	v, err := strconv.ParseUint(string(b), 16, 64)
	return v, err == nil
}
