//go:build linux

package frame

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// smapsExcerpt is /proc/PID/smaps of an execd process (kernel 6.18),
// shortened, with an executable whose path holds a space, its text, its
// read-only data, a read-only mapping a debugger wrote into (an
// anonymous page), its data, the heap and another file's read-only
// mapping.
const smapsExcerpt = `00400000-00871000 r-xp 00000000 fe:00 12095105                           /opt/my tools/procwalk
Size:               4548 kB
Rss:                3716 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me sd
00871000-00d11000 r--p 00471000 fe:00 12095105                           /opt/my tools/procwalk
Size:               4736 kB
Rss:                3972 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
00d11000-00d20000 r--p 00911000 fe:00 12095105                           /opt/my tools/procwalk
Rss:                  12 kB
Anonymous:             4 kB
VmFlags: rd mr mw me sd
00d20000-00dba000 rw-p 00920000 fe:00 12095105                           /opt/my tools/procwalk
Rss:                 228 kB
Anonymous:            60 kB
VmFlags: rd wr mr mw me ac sd
00dba000-03016000 rw-p 00000000 00:00 0 
Rss:                 116 kB
Anonymous:           116 kB
VmFlags: rd wr mr mw me ac sd
7fee77c00000-7fee77c10000 r--p 00000000 fe:00 12095106                   /usr/lib/locale/C.utf8/LC_CTYPE
Rss:                  64 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
7fee77c35000-7fee77c37000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   8 kB
Anonymous:             0 kB
`

func TestBinaryMappings(t *testing.T) {
	for _, tt := range []struct {
		name string
		code uint64
		want []span
	}{
		{"code in the text", 0x48d320, []span{{0x400000, 0x871000}, {0x871000, 0xd11000}}},
		{"code at the text's start", 0x400000, []span{{0x400000, 0x871000}, {0x871000, 0xd11000}}},
		{"an address in no mapping", 0x300000, nil},
		{"an address in an anonymous mapping", 0xdba100, nil},
		{"an address in the vdso (inode 0)", 0x7fee77c35010, nil},
	} {
		if got := binaryMappings([]byte(smapsExcerpt), tt.code); !slices.Equal(got, tt.want) {
			t.Errorf("%s: binaryMappings = %x, want %x", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"", "\n\n", "garbage line\nAnonymous: 4 kB\n", "zz-00400000 r-xp 0 fe:00 1 x\n", "00500000-00400000 r-xp 0 fe:00 1 x\n"} {
		if got := binaryMappings([]byte(bad), 0x400100); got != nil {
			t.Errorf("binaryMappings(%q) = %x, want none", bad, got)
		}
	}
}

// TestReleaseBinaryPages drops this test binary's mapped code and
// read-only data and checks that its file-backed resident size fell and
// that the code still runs (this test goes on). A binary built on tmpfs
// (GOTMPDIR, a CI runner's /tmp) has its pages counted as RssShmem, so
// both are summed.
func TestReleaseBinaryPages(t *testing.T) {
	fileBacked := func() int { return selfStatusKB(t, "RssFile") + selfStatusKB(t, "RssShmem") }
	before := fileBacked()
	var buf []byte
	releaseBinaryPages(&buf)
	after := fileBacked()
	t.Logf("RssFile+RssShmem %d kB -> %d kB", before, after)
	if after >= before {
		t.Errorf("RssFile+RssShmem %d kB after releaseBinaryPages, %d kB before: want less", after, before)
	}
	if len(buf) == 0 {
		t.Error("releaseBinaryPages read nothing of /proc/self/smaps into its buffer")
	}
}

func selfStatusKB(t *testing.T, key string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}
