//go:build linux

package plugin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// StdinEnded tells a stdin no one will write to (/dev/null, a file, a pipe
// whose writer closed) from Telegraf's open pipe and from a reader that is
// no file.
func TestStdinEnded(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	file, err := os.Open("execd_stdio.go")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	open, openW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	defer openW.Close()
	closed, closedW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	closedW.Write([]byte("a line the writer left\n"))
	closedW.Close()
	for _, tt := range []struct {
		name string
		r    io.Reader
		want bool
	}{
		{"/dev/null", devNull, true},
		{"a file", file, true},
		{"an open pipe", open, false},
		{"a pipe whose writer closed", closed, true},
		{"no file", strings.NewReader(""), false},
	} {
		if got := StdinEnded(tt.r); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Execd mode closes stdout and stderr before it exits, so that Telegraf's
// readers see EOF while procwalk still runs; buffers (tests) are left alone.
func TestReleasePipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	ReleasePipes(wrapped{w}, &buf) // a file under a wrapper (the line cap) too
	if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("write after ReleasePipes = %v, want os.ErrClosed", err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("reader got %d bytes, %v; want EOF", n, err)
	}
}

type wrapped struct{ w io.Writer }

func (w wrapped) Write(b []byte) (int, error) { return w.w.Write(b) }
func (w wrapped) Unwrap() io.Writer           { return w.w }
