//go:build linux

package fsio

import (
	"encoding/binary"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// dirent builds one getdents64 record for name of type typ, padded to 8
// bytes as the kernel pads it.
func dirent(name string, typ byte) []byte {
	reclen := (DirentNameOffset + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint16(b[direntReclenOffset:], uint16(reclen))
	b[direntTypeOffset] = typ
	copy(b[DirentNameOffset:], name)
	return b
}

func TestParseDirents(t *testing.T) {
	entries := func(b []byte) []string {
		var out []string
		ParseDirents(b, func(name []byte, typ byte) { out = append(out, string(name)+":"+strconv.Itoa(int(typ))) })
		return out
	}
	good := slices.Concat(dirent(".", syscall.DT_DIR), dirent("..", syscall.DT_DIR), dirent("1", syscall.DT_DIR),
		dirent("4194304", syscall.DT_DIR), dirent("self", syscall.DT_LNK), dirent("cgroup.procs", syscall.DT_UNKNOWN))
	short := dirent("2", syscall.DT_DIR)
	binary.NativeEndian.PutUint16(short[direntReclenOffset:], 18) // shorter than its own header
	long := dirent("3", syscall.DT_DIR)
	binary.NativeEndian.PutUint16(long[direntReclenOffset:], 200) // runs past the buffer
	full := dirent("12345", syscall.DT_DIR)                       // name and NUL fill the record: 19+5+1 = 25, padded to 32
	full = full[:DirentNameOffset+5]                              // cut to the name, no NUL, no padding
	binary.NativeEndian.PutUint16(full[direntReclenOffset:], uint16(len(full)))
	tests := []struct {
		name string
		b    []byte
		want []string
	}{
		{"records", good, []string{".:4", "..:4", "1:4", "4194304:4", "self:10", "cgroup.procs:0"}},
		{"empty", nil, nil},
		{"cut header", good[:10], nil},
		{"cut record", good[:len(good)-1], []string{".:4", "..:4", "1:4", "4194304:4", "self:10"}},
		{"short reclen", slices.Concat(dirent("1", syscall.DT_DIR), short, dirent("4", syscall.DT_DIR)), []string{"1:4"}},
		{"long reclen", slices.Concat(dirent("1", syscall.DT_DIR), long), []string{"1:4"}},
		{"empty name", slices.Concat(dirent("", syscall.DT_DIR), dirent("5", syscall.DT_DIR)), []string{"5:4"}},
		{"name to the end", slices.Concat(full, dirent("6", syscall.DT_DIR)), []string{"12345:4", "6:4"}},
	}
	for _, tt := range tests {
		if got := entries(tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("%s: entries %q; want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzParseDirents(f *testing.F) {
	f.Add(slices.Concat(dirent("1", syscall.DT_DIR), dirent("self", syscall.DT_LNK), dirent("4194304", syscall.DT_DIR)))
	f.Add(dirent("", 0)[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		total := 0
		ParseDirents(b, func(name []byte, _ byte) {
			if len(name) == 0 || slices.Contains(name, 0) {
				t.Fatalf("name %q: empty or holding a NUL", name)
			}
			total += DirentNameOffset + len(name)
		})
		if total > len(b) {
			t.Fatalf("names of %d bytes with headers from %d bytes of records", total, len(b))
		}
	})
}

func TestEachDirent(t *testing.T) {
	fd, err := syscall.Open("testdata", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var names []string
	// A buffer of one record at a time: the walk takes many getdents calls.
	if err := EachDirent(fd, make([]byte, 64), func(name []byte, typ byte) {
		names = append(names, string(name)+":"+strconv.Itoa(int(typ)))
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"..:4", ".:4", "a-dir:4", "a-file:8"}; !slices.Equal(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
}

func TestPIDName(t *testing.T) {
	for name, want := range map[string]int{"1": 1, "42": 42, "4194303": 4194303} {
		if got, ok := PIDName([]byte(name)); !ok || got != want {
			t.Errorf("PIDName(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"", ".", "..", "0", "self", "4194304", "12a", "99999999999999999999999", "-1"} {
		if got, ok := PIDName([]byte(name)); ok {
			t.Errorf("PIDName(%q) = %d, true; want no pid", name, got)
		}
	}
}
