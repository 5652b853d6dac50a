//go:build linux

package procwalk

import (
	"math/bits"
	"strings"
	"testing"
)

func TestFieldsString(t *testing.T) {
	tests := []struct {
		f    Fields
		want string
	}{
		{0, ""},
		{FieldStatus, "status"},
		{FieldIO | FieldCmdline, "cmdline,io"},
		{FieldSmaps, "smaps"},
		{FieldOOMScore, "oom_score"},
		{FieldOwner | FieldSwap, "owner,swap"},
		{AllFields, "status,cmdline,exe,cwd,io,fds,cgroup,oom_score,owner,swap"},
		{AllFields | FieldSmaps, "status,cmdline,exe,cwd,io,smaps,fds,cgroup,oom_score,owner,swap"},
		{1 << 30, ""}, // no name for unknown bits
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("Fields(%#x).String() = %q; want %q", uint32(tt.f), got, tt.want)
		}
	}
}

func TestAllFieldsExcludesSmaps(t *testing.T) {
	// smaps_rollup locks each target's mmap: it must stay opt-in.
	if AllFields&FieldSmaps != 0 {
		t.Errorf("AllFields = %v includes smaps", AllFields)
	}
	for _, f := range []Fields{FieldStatus, FieldCmdline, FieldExe, FieldCwd, FieldIO, FieldFDs, FieldCgroup, FieldOOMScore, FieldOwner, FieldSwap} {
		if AllFields&f == 0 {
			t.Errorf("AllFields lacks %v", f)
		}
	}
}

func TestParseFields(t *testing.T) {
	tests := []struct {
		in   string
		want Fields
	}{
		{"", 0},
		{"status", FieldStatus},
		{"io, smaps", FieldIO | FieldSmaps},
		{"cmdline,cmdline", FieldCmdline},
		{"all", AllFields},
		{"all,smaps", AllFields | FieldSmaps},
		{",,exe,", FieldExe},
	}
	for _, tt := range tests {
		got, err := ParseFields(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseFields(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// String and ParseFields round-trip.
	for f := Fields(0); f < fieldEnd; f++ {
		got, err := ParseFields(f.String())
		if err != nil || got != f {
			t.Fatalf("ParseFields(%q) = %v, %v; want %v", f.String(), got, err, f)
		}
	}
}

func TestParseFieldsUnknown(t *testing.T) {
	for _, in := range []string{"pss", "status,bogus", "ALL", "io;cmdline"} {
		_, err := ParseFields(in)
		if err == nil {
			t.Errorf("ParseFields(%q): no error", in)
			continue
		}
		// The message must name the bad field and list the good ones.
		if msg := err.Error(); !strings.Contains(msg, "unknown field") || !strings.Contains(msg, "smaps") {
			t.Errorf("ParseFields(%q) error %q does not name the known fields", in, msg)
		}
	}
}

// Every field bit has a name, and names are unique: String and ParseFields
// round-trip each one.
func TestFieldNamesCoverEveryBit(t *testing.T) {
	if got, want := len(fieldNames()), bits.Len32(uint32(fieldEnd))-1; got != want {
		t.Fatalf("%d field names for %d field bits", got, want)
	}
	for b := Fields(1); b < fieldEnd; b <<= 1 {
		if got, err := ParseFields(b.String()); err != nil || got != b {
			t.Errorf("ParseFields(%q) = %v, %v; want %#x", b.String(), got, err, uint32(b))
		}
	}
}
