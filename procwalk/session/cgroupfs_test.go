//go:build linux

package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A value file is read whole into one reused buffer, each value parsed
// before the next read overwrites it; a FIFO planted in a tree the user
// points --cgroup-root at reads as no value instead of blocking the gather.
func TestCgroupFSRead(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"memory.current": "858993460\n",
		"memory.max":     "max\n",
		"cpu.max":        "150000 100000\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "memory.high"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCgroupFS(dir)
	for _, tc := range []struct {
		file string
		want cgroupValue
	}{
		{"memory.current", cgroupValue{v: 858993460, ok: true}},
		{"cpu.max", cgroupValue{v: 150000, v2: 100000, ok: true}},
		{"memory.max", cgroupValue{v: ^uint64(0), ok: true}}, // unlimited
		{"memory.high", cgroupValue{}},                       // the FIFO: nothing written, no value
		{"missing", cgroupValue{}},
		{"memory.current", cgroupValue{v: 858993460, ok: true}}, // cached
	} {
		if got := c.read(dir, "/", tc.file); got != tc.want {
			t.Errorf("read %s = %+v, want %+v", tc.file, got, tc.want)
		}
	}
}
