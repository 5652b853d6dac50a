//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

func TestParseStatm(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Statm
	}{
		{"real", "765 431 402 5 0 123 0\n", Statm{SizePages: 765, ResidentPages: 431, SharedPages: 402, TextPages: 5, DataPages: 123}},
		{"zombie or kernel thread", "0 0 0 0 0 0 0\n", Statm{}},
		{"no newline", "10 2 1 1 0 3 0", Statm{SizePages: 10, ResidentPages: 2, SharedPages: 1, TextPages: 1, DataPages: 3}},
		{"six fields (dt dropped)", "10 2 1 1 0 3", Statm{SizePages: 10, ResidentPages: 2, SharedPages: 1, TextPages: 1, DataPages: 3}},
		{"huge", "18446744073709551615 1 0 0 0 0 0", Statm{SizePages: 1<<64 - 1, ResidentPages: 1}},
	}
	for _, tt := range tests {
		got, err := parseStatm([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: parseStatm(%q): %v", tt.name, tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: parseStatm(%q) = %+v; want %+v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestParseStatmMalformed(t *testing.T) {
	for _, in := range []string{"", "\n", "1 2 3 4 5", "1 2 x 4 5 6 7", "-1 2 3 4 5 6 7", "garbage"} {
		got, err := parseStatm([]byte(in))
		if !errors.Is(err, ErrMalformed) || got != (Statm{}) {
			t.Errorf("parseStatm(%q) = %+v, %v; want zero Statm and ErrMalformed", in, got, err)
		}
	}
}
