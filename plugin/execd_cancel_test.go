//go:build linux

package plugin

import (
	"io"
	"testing"
	"time"
)

// startedWriter tells started when its first Write begins, then writes to
// w.
type startedWriter struct {
	w       io.Writer
	started chan struct{}
}

func (s *startedWriter) Write(p []byte) (int, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	return s.w.Write(p)
}

// A cancelled Run returns even while a batch is being written to a stdout
// nobody reads: the write used to block Run for good (the root of a
// TestExecdStdinAtEnd flake). Here the batch goes to a pipe never read;
// Run must return nil once ctx ends.
func TestExecdCancelWhileWriteBlocked(t *testing.T) {
	outR, outW := io.Pipe()
	t.Cleanup(func() { outR.Close() }) // ends the write left behind
	out := &startedWriter{w: outW, started: make(chan struct{}, 1)}
	r := startExecd(t, SignalStdin, 0, out)
	if _, err := io.WriteString(r.stdin, "\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-out.started:
	case err := <-r.done:
		t.Fatalf("Run ended before writing a batch: %v", err)
	case <-time.After(time.Minute): // a hang guard, not a speed bound
		t.Fatal("no batch written within a minute")
	}
	r.cancel()
	r.wait(t)
	if n, err := outR.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Errorf("the write left behind did not go on: read %d, %v", n, err)
	}
}
