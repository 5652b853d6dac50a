//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

// statusUser is a trimmed real /proc/<pid>/status of a user process.
const statusUser = "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t1\n" +
	"TracerPid:\t0\nUid:\t1000\t1001\t1002\t1003\nGid:\t100\t100\t100\t100\nFDSize:\t256\nGroups:\t 100 \n" +
	"VmPeak:\t    9060 kB\nVmSize:\t    9060 kB\nVmHWM:\t    4100 kB\nVmRSS:\t    3720 kB\nRssAnon:\t     512 kB\nVmSwap:\t     128 kB\n" +
	"Threads:\t1\nSigQ:\t0/96343\nvoluntary_ctxt_switches:\t57\nnonvoluntary_ctxt_switches:\t3\n"

// statusKernel is a kernel thread's status: no Vm* lines at all.
const statusKernel = "Name:\tkthreadd\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t2\nPid:\t2\nPPid:\t0\n" +
	"Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nKthread:\t1\nThreads:\t1\nvoluntary_ctxt_switches:\t1914\nnonvoluntary_ctxt_switches:\t12\n"

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Status
	}{
		{"user", statusUser, Status{RealUID: 1000, EffectiveUID: 1001, SwapBytes: 128 << 10, PeakRSSBytes: 4100 << 10, VoluntaryCtxSwitches: 57, InvoluntaryCtxSwitches: 3}},
		{"kernel thread", statusKernel, Status{VoluntaryCtxSwitches: 1914, InvoluntaryCtxSwitches: 12}},
		{"largest VmSwap", "Uid:\t1\t1\t1\t1\nVmSwap:\t18014398509481983 kB\n", Status{RealUID: 1, EffectiveUID: 1, SwapBytes: 1<<64 - 1024}},
		{"uid only", "Uid:\t65534\t65534\t65534\t65534", Status{RealUID: 65534, EffectiveUID: 65534}},
		{"uid 2^32-1", "Uid:\t4294967295\t4294967295\t4294967295\t4294967295\n", Status{RealUID: 4294967295, EffectiveUID: 4294967295}},
		// A comm with a newline is escaped by the kernel in Name; a raw
		// one must not derail the lines after it.
		{"newline in name", "Name:\tevil\nname\nUid:\t7\t7\t7\t7\nVmSwap:\t1 kB\n", Status{RealUID: 7, EffectiveUID: 7, SwapBytes: 1024}},
		// SIGSTOP (19) pending for the process, SIGHUP (1) for the thread.
		{"pending signals", "Uid:\t1\t1\t1\t1\nSigPnd:\t0000000000000001\nShdPnd:\t0000000000040000\nSigBlk:\t0000000000010000\n", Status{RealUID: 1, EffectiveUID: 1, PendingSignals: 1<<18 | 1}},
		// mips: 128 signals, 32 digits; the low 64 are kept.
		{"128 signals", "Uid:\t1\t1\t1\t1\nShdPnd:\t80000000000000000000000000040000\nVmSwap:\t4 kB\n", Status{RealUID: 1, EffectiveUID: 1, PendingSignals: 1 << 18, SwapBytes: 4096}},
		// A mask it cannot read fails no other line: every signal may be pending.
		{"bad ShdPnd", "Uid:\t1\t1\t1\t1\nShdPnd:\tzz\nVmSwap:\t4 kB\n", Status{RealUID: 1, EffectiveUID: 1, PendingSignals: ^uint64(0), SwapBytes: 4096}},
		{"unparsable ctxt switches are zero", "Uid:\t1\t1\t1\t1\nvoluntary_ctxt_switches:\tmany\n", Status{RealUID: 1, EffectiveUID: 1}},
	}
	for _, tt := range tests {
		got, err := parseStatus([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: parseStatus: %v", tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: parseStatus = %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseStatusMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no Uid line", "Name:\tbash\nVmSwap:\t0 kB\n"},
		{"short Uid", "Uid:\t1000\n"},
		{"bad Uid", "Uid:\tme\tme\tme\tme\n"},
		{"bad VmSwap", "Uid:\t1\t1\t1\t1\nVmSwap:\tlots kB\n"},
		{"empty VmSwap", "Uid:\t1\t1\t1\t1\nVmSwap:\n"},
		{"VmSwap bytes overflow", "Uid:\t1\t1\t1\t1\nVmSwap:\t18014398509481984 kB\n"}, // 2^54 kB
	}
	for _, tt := range tests {
		got, err := parseStatus([]byte(tt.in))
		if !errors.Is(err, ErrMalformed) || got != (Status{}) {
			t.Errorf("%s: parseStatus(%q) = %+v, %v; want zero Status and ErrMalformed", tt.name, tt.in, got, err)
		}
	}
}
