package procwalk

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
)

// dirent builds one getdents64 record for name, padded to 8 bytes as the
// kernel pads it.
func dirent(name string) []byte {
	reclen := (fsio.DirentNameOffset + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint16(b[16:], uint16(reclen))
	copy(b[fsio.DirentNameOffset:], name)
	return b
}

func TestParseDirents(t *testing.T) {
	names := func(b []byte) []string {
		var out []string
		parseDirents(b, func(name []byte) { out = append(out, string(name)) })
		return out
	}
	good := slices.Concat(dirent("."), dirent(".."), dirent("1"), dirent("4194304"), dirent("self"))
	short := dirent("2")
	binary.NativeEndian.PutUint16(short[16:], 18) // shorter than its own header
	long := dirent("3")
	binary.NativeEndian.PutUint16(long[16:], 200) // runs past the buffer
	tests := []struct {
		name string
		b    []byte
		want []string
	}{
		{"records", good, []string{".", "..", "1", "4194304", "self"}},
		{"empty", nil, nil},
		{"cut header", good[:10], nil},
		{"cut record", good[:len(good)-1], []string{".", "..", "1", "4194304"}},
		{"short reclen", slices.Concat(dirent("1"), short, dirent("4")), []string{"1"}},
		{"long reclen", slices.Concat(dirent("1"), long), []string{"1"}},
		{"empty name", slices.Concat(dirent(""), dirent("5")), []string{"5"}},
	}
	for _, tt := range tests {
		if got := names(tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("%s: names %q; want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzParseDirents(f *testing.F) {
	f.Add(slices.Concat(dirent("1"), dirent("self"), dirent("4194304")))
	f.Add(dirent("")[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		total := 0
		parseDirents(b, func(name []byte) {
			if len(name) == 0 || slices.Contains(name, 0) {
				t.Fatalf("name %q: empty or holding a NUL", name)
			}
			total += fsio.DirentNameOffset + len(name)
		})
		if total > len(b) {
			t.Fatalf("names of %d bytes with headers from %d bytes of records", total, len(b))
		}
	})
}
