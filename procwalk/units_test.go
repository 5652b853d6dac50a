//go:build linux

package procwalk

import (
	"errors"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"0", 0},
		{"4096", 4096},
		{"100B", 100},
		{"512MiB", 512 << 20},
		{"512M", 512 << 20},
		{"2G", 2 << 30},
		{"2g", 2 << 30},
		{"1.5GiB", 3 << 29},
		{"1.5 GiB", 3 << 29},
		{" 1K ", 1024},
		{"1KB", 1000},
		{"2GB", 2e9},
		{"1TiB", 1 << 40},
		{"0.5k", 512},
		{"1.0001k", 1024}, // rounded down to whole bytes
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "1.2.3G", "12 parsecs", "1e3", "NaN", "9999999P", "1GiBs"} {
		if got, err := ParseBytes(bad); !errors.Is(err, ErrBadSize) {
			t.Errorf("ParseBytes(%q) = %d, %v; want ErrBadSize", bad, got, err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{12898509, "12.3 MiB"},
		{3 << 29, "1.5 GiB"},
		{5 << 40, "5.0 TiB"},
		{1<<20 - 1, "1.0 MiB"},
		{1<<20 - 60, "1023.9 KiB"},
		{1<<64 - 1, "16.0 EiB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.in); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
