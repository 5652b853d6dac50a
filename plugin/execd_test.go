//go:build linux

package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type execdRun struct {
	stdin  *io.PipeWriter
	out    *bufio.Reader
	stderr *syncBuffer
	done   chan error
	cancel context.CancelFunc
}

func startExecd(t *testing.T, signal string, interval time.Duration, out io.Writer) *execdRun {
	t.Helper()
	return startExecdSignals(t, signal, interval, out, nil)
}

// startExecdSignals starts an Execd as startExecd does, with signals
// delivered on signals; set, if any, changes the Execd before it runs.
func startExecdSignals(t *testing.T, signal string, interval time.Duration, out io.Writer, signals <-chan os.Signal, set ...func(*Execd)) *execdRun {
	t.Helper()
	inR, inW := io.Pipe()
	r := &execdRun{stdin: inW, stderr: &syncBuffer{}, done: make(chan error, 1)}
	if out == nil {
		outR, outW := io.Pipe()
		r.out = bufio.NewReader(outR)
		out = outW
		t.Cleanup(func() { outR.Close() })
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	t.Cleanup(cancel)
	x := &Execd{
		Collector: userSessions(t, Config{}),
		Stdin:     inR, Stdout: out, Log: NewLineLogger(r.stderr, true),
		Signal: signal, Interval: interval, Signals: signals,
	}
	for _, f := range set {
		f(x)
	}
	go func() { r.done <- x.Run(ctx) }()
	return r
}

// readBatch reads lines up to and including the self-metrics line.
func (r *execdRun) readBatch(t *testing.T) []point {
	t.Helper()
	var b []byte
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading a batch: %v (so far %q)", err, b)
		}
		b = append(b, line...)
		if bytes.HasPrefix(line, []byte(MeasurementSelf+",")) {
			return decode(t, b)
		}
	}
}

func (r *execdRun) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a speed bound: CI's 2 cores may be loaded
		t.Fatal("Run did not return within a minute")
	}
}

// STDIN mode with no line coming (Telegraf's execd left at its default
// signal, "none") says so once, then still answers lines; before, the run
// stayed silent for good.
func TestExecdSaysWhenNoStdinLineComes(t *testing.T) {
	r := startExecdSignals(t, SignalStdin, 0, nil, nil, func(x *Execd) { x.FirstLineWait = time.Nanosecond })
	stderr, inW := r.stderr, r.stdin
	const want = `W! no line on stdin in 1ns: --signal STDIN gathers once per line Telegraf writes to stdin, which Telegraf's execd does only with signal = "STDIN"`
	guard := time.After(time.Minute) // a hang guard, not a speed bound
	for !strings.Contains(stderr.String(), want) {
		select {
		case <-guard:
			t.Fatalf("no warning within a minute:\n%s", stderr)
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := io.WriteString(inW, "\n"); err != nil {
		t.Fatal(err)
	}
	r.readBatch(t)
	inW.Close()
	r.wait(t)
	if n := strings.Count(stderr.String(), "W! no line on stdin"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, stderr)
	}
}

func TestExecdGathersPerStdinLineAndStopsAtEOF(t *testing.T) {
	r := startExecd(t, SignalStdin, 0, nil)
	for i := 0; i < 2; i++ {
		if _, err := io.WriteString(r.stdin, "\n"); err != nil {
			t.Fatal(err)
		}
		ps := r.readBatch(t)
		s := only(ps, MeasurementSession)
		if len(s) != 2 {
			t.Fatalf("batch %d: %d sessions, want 2", i, len(s))
		}
		// The silent first gather at start gives even the first batch rates.
		if _, ok := s[0].fields["cpu_percent"]; !ok {
			t.Errorf("batch %d has no cpu_percent: rates must carry across gathers", i)
		}
	}
	r.stdin.Close()
	r.wait(t)
	for _, line := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, "D! ") && !strings.HasPrefix(line, "I! ") {
			t.Errorf("stderr line without a level marker or above debug: %q", line)
		}
	}
}

// Stdin lines queued while a gather runs are answered by one gather, not
// one each; the self metrics count the gathers skipped.
func TestExecdMergesQueuedLines(t *testing.T) {
	const queued = 40
	r := startExecd(t, SignalStdin, 0, nil)
	// One write: the lines are queued before the first gather can run.
	if _, err := io.WriteString(r.stdin, strings.Repeat("\n", queued)); err != nil {
		t.Fatal(err)
	}
	batches, skipped := 0, int64(0)
	for batches+int(skipped) < queued {
		self := only(r.readBatch(t), MeasurementSelf)
		batches++
		skipped = self[0].fields["gathers_skipped"].(int64)
	}
	if batches+int(skipped) != queued || batches >= queued/2 {
		t.Errorf("%d lines answered by %d batches, %d gathers skipped; want far fewer batches, the rest skipped", queued, batches, skipped)
	}
	r.stdin.Close()
	r.wait(t)
}

// Telegraf's signal = "SIGHUP" (or SIGUSR1, SIGUSR2) mode: a batch per
// signal, none for nothing, and stdin EOF still ends the run.
func TestExecdGathersPerSignal(t *testing.T) {
	signals := make(chan os.Signal)
	r := startExecdSignals(t, SignalSIGHUP, 0, nil, signals)
	for i := 0; i < 2; i++ {
		signals <- syscall.SIGHUP
		if s := only(r.readBatch(t), MeasurementSession); len(s) != 2 {
			t.Fatalf("batch %d: %d sessions, want 2", i, len(s))
		}
	}
	r.stdin.Close()
	r.wait(t)
	if got := strings.Count(r.stderr.String(), "D! gathering on hangup"); got != 2 {
		t.Errorf("%d debug lines naming the signal, want 2:\n%s", got, r.stderr)
	}
}

func TestExecdOwnIntervalStopsOnContext(t *testing.T) {
	r := startExecd(t, SignalNone, 20*time.Millisecond, nil)
	r.readBatch(t)
	r.readBatch(t)
	r.cancel() // what SIGTERM does through main's context
	r.wait(t)
}

func TestExecdEndsQuietlyOnClosedStdout(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pr.Close() // nobody will ever read: the first write gets EPIPE
	r := startExecd(t, SignalStdin, 0, pw)
	io.WriteString(r.stdin, "\n")
	r.wait(t)
	if strings.Contains(r.stderr.String(), "E! ") {
		t.Errorf("a closed stdout was logged as an error: %q", r.stderr.String())
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]string{"STDIN": SignalStdin, "stdin": SignalStdin, "none": SignalNone, "NONE": SignalNone,
		"SIGHUP": SignalSIGHUP, "sigusr1": SignalSIGUSR1, "SIGUSR2": SignalSIGUSR2} {
		if got, err := ParseSignal(in); err != nil || got != want {
			t.Errorf("ParseSignal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"SIGTERM", "HUP", ""} {
		if _, err := ParseSignal(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseSignal(%q) = %v, want ErrConfig", bad, err)
		}
	}
}

func TestLineLoggerKeepsOneLinePerMessage(t *testing.T) {
	var b syncBuffer
	l := NewLineLogger(&b, false)
	l.Errorf("bad\nthing %d", 1)
	l.Warnf("careful")
	l.Debugf("hidden")
	if got, want := b.String(), "E! bad thing 1\nW! careful\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}

// A stdin at its end from the start (cron, nohup, </dev/null) is no channel
// to Telegraf: --signal none gathers on and says so once (I!); the STDIN
// mode stops at once and says why (W!); a stdin that is Telegraf's pipe
// still ends every mode when it closes.
func TestExecdStdinAtEnd(t *testing.T) {
	run := func(signal string, ended bool, stdin io.Reader) (*bufio.Reader, *syncBuffer, chan error, context.CancelFunc) {
		outR, outW := io.Pipe()
		t.Cleanup(func() { outR.Close() })
		stderr := &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		done := make(chan error, 1)
		x := &Execd{Collector: userSessions(t, Config{}), Stdin: stdin, Stdout: outW, Log: NewLineLogger(stderr, true),
			Signal: signal, Interval: time.Millisecond, StdinEnded: ended}
		go func() { done <- x.Run(ctx) }()
		return bufio.NewReader(outR), stderr, done, cancel
	}
	// none: batch after batch with stdin at EOF, until SIGTERM (ctx).
	out, stderr, done, cancel := run(SignalNone, true, strings.NewReader(""))
	r := &execdRun{out: out, done: done}
	for range 3 {
		r.readBatch(t)
	}
	// Read on, as Telegraf does until it stops us: a batch begun before
	// the cancel is seen must not block Run on a pipe no one reads (it
	// did on a loaded machine: the test goroutine late to cancel).
	go io.Copy(io.Discard, out)
	cancel()
	r.wait(t)
	if n := strings.Count(stderr.String(), "I! stdin is at its end"); n != 1 {
		t.Errorf("%d I! lines about stdin, want 1:\n%s", n, stderr)
	}
	// STDIN: stops at once, with a warning naming --signal none. Its
	// stdout is read, as Telegraf reads it: a batch written to a pipe no one
	// reads blocks the run for good (it did, when a loaded machine had the
	// first batch ready before stdin's end was seen).
	out, stderr, done, _ = run(SignalStdin, true, strings.NewReader(""))
	go io.Copy(io.Discard, out)
	(&execdRun{done: done}).wait(t)
	if !strings.Contains(stderr.String(), "W! stdin ended before its first line") || !strings.Contains(stderr.String(), "--signal none") {
		t.Errorf("STDIN mode at EOF did not say why it stops:\n%s", stderr)
	}
	// none on Telegraf's pipe: its close ends the run (Telegraf stops us).
	inR, inW := io.Pipe()
	out, stderr, done, _ = run(SignalNone, false, inR)
	go io.Copy(io.Discard, out)
	inW.Close()
	(&execdRun{done: done}).wait(t)
	if strings.Contains(stderr.String(), "W! ") {
		t.Errorf("a closed Telegraf pipe warned:\n%s", stderr)
	}
}
