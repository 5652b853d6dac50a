//go:build linux

package main

import (
	"os"

	"github.com/procwalk/procwalk/procwalk"
	"github.com/procwalk/procwalk/procwalk/kill"
)

// sentinel.go runs procwalk's sentinel (kill.ServeSentinel): this binary
// again, in a session of its own, holding what a kill stops or freezes so
// that it runs again whatever ends procwalk (README "Safe kill").

// sentinelArg is argv[1] of a sentinel. It is no command: only a parent
// that hands it a socket as fd 3 gets anything from it.
const sentinelArg = "kill-sentinel"

// runSentinel is main for a sentinel.
func runSentinel() error {
	return kill.ServeSentinel(os.NewFile(3, "sentinel socket"), os.Stderr)
}

// newSentinel returns the sentinel of this run's kills; nil when the env
// has none (an in-process run that is no procwalk binary).
func (e *env) newSentinel() *kill.Sentinel {
	if e.sentinel.Path == "" {
		return nil
	}
	return kill.NewSentinel(e.sentinelCommand())
}

// sentinelCommand is the env's sentinel command, with procwalk's stderr as
// the sentinel's: where it says what it did, should procwalk die. That is
// the file under the line cap runEnv puts on stderr (the sentinel's one
// line is short).
func (e *env) sentinelCommand() kill.SentinelCommand {
	cmd := e.sentinel
	if f, ok := procwalk.FileOf(e.stderr); ok {
		cmd.Stderr = f
	}
	return cmd
}
