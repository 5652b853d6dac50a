//go:build linux

package plugin

import (
	"bytes"
	"context"
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

// writerFunc is a Write of a test's own.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The batch of a gather SIGTERM came in is still written to a reader that
// reads (it was left at once, 1000 times in 1000); the grace is long here:
// the write ends it, not the clock.
func TestCancelWriterFinishesAWriteBeingRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got bytes.Buffer
	entered, release := make(chan struct{}), make(chan struct{})
	w := cancelWriter{ctx: ctx, grace: time.Hour, w: writerFunc(func(p []byte) (int, error) {
		close(entered)
		<-release // a reader taking its time
		return got.Write(p)
	})}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := w.Write([]byte("a line\n"))
		done <- result{n, err}
	}()
	<-entered
	close(release)
	select {
	case r := <-done:
		if r.n != 7 || r.err != nil || got.String() != "a line\n" {
			t.Errorf("Write after the cancel = %d, %v; wrote %q", r.n, r.err, got.String())
		}
	case <-time.After(time.Minute): // a hang guard, not a speed bound
		t.Fatal("Write did not return within a minute")
	}
}
