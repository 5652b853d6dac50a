//go:build linux

// Package onalert is watch --on-alert CMD: each alert a run raises is
// handed to a command of the user's (notify-send, logger, curl to a
// webhook) as one JSON object on its stdin. procwalk has no HTTP client of
// its own. The commands run one at a time beside the watch loop, which
// never waits for them: each is bounded in time, at most Config.Max start
// a minute, their output is capped, and a failure is a line on stderr.
// When watch ends, the alerts waiting still run for one timeout; those
// left then are counted, not sent.
package onalert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/cmd/procwalk/render"
	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/scripting"
)

// Config is watch's flags of --on-alert.
type Config struct {
	Command string        // a shell command; "" runs none
	Timeout time.Duration // how long one may run before it is killed
	Max     int           // the most started a minute
	// Host is the alerts' host: a replay's is the recorded host; ""
	// means this one's (os.Hostname).
	Host string
}

// outputBytes caps what a command's stdout and stderr may bring
// into procwalk's stderr: a command failing in a loop cannot flood it.
const outputBytes = 2 << 10

// queueSize is how many alerts may wait for a command: past it, they
// are dropped and counted (the watch loop never blocks on a slow one).
const queueSize = 64

// Runner runs the --on-alert command for alerts, one at a time, on a
// goroutine of its own that ends with Close.
type Runner struct {
	f      Config
	stderr io.Writer
	host   string
	now    func() time.Time // the rate window's clock
	start  func(cmd *exec.Cmd) error

	queue  chan []byte
	done   chan struct{}
	ending atomic.Bool // a timeout after close: what is still queued is not sent

	mu      sync.Mutex
	dropped int         // alerts not sent since the last report
	starts  []time.Time // command starts in the last minute
}

// New starts the runner of f.Command, or returns nil without one. Its
// lines go to stderr.
func New(f Config, stderr io.Writer) *Runner {
	if f.Command == "" {
		return nil
	}
	host := f.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	r := &Runner{f: f, stderr: stderr, host: host, now: time.Now, start: (*exec.Cmd).Start,
		queue: make(chan []byte, queueSize), done: make(chan struct{})}
	go r.loop()
	return r
}

// Alert hands a run's procwalk_alert metric to the command; it never
// blocks: a full queue, or a minute past --on-alert-max, drops it (and
// counts it, for a line when sending resumes).
func (r *Runner) Alert(m scripting.WorkerEmit) {
	if r == nil {
		return
	}
	b, err := alertJSON(m, r.host)
	if err != nil {
		fmt.Fprintf(r.stderr, "procwalk: on-alert: an alert cannot be written as JSON: %s\n", procwalk.Printable(err.Error()))
		return
	}
	select {
	case r.queue <- b:
	default:
		r.mu.Lock()
		r.dropped++
		r.mu.Unlock()
	}
}

// Close stops taking alerts and waits for the queued ones to run, for one
// --on-alert-timeout: those not started by then are dropped and counted,
// and the one running finishes within its own timeout. So watch ends at
// most two timeouts after it was asked to, the last tick's alerts sent.
func (r *Runner) Close() {
	if r == nil {
		return
	}
	close(r.queue)
	t := time.AfterFunc(r.f.Timeout, func() { r.ending.Store(true) })
	<-r.done
	t.Stop()
	r.reportDropped()
}

func (r *Runner) loop() {
	defer close(r.done)
	for b := range r.queue {
		if r.ending.Load() {
			r.mu.Lock()
			r.dropped++
			r.mu.Unlock()
			continue
		}
		if !r.allow() {
			continue
		}
		r.reportDropped()
		r.run(b)
	}
}

// allow reports whether a command may start now: fewer than --on-alert-max
// started in the last minute. A refused alert is counted as dropped.
func (r *Runner) allow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	kept := r.starts[:0]
	for _, t := range r.starts {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	r.starts = kept
	if len(r.starts) >= r.f.Max {
		r.dropped++
		return false
	}
	r.starts = append(r.starts, now)
	return true
}

// reportDropped says how many alerts were not sent since it last said.
func (r *Runner) reportDropped() {
	r.mu.Lock()
	n := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if n > 0 {
		fmt.Fprintf(r.stderr, "procwalk: on-alert: %s not sent: at most %d commands a minute (--on-alert-max), %d waiting at most, and none after watch ends\n",
			render.CountOf(n, "alert", "alerts"), r.f.Max, queueSize)
	}
}

// run runs the command once with b on its stdin, in a process group of
// its own (killed whole at the timeout), and reports a failure.
func (r *Runner) run(b []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), r.f.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", r.f.Command)
	cmd.Stdin = bytes.NewReader(b)
	out := &cappedBuffer{max: outputBytes}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A child of the command holding its output open keeps Wait from
	// returning: the pipes are closed this long after the kill.
	cmd.WaitDelay = time.Second
	began := time.Now()
	err := r.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	took := time.Since(began).Round(time.Millisecond)
	var why string
	switch {
	case err == nil:
		return
	case ctx.Err() != nil:
		why = fmt.Sprintf("killed after --on-alert-timeout %s", r.f.Timeout)
	default:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			why = fmt.Sprintf("%s after %s", ee.ProcessState, took)
		} else {
			why = err.Error()
		}
	}
	msg := fmt.Sprintf("procwalk: on-alert: %s: %s", r.f.Command, why)
	if text := strings.TrimRight(out.String(), "\n"); text != "" {
		msg += ": " + text
	}
	fmt.Fprintln(r.stderr, procwalk.Printable(msg))
}

// alertJSON is the JSON object a command reads: the alert's tags and
// fields (rule, severity, kind, session, message, pid, comm, value ...),
// its time and the host; strings escaped as procwalk prints every name,
// so a process name cannot put a control sequence into a notification.
func alertJSON(m scripting.WorkerEmit, host string) ([]byte, error) {
	obj := make(map[string]any, len(m.Tags)+len(m.Fields)+2)
	for k, v := range m.Tags {
		obj[k] = procwalk.Printable(v)
	}
	for k, v := range m.Fields {
		if s, ok := v.(string); ok {
			v = procwalk.Printable(s)
		}
		obj[k] = v
	}
	obj["time"] = m.Time.UTC().Format(time.RFC3339Nano)
	obj["host"] = procwalk.Printable(host)
	b, err := json.Marshal(obj)
	return append(b, '\n'), err
}

// cappedBuffer keeps the first max bytes written to it and counts the
// rest. Only Write: an io.ReaderFrom would be used instead (io.Copy),
// uncapped.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	more int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	n := min(max(c.max-c.buf.Len(), 0), len(p))
	c.buf.Write(p[:n])
	c.more += len(p) - n
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	s := c.buf.String()
	if c.more > 0 {
		s += fmt.Sprintf(" ... (output cut at %s)", procwalk.FormatBytes(uint64(c.max)))
	}
	return s
}
