//go:build linux

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

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
	if f, ok := fileOf(e.stderr); ok {
		cmd.Stderr = f
	}
	return cmd
}

// holdSignals keeps what could end procwalk from the outside from ending
// a kill that has begun, until the function it returns is called: SIGPIPE
// (a reader of stdout or stderr gone, such as a `| cat` in the scope, which
// the first signal ends), so that such a write fails with EPIPE instead,
// which the printer ignores; and SIGHUP (a terminal or an ssh connection
// gone), so that every stage is finished and the exit status is the
// kill's own. The first SIGINT or SIGTERM asks for the clean stop main
// gives it (ctx); the second ends procwalk by that signal, but only after
// the sentinel has continued and thawed whatever is stopped or frozen
// (timeout(1) sends its TERM to procwalk and to its process group: two at
// once).
func holdSignals(ctx context.Context, s *kill.Sentinel) (stop func()) {
	held := make(chan os.Signal, 4)
	signal.Notify(held, syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	ends := 0
	if ctx.Err() != nil {
		ends = 1 // the first came before the kill began
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sig := range held {
			if sig != syscall.SIGINT && sig != syscall.SIGTERM {
				continue
			}
			if ends++; ends < 2 {
				continue
			}
			if s != nil {
				s.Release()
			}
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}
	}()
	return func() {
		signal.Stop(held)
		close(held)
		<-done
	}
}
