//go:build linux

package fsio

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestOpenUserFile(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(reg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.jsonl")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	uid := os.Getuid()
	for _, tc := range []struct {
		path  string
		owner int
		want  error  // nil: opened
		what  string // in the message
	}{
		{reg, uid, nil, ""},
		{reg, AnyOwner, nil, ""},
		{reg, uid + 1, ErrOtherOwner, "uid"},
		{fifo, uid, ErrNotRegular, "a FIFO"}, // no writer: a blocking open would hang here
		{link, uid, ErrSymlink, ""},
		{dir, uid, ErrNotRegular, "a directory"},
		{sock, uid, ErrNotRegular, "a socket"},
		{"/dev/null", AnyOwner, ErrNotRegular, "a character device"},
		{filepath.Join(dir, "none"), uid, syscall.ENOENT, ""},
	} {
		f, err := OpenUserFile(tc.path, tc.owner)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.path, err)
				continue
			}
			b := make([]byte, 8)
			if n, err := f.ReadAt(b, 0); err != nil || string(b[:n]) != "{}\n" || f.Size != 3 || f.UID != uint32(uid) {
				t.Errorf("%s: read %q, %v, size %d uid %d", tc.path, b[:n], err, f.Size, f.UID)
			}
			f.Close()
			continue
		}
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.what) {
			t.Errorf("%s owner %d: %v, want %v naming the path and %q", tc.path, tc.owner, err, tc.want, tc.what)
		}
	}

	if b, err := ReadUserFile(reg, uid, 3); err != nil || string(b) != "{}\n" {
		t.Errorf("ReadUserFile: %q, %v", b, err)
	}
	if _, err := ReadUserFile(reg, uid, 2); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadUserFile over its bound: %v", err)
	}
	if _, err := ReadUserFile(fifo, uid, 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadUserFile of a FIFO: %v", err)
	}

	fd, err := OpenUserDir(dir, uid)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := EachDirent(fd, make([]byte, 4096), func(n []byte, _ byte) { names = append(names, string(n)) }); err != nil || len(names) < 4 {
		t.Errorf("entries %q, %v", names, err)
	}
	syscall.Close(fd)
	for _, p := range []string{fifo, reg, link} {
		if fd, err := OpenUserDir(p, uid); err == nil {
			syscall.Close(fd)
			t.Errorf("OpenUserDir(%s) opened it", p)
		}
	}
}

// A path swapped between a FIFO and a regular file while it is opened, as
// a user can do to a transcript in their own folder: every open returns,
// with the file's content or ErrNotRegular, never blocking. The swaps race
// the opens freely: any interleaving must come out one of the two ways.
func TestOpenUserFileSwappingFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	reg, fifo := filepath.Join(dir, "reg"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(reg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Both names point at the path in turn: link one in, rename it over.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(dir, "tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := reg
			if i%2 == 1 {
				src = fifo
			}
			os.Remove(tmp)
			if err := os.Link(src, tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	got := map[string]int{}
	for range 2000 {
		f, err := OpenUserFile(path, os.Getuid())
		switch {
		case err == nil:
			b := make([]byte, 8)
			if n, _ := f.ReadAt(b, 0); string(b[:n]) != "{}\n" {
				t.Fatalf("read %q", b[:n])
			}
			f.Close()
			got["regular"]++
		case errors.Is(err, ErrNotRegular), errors.Is(err, syscall.ENOENT), strings.Contains(err.Error(), "replaced while opened"):
			got["refused"]++
		default:
			t.Fatalf("open: %v", err)
		}
	}
	t.Logf("2000 opens of a swapping path: %v", got)
}

// A container's files are read inside its root: a relative link (the
// Kubernetes service-account files are ..data/NAME links) is followed
// there, an absolute one resolves inside the root, never to the host's
// file of that name, and a FIFO is refused.
func TestReadUserFileIn(t *testing.T) {
	root := t.TempDir()
	secrets := filepath.Join(root, "var/run/secrets/kubernetes.io/serviceaccount")
	for _, d := range []string{filepath.Join(secrets, "..data"), filepath.Join(root, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(secrets, "..data/namespace"), "prod\n")
	if err := os.Symlink("..data/namespace", filepath.Join(secrets, "namespace")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(root, "etc/inside"), "web-1\n")
	if err := os.Symlink("/etc/inside", filepath.Join(root, "etc/hostname")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "etc/escape")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "etc/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"var/run/secrets/kubernetes.io/serviceaccount/namespace": "prod\n",
		"etc/hostname": "web-1\n", // /etc/inside of the root, not the host's
	} {
		if b, err := ReadUserFileIn(root, rel, AnyOwner, 4096); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, want)
		}
	}
	if b, err := ReadUserFileIn(root, "etc/escape", AnyOwner, 4096); err == nil {
		t.Errorf("etc/escape read %q: an absolute link left the root", b)
	}
	if _, err := ReadUserFileIn(root, "etc/fifo", AnyOwner, 4096); !errors.Is(err, ErrNotRegular) {
		t.Errorf("etc/fifo: %v, want ErrNotRegular", err)
	}
}
