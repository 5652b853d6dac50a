//go:build linux

package main

import (
	"context"
	"fmt"
	"github.com/procwalk/procwalk/procwalk/kill"
	"io"
	"os"
	"strings"

	"github.com/procwalk/procwalk/procwalk"
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

// hostFS is the FS of procwalk's own /proc, never --proc's: the worker's
// own address space and memory cgroup are read there. Zero when /proc is
// not mounted: no RLIMIT_AS and no cgroup then.
func hostFS() procwalk.FS {
	fs, _ := procwalk.NewFS(procwalk.DefaultRoot)
	return fs
}
