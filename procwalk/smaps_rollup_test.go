//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

// smapsReal is /proc/self/smaps_rollup of a cat on Linux 6.18.
const smapsReal = `5576aeec7000-7fff007b0000 ---p 00000000 00:00 0                          [rollup]
Rss:                1748 kB
Pss:                 152 kB
Pss_Dirty:           112 kB
Pss_Anon:            112 kB
Pss_File:             40 kB
Pss_Shmem:             0 kB
Shared_Clean:       1596 kB
Shared_Dirty:          0 kB
Private_Clean:        40 kB
Private_Dirty:       112 kB
Referenced:         1748 kB
Anonymous:           112 kB
KSM:                   0 kB
LazyFree:              0 kB
AnonHugePages:         0 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:    2048 kB
Swap:                 64 kB
SwapPss:              16 kB
Locked:                0 kB
`

func TestParseSmapsRollup(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want SmapsRollup
	}{
		// USS = Private_Clean + Private_Dirty + Private_Hugetlb = 40+112+2048 kB.
		{"real", smapsReal, SmapsRollup{RSSBytes: 1748 << 10, PSSBytes: 152 << 10, USSBytes: 2200 << 10, SwapBytes: 64 << 10, SwapPSSBytes: 16 << 10}},
		// Linux 4.14 had no Pss_* breakdown and no Private_Hugetlb line.
		{"old kernel", "00400000-7fff ---p 00000000 00:00 0 [rollup]\nRss: 100 kB\nPss: 50 kB\nPrivate_Clean: 10 kB\nPrivate_Dirty: 20 kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
			SmapsRollup{RSSBytes: 100 << 10, PSSBytes: 50 << 10, USSBytes: 30 << 10}},
		{"no header, no newline", "Pss: 7 kB", SmapsRollup{PSSBytes: 7 << 10}},
		{"unknown keys ignored", "Rss: 1 kB\nFuture_Thing: x kB\n", SmapsRollup{RSSBytes: 1 << 10}},
	}
	for _, tt := range tests {
		got, err := parseSmapsRollup([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: parseSmapsRollup: %v", tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: parseSmapsRollup = %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseSmapsRollupMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty (kernel thread, zombie)", ""},
		{"header only", "5576aeec7000-7fff007b0000 ---p 00000000 00:00 0 [rollup]\n"},
		{"bad number", "Rss: many kB\n"},
		{"negative", "Pss: -5 kB\n"},
		{"no value", "Private_Dirty:\n"},
		{"bytes overflow", "Rss: 18014398509481984 kB\n"},
		{"USS sum overflows", "Private_Clean: 18014398509481983 kB\nPrivate_Dirty: 1 kB\n"},
	}
	for _, tt := range tests {
		got, err := parseSmapsRollup([]byte(tt.in))
		if !errors.Is(err, ErrMalformed) || got != (SmapsRollup{}) {
			t.Errorf("%s: parseSmapsRollup(%q) = %+v, %v; want zero and ErrMalformed", tt.name, tt.in, got, err)
		}
	}
}
