//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

func TestParseIO(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want IO
	}{
		{"real", "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 512\n",
			IO{RChar: 6976, WChar: 12, SyscR: 10, SyscW: 1, ReadBytes: 4096, WriteBytes: 8192, CancelledWriteBytes: 512}},
		// Without CONFIG_TASK_IO_ACCOUNTING only the char counters exist.
		{"char counters only", "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n", IO{RChar: 1, WChar: 2, SyscR: 3, SyscW: 4}},
		{"unknown line ignored", "rchar: 1\nfuture: x\n", IO{RChar: 1}},
		{"max", "write_bytes: 18446744073709551615", IO{WriteBytes: 1<<64 - 1}},
	}
	for _, tt := range tests {
		got, err := parseIO([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: parseIO: %v", tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: parseIO = %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseIOMalformed(t *testing.T) {
	for _, in := range []string{"", "\n", "rchar: lots\n", "read_bytes: -1\n", "nothing: 1\n", "rchar 5\n"} {
		got, err := parseIO([]byte(in))
		if !errors.Is(err, ErrMalformed) || got != (IO{}) {
			t.Errorf("parseIO(%q) = %+v, %v; want zero IO and ErrMalformed", in, got, err)
		}
	}
}
