//go:build linux

package main

import (
	"context"
	"fmt"
	"github.com/procwalk/procwalk/procwalk/kill"
	"io"
	"os"
	"strings"
	"time"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/frame"
	"github.com/procwalk/procwalk/scripting"
)

// worker.go wires scripting's worker (scripting/worker.go) to procwalk:
// scripts run in procwalk re-executed by itself (/proc/self/exe
// script-worker), which reads its command line from its parent and runs it
// as procwalk would, with e.conn set: run, watch and telegraf then serve
// the parent's requests instead of running the script themselves, each on
// the frame the parent gathered and sent: a worker never scans /proc.

// workerName is a worker's name, its argv[0] and its comm (which the
// kernel would set to "exe", from /proc/self/exe): procwalk's own, so that
// ps, top and the reports show whose process it is.
const workerName = "procwalk"

// workerArg is argv[1] of a worker. It is no command: only a parent that
// sends it its command line on stdin gets anything from it.
const workerArg = "script-worker"

// runWorker is main for a worker: it reads the command line from ctl and
// runs it on clock with its output sent to the parent through msgs;
// stderr hears only why it could not start.
func runWorker(ctx context.Context, ctl io.Reader, msgs, stderr io.Writer, clock procwalk.Clock) error {
	conn, args, err := scripting.AcceptWorker(ctl, msgs, os.Exit)
	if err != nil {
		fmt.Fprintf(stderr, "procwalk: %s: %v\n", workerArg, err)
		return &exitErr{Code: exitUsage}
	}
	e := newEnv(strings.NewReader(""), conn.Stdout(), conn.Stderr())
	e.conn, e.clock = conn, clock
	e.sentinel = kill.SentinelCommand{Path: "/proc/self/exe", Args: []string{sentinelArg}} // the worker's kills stop what they end too
	return runEnv(ctx, e, args)
}

// serveWorker answers the parent's requests with tick, one run each on
// the parent's frame, of --proc.
func serveWorker(ctx context.Context, e *env, g *globals, l scripting.Limits, tick func(context.Context, frame.Frame) (string, error)) error {
	data, err := g.openFS()
	if err != nil {
		return err
	}
	return e.conn.Serve(ctx, l, hostFS(), data, tick, exitCode)
}

// workerConfig is the config of the parent's side of a worker running this
// command line, its output passed through the one escaping function.
// What the worker writes was escaped there already; escaping it again
// changes nothing that is safe (printable leaves backslashes alone), and
// holds if the worker was subverted.
func workerConfig(e *env, l scripting.Limits, stdout io.Writer, gatherWait time.Duration) scripting.WorkerConfig {
	return scripting.WorkerConfig{
		Path:        e.worker,
		Name:        workerName,
		Args:        []string{workerArg},
		CommandLine: e.args,
		Limits:      l,
		GatherWait:  gatherWait,
		Stdout:      procwalk.EscapingWriter{W: stdout},
		Stderr:      procwalk.EscapingWriter{W: e.stderr},
		Self:        hostFS(),
	}
}

// workerSide is cfg for a runtime in a worker (e.conn set): the hourly
// kill budget is the parent's allowance, and a kill that moves the
// script's deadline moves the parent's too. Elsewhere cfg as it is.
func workerSide(e *env, cfg scripting.Config) scripting.Config {
	if e.conn != nil {
		cfg.KillBudget, cfg.DeadlineMoved = e.conn, e.conn.DeadlineMoved
	}
	return cfg
}

// hostFS is the FS of procwalk's own /proc, never --proc's: the worker's
// own address space and memory cgroup are read there. Zero when /proc is
// not mounted: no RLIMIT_AS and no cgroup then.
func hostFS() procwalk.FS {
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	return fs
}
