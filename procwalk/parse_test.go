package procwalk

import (
	"slices"
	"testing"
)

func TestAtou(t *testing.T) {
	tests := []struct {
		in     string
		want   uint64
		wantOK bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"007", 7, true},
		{"18446744073709551615", 1<<64 - 1, true}, // max uint64: rlim "unlimited" in stat
		{"000000000000000000000001", 1, true},     // leading zeros are not an overflow
		{"18446744073709551616", 0, false},        // max+1
		{"99999999999999999999", 0, false},
		{"184467440737095516150", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1 ", 0, false},
		{" 1", 0, false},
		{"12a", 0, false},
		{"0x10", 0, false},
	}
	for _, tt := range tests {
		got, ok := atou([]byte(tt.in))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("atou(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestAtoi(t *testing.T) {
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"-1", -1, true}, // tpgid of a process without a terminal
		{"34816", 34816, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"-", 0, false},
		{"--1", 0, false},
		{"", 0, false},
		{"1-", 0, false},
	}
	for _, tt := range tests {
		got, ok := atoi([]byte(tt.in))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("atoi(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestKeyValue(t *testing.T) {
	tests := []struct {
		line     string
		key, val string
		ok       bool
	}{
		{"VmSwap:\t     128 kB", "VmSwap", "128", true},
		{"rchar: 6976", "rchar", "6976", true},
		{"Uid:\t1000\t1000\t1000\t1000", "Uid", "1000", true},
		{"Pss_Anon:            112 kB", "Pss_Anon", "112", true},
		{"Groups:\t ", "Groups", "", true},
		{"Key:", "Key", "", true},
		{"a:b:c", "a", "b:c", true},
		{":value", "", "", false}, // no key
		{"no colon here", "", "", false},
		{"", "", "", false},
		// The smaps_rollup header has a colon inside "00:00"; its key matches nothing.
		{"5576aeec7000-7fff007b0000 ---p 00000000 00:00 0   [rollup]", "5576aeec7000-7fff007b0000 ---p 00000000 00", "00", true},
	}
	for _, tt := range tests {
		key, val, ok := keyValue([]byte(tt.line))
		if string(key) != tt.key || string(val) != tt.val || ok != tt.ok {
			t.Errorf("keyValue(%q) = %q, %q, %v; want %q, %q, %v", tt.line, key, val, ok, tt.key, tt.val, tt.ok)
		}
	}
}

func TestSplitFields(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want []string
	}{
		{"a b c", 8, []string{"a", "b", "c"}},
		{"  a\t\tb \n c\n", 8, []string{"a", "b", "c"}},
		{"a b c d", 2, []string{"a", "b"}}, // stops when out is full
		{"", 4, []string{}},
		{" \t\n ", 4, []string{}},
		{"one", 0, []string{}},
		{"x\ry", 4, []string{"x", "y"}},
	}
	for _, tt := range tests {
		out := make([][]byte, tt.max)
		n := splitFields([]byte(tt.in), out)
		got := []string{}
		for _, f := range out[:n] {
			got = append(got, string(f))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitFields(%q, %d) = %q; want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestTrimSpaceAndNextLine(t *testing.T) {
	if got := string(trimSpace([]byte(" \t42\n"))); got != "42" {
		t.Errorf("trimSpace = %q; want %q", got, "42")
	}
	if got := trimSpace([]byte(" \n")); len(got) != 0 {
		t.Errorf("trimSpace of blanks = %q; want empty", got)
	}
	var lines []string
	for b := []byte("a\n\nb\nc"); len(b) > 0; {
		var line []byte
		line, b = nextLine(b)
		lines = append(lines, string(line))
	}
	if want := []string{"a", "", "b", "c"}; !slices.Equal(lines, want) {
		t.Errorf("nextLine split %q; want %q", lines, want)
	}
}
