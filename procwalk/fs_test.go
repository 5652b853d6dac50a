//go:build linux

package procwalk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestNewFS(t *testing.T) {
	if _, err := NewFS("testdata/proc"); err != nil {
		t.Errorf("NewFS(fixture): %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	_, err := NewFS(missing)
	if !errors.Is(err, ErrNoProc) {
		t.Fatalf("NewFS(%s) = %v; want ErrNoProc", missing, err)
	}
	if msg := err.Error(); !strings.Contains(msg, missing) || !strings.Contains(msg, "--proc") {
		t.Errorf("NewFS error %q should name the path and the fix", msg)
	}
	if _, err := NewFS(t.TempDir()); !errors.Is(err, ErrNoProc) {
		t.Errorf("NewFS(empty dir) = %v; want ErrNoProc", err)
	}
}

func TestFSPath(t *testing.T) {
	fs := FS{root: "/proc"}
	if got := fs.Path("self", "auxv"); got != "/proc/self/auxv" {
		t.Errorf("Path = %q", got)
	}
	if got := fs.Root(); got != "/proc" {
		t.Errorf("Root = %q", got)
	}
}

// Denied cannot be faked with fixture files when tests run as root (root
// reads any file whatever its mode), so these use errors the kernel really
// returned: ENOENT from a missing file, and EACCES from
// /proc/sys/vm/drop_caches, which is write-only even for root.
func TestClassifyRealErrors(t *testing.T) {
	_, err := readFile(filepath.Join(t.TempDir(), "gone"))
	if !IsGone(err) || !errors.Is(err, ErrGone) || !errors.Is(err, fs.ErrNotExist) || IsDenied(err) {
		t.Errorf("missing file: %v; want gone (ErrGone wrapping ENOENT), not denied", err)
	}
	if !strings.Contains(err.Error(), "gone") {
		t.Errorf("missing file error %q does not name the file", err)
	}

	_, err = readFile("/proc/sys/vm/drop_caches")
	switch {
	case errors.Is(err, syscall.EACCES):
		if !IsDenied(err) || !errors.Is(err, ErrDenied) || IsGone(err) {
			t.Errorf("drop_caches: %v; want denied (ErrDenied wrapping EACCES), not gone", err)
		}
	default:
		t.Logf("reading /proc/sys/vm/drop_caches gave %v, not EACCES: real-EACCES check skipped", err)
	}

	if os.Geteuid() != 0 {
		p := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(p, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := readFile(p); !IsDenied(err) || !errors.Is(err, ErrDenied) {
			t.Errorf("mode 000 file as uid %d: %v; want denied", os.Geteuid(), err)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err          error
		gone, denied bool
	}{
		{&os.PathError{Op: "open", Path: "/proc/1/io", Err: syscall.ENOENT}, true, false},
		{&os.PathError{Op: "read", Path: "/proc/1/smaps_rollup", Err: syscall.ESRCH}, true, false},
		{&os.PathError{Op: "open", Path: "/proc/1/io", Err: syscall.EACCES}, false, true},
		{&os.PathError{Op: "readlink", Path: "/proc/1/exe", Err: syscall.EPERM}, false, true},
		{&os.PathError{Op: "read", Path: "/proc/1/stat", Err: syscall.EIO}, false, false},
		{ErrMalformed, false, false},
	}
	for _, tt := range tests {
		got := Classify(tt.err)
		if IsGone(got) != tt.gone || errors.Is(got, ErrGone) != tt.gone {
			t.Errorf("classify(%v) = %v: gone %v; want %v", tt.err, got, IsGone(got), tt.gone)
		}
		if IsDenied(got) != tt.denied || errors.Is(got, ErrDenied) != tt.denied {
			t.Errorf("classify(%v) = %v: denied %v; want %v", tt.err, got, IsDenied(got), tt.denied)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("classify(%v) = %v lost the original error", tt.err, got)
		}
	}
	if Classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
}

// procwalk never suggests mounting procfs over a directory that holds
// files: the mount would hide them.
func TestNewFSNeverSuggestsMountingOverFiles(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewFS(full)
	if !errors.Is(err, ErrNoProc) || strings.Contains(err.Error(), "mount -t proc") || !strings.Contains(err.Error(), "holds other files") {
		t.Errorf("a directory with files: %v", err)
	}
	empty := t.TempDir()
	if _, err := NewFS(empty); !errors.Is(err, ErrNoProc) || !strings.Contains(err.Error(), "mount -t proc proc "+empty) {
		t.Errorf("an empty directory: %v", err)
	}
}
