//go:build linux

package session

import (
	"errors"
	"maps"
	"time"

	"github.com/procwalk/procwalk/procwalk"
)

// tmux_cache.go keeps each tmux server's answer between gathers, so that a
// long-running Grouper (telegraf --execd, watch, top) runs no tmux client
// while nothing changed in tmux.
//
// Invalidation rule: an answer is reused while its server is the same
// process (pid and start time) and has not run since our list-panes was
// over: its run count (/proc/<pid>/schedstat, the times the kernel put it
// on a CPU; without CONFIG_SCHED_INFO its context switches in status) is
// the one recorded then. tmux is one thread that sleeps until an event,
// and everything that changes its sessions, windows, panes, names or
// attached clients is an event it wakes up for: a client's command
// (new-window, rename-session, attach), a pane's output (which can
// rename a window), a pane's process exiting, a timer. A change of the
// server's children alone would miss renames and moved panes. The count
// is taken once the server is asleep again after answering (its handling
// of our client's exit must not count as a change), within
// tmuxSettleTimeout; a server that stays busy is asked at every gather,
// as before. A socket no longer listed drops its answer.

// tmuxCached is one server's answer, kept while the server did not run.
type tmuxCached struct {
	server procwalk.ProcID
	runs   uint64 // the server's run count once it slept after answering
	answer tmuxServer
	bad    int // records that did not parse, noted at every reuse
}

// tmuxSettleTimeout bounds the wait for a server to sleep again after
// answering; tmuxSettlePoll is the pause between looks.
const (
	tmuxSettleTimeout = 5 * time.Millisecond
	tmuxSettlePoll    = 100 * time.Microsecond
)

// tmuxServerState is what the cache looks at of a server process: its
// identity, its run count and whether it sleeps.
type tmuxServerState struct {
	id       procwalk.ProcID
	runs     uint64
	sleeping bool
}

// readTmuxServer reads the state of the server of pid under fs.
func readTmuxServer(fs procwalk.FS, pid int) (tmuxServerState, error) {
	st, err := fs.ReadStat(pid)
	if err != nil {
		return tmuxServerState{}, err
	}
	s := tmuxServerState{id: procwalk.ProcID{PID: pid, StartTicks: st.StartTicks}, sleeping: st.State == 'S'}
	if ss, err := fs.ReadSchedstat(pid); err == nil {
		s.runs = ss.Runs
		return s, nil
	} else if !procwalk.IsGone(err) && !errors.Is(err, procwalk.ErrMalformed) {
		return tmuxServerState{}, err
	}
	// No schedstat (a kernel without CONFIG_SCHED_INFO): every run ends
	// in a context switch.
	status, err := fs.ReadStatus(pid)
	if err != nil {
		return tmuxServerState{}, err
	}
	s.runs = status.VoluntaryCtxSwitches + status.InvoluntaryCtxSwitches
	return s, nil
}

// cachedAnswer returns the kept answer of socket when its server has not
// run since.
func (g *Grouper) cachedAnswer(known map[string]tmuxCached, socket string) (tmuxCached, bool) {
	c, ok := known[socket]
	if !ok {
		return tmuxCached{}, false
	}
	now, err := g.tmux.readServer(c.server.PID)
	return c, err == nil && now.id == c.server && now.runs == c.runs
}

// settle waits for the server that just answered to sleep again and
// returns the answer to keep, false when the server stayed busy or
// could not be read.
func (g *Grouper) settle(srv tmuxServer, bad int) (tmuxCached, bool) {
	deadline := time.Now().Add(g.tmux.settleWait)
	for {
		first, err := g.tmux.readServer(srv.pid)
		if err != nil {
			return tmuxCached{}, false
		}
		if first.sleeping {
			// Asleep with the same count at both looks: it had run
			// everything our client caused, and nothing since.
			second, err := g.tmux.readServer(srv.pid)
			if err == nil && second.sleeping && second == first {
				return tmuxCached{server: first.id, runs: first.runs, answer: srv, bad: bad}, true
			}
		}
		if time.Now().After(deadline) {
			return tmuxCached{}, false
		}
		time.Sleep(tmuxSettlePoll)
	}
}

// knownAnswers is a copy of the kept answers for one ask, made on the
// Grouper's goroutine: the ask runs on its own while the scan does. nil
// for the first ask, whose answers are not kept: a one-shot command asks
// once, and waiting for the servers to settle would be its loss.
func (g *Grouper) knownAnswers() map[string]tmuxCached {
	first := !g.tmux.asked
	g.tmux.asked = true
	if !g.tmux.cacheable || first {
		return nil
	}
	if known := maps.Clone(g.tmux.answers); known != nil {
		return known
	}
	return map[string]tmuxCached{}
}
