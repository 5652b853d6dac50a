// Package kill ends processes safely, on top of package procwalk's
// snapshots and package procwalk/session's sessions: a Killer plans what a termination will do (the
// members of a scope, each admitted or refused by the hard rules and the
// protected list), then signals each target only while its ProcID still
// names it (a pidfd opened before the start time is checked), in two stages
// (the first signal, a grace, then SIGKILL), and records every outcome in
// ActionEvents.
//
// A scope is one process, a tree, a process group, a cgroup or a session
// (Scope); a tree of a fork storm is stopped top-down before it is
// signalled and re-checked after, and anything left alive is reported as
// escaped, never as success. A cgroup scope's members are the cgroup's at
// every walk; it is frozen, never killed as a whole, and what it still
// holds after the end is reported (Report.Left).
//
// ParseID and FindSession turn what a person names (a pid, PID@STARTTICKS,
// a session's KIND:NAME) into a scope's identities.
//
// Nothing is stopped or frozen without a Sentinel (Config.Sentinel): a
// process of its own that continues and thaws what an execution holds
// should this process die first. ServeSentinel is its main.
//
// Supervise is procwalk guard's engine: it runs a command, samples its
// whole tree and ends that tree through a Killer when it breaks a memory,
// CPU or time limit.
package kill
