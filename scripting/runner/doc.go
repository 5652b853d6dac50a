// Package runner runs a Lua rule (scripting) on frames for a host
// program such as procwalk's CLI: the rule a name names, a file or a
// bundled script (Load); once (Run.Frame), every interval on this host's
// frames (Loop.Every), or on a recording's frames on the recorded clock
// (Replay, Loop.Replay, Loop.ReplayRuns); in this process or in a worker
// (Run.Worker); or on each gather of a host that batches its own lines,
// the script's joining them (Hook: telegraf --script). A run's metrics
// and kill outcomes are lines of the host's Encoder, buffered per run and
// written whole (Lines); a stdout whose reader has gone ends the run
// (WatchStdout).
//
// The host builds the runtime's config (the Killer, the limits, the
// logger) and the pipeline; runner never reads flags and never imports
// plugin: the line encoder is the host's.
package runner
