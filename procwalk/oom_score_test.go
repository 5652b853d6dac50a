//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

func TestParseOOMScore(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0\n", 0, true},
		{"667\n", 667, true},
		{"2000", 2000, true},
		{" 12 \n", 12, true},
		{"", 0, false},
		{"\n", 0, false},
		{"lots\n", 0, false},
		{"12 13\n", 0, false},
		{"99999999999\n", 0, false}, // beyond any int the kernel prints here
	}
	for _, tt := range tests {
		got, err := parseOOMScore([]byte(tt.in))
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("parseOOMScore(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if !tt.ok && (!errors.Is(err, ErrMalformed) || got != 0) {
			t.Errorf("parseOOMScore(%q) = %d, %v; want 0 and ErrMalformed", tt.in, got, err)
		}
	}
}
