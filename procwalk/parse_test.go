//go:build linux

package procwalk

import (
	"slices"
	"testing"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

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
		line, b = fsio.NextLine(b)
		lines = append(lines, string(line))
	}
	if want := []string{"a", "", "b", "c"}; !slices.Equal(lines, want) {
		t.Errorf("nextLine split %q; want %q", lines, want)
	}
}
