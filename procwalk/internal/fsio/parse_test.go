//go:build linux

package fsio

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func FuzzAtoi(f *testing.F) {
	for _, s := range []string{"0", "-1", "18446744073709551615", "-9223372036854775808", "9223372036854775808", "007", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// atou and atoi agree with strconv on plain decimal input and refuse
		// signs strconv would take ("+1") and anything else.
		plain := s != "" && strings.Trim(s, "0123456789") == ""
		u, ok := Atou([]byte(s))
		wu, err := strconv.ParseUint(s, 10, 64)
		if ok != (plain && err == nil) || ok && u != wu {
			t.Fatalf("atou(%q) = %d, %v; strconv: %d, %v", s, u, ok, wu, err)
		}
		signed := strings.TrimPrefix(s, "-")
		plain = signed != "" && strings.Trim(signed, "0123456789") == ""
		i, ok := Atoi([]byte(s))
		wi, err := strconv.ParseInt(s, 10, 64)
		if ok != (plain && err == nil) || ok && i != wi {
			t.Fatalf("atoi(%q) = %d, %v; strconv: %d, %v", s, i, ok, wi, err)
		}
	})
}

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
		got, ok := Atou([]byte(tt.in))
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
		got, ok := Atoi([]byte(tt.in))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("atoi(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
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
		n := SplitFields([]byte(tt.in), out)
		got := []string{}
		for _, f := range out[:n] {
			got = append(got, string(f))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitFields(%q, %d) = %q; want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
