//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

// statTail is everything after comm in a real stat line of a sleeping user
// process: ppid 1, pgrp/sid 500, no tty, utime 1234, stime 56, cutime 7,
// cstime 8, 3 threads, starttime 98765, vsize 123456789, rss 4321 pages,
// startstack 140724821468064.
const statTail = " S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321 " +
	"18446744073709551615 94483294842880 94483294862761 140724821468064 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 " +
	"94483294878768 94483294880384 94483597451264 140724821469714 140724821469734 140724821469734 140724821471211 0\n"

func TestParseStat(t *testing.T) {
	base := Stat{PID: 42, State: 'S', PPID: 1, PGRP: 500, SID: 500, TTY: 0, Flags: 4194560,
		UTime: 1234, STime: 56, CUTime: 7, CSTime: 8, Threads: 3, StartTicks: 98765, VSizeBytes: 123456789, RSSPages: 4321,
		StartStack: 140724821468064}
	with := func(comm string) Stat { s := base; s.Comm = comm; return s }
	tests := []struct {
		name string
		in   string
		want Stat
	}{
		{"plain", "42 (bash)" + statTail, with("bash")},
		{"space", "42 (my prog)" + statTail, with("my prog")},
		{"parens", "42 ((sd-pam))" + statTail, with("(sd-pam)")},
		{"close-open", "42 () ()" + statTail, with(") (")},
		{"newline", "42 (evil\nname)" + statTail, with("evil\nname")},
		{"empty", "42 ()" + statTail, with("")},
		{"fake fields", "42 (x) Z 9 9 9 (y)" + statTail, with("x) Z 9 9 9 (y")},
		{"only close", "42 ())))" + statTail, with(")))")},
		{"no newline, 22 fields: no startstack", "42 (bash) S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321",
			Stat{PID: 42, Comm: "bash", State: 'S', PPID: 1, PGRP: 500, SID: 500, TTY: 0, Flags: 4194560,
				UTime: 1234, STime: 56, CUTime: 7, CSTime: 8, Threads: 3, StartTicks: 98765, VSizeBytes: 123456789, RSSPages: 4321}},
		{"startstack hidden", "42 (bash) S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321 " +
			"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			Stat{PID: 42, Comm: "bash", State: 'S', PPID: 1, PGRP: 500, SID: 500, TTY: 0, Flags: 4194560,
				UTime: 1234, STime: 56, CUTime: 7, CSTime: 8, Threads: 3, StartTicks: 98765, VSizeBytes: 123456789, RSSPages: 4321}},
		{"tty and tpgid", "42 (vim) T 7 42 7 34817 42 4194304 1 0 0 0 5 6 0 0 20 0 1 0 99 1000 10",
			Stat{PID: 42, Comm: "vim", State: 'T', PPID: 7, PGRP: 42, SID: 7, TTY: 34817, Flags: 4194304,
				UTime: 5, STime: 6, Threads: 1, StartTicks: 99, VSizeBytes: 1000, RSSPages: 10}},
		{"kernel thread", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0 18446744073709551615 0 0",
			Stat{PID: 2, Comm: "kthreadd", State: 'S', Flags: 2129984, Threads: 1, StartTicks: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if err != nil {
				t.Fatalf("parseStat: %v", err)
			}
			if got != tt.want {
				t.Errorf("parseStat =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no parens", "42 bash S 1 500"},
		{"close before open", "42 )bash( S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"truncated", "42 (bash) S 1 500 500 0 -1 4194560 100"},
		{"truncated before rss", "42 (bash) S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789"},
		{"nothing after comm", "42 (bash)"},
		{"bad pid", "4x2 (bash)" + statTail},
		{"no pid", "(bash)" + statTail},
		{"non-letter state", "42 (bash) \x86 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"digit state", "42 (bash) 0 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"long state", "42 (bash) SS 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"non-numeric ppid", "42 (bash) S one 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"negative utime", "42 (bash) S 1 500 500 0 -1 4194560 2035 0 12 0 -1234 56 7 8 20 0 3 0 98765 123456789 4321"},
		{"overflowing starttime", "42 (bash) S 1 500 500 0 -1 4194560 2035 0 12 0 1234 56 7 8 20 0 3 0 98765000000000000000000 123456789 4321"},
		{"garbage", "\x00\xff(\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("parseStat(%q) = %+v, %v; want ErrMalformed", tt.in, got, err)
			}
			if got != (Stat{}) {
				t.Errorf("parseStat(%q) returned %+v with its error; want the zero Stat", tt.in, got)
			}
		})
	}
}

func TestStatKernel(t *testing.T) {
	tests := []struct {
		flags uint64
		want  bool
	}{
		{2129984, true},    // kthreadd: PF_KTHREAD|PF_NOFREEZE|PF_FORKNOEXEC
		{0x04208060, true}, // a kworker
		{4194560, false},   // a user process: PF_RANDOMIZE|PF_FORKNOEXEC
		{0, false},
	}
	for _, tt := range tests {
		if got := (Stat{Flags: tt.flags}).Kernel(); got != tt.want {
			t.Errorf("Stat{Flags: %#x}.Kernel() = %v; want %v", tt.flags, got, tt.want)
		}
	}
}
