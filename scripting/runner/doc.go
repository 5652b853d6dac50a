// Package runner runs a Lua rule (scripting) on frames for a host
// program such as procwalk's CLI: the rule a name names, a file or a
// bundled script (Load); once (Run.Frame), every interval on this host's
// frames (Loop.Every), or on a recording's frames on the recorded clock
// (Replay, Loop.Replay, Script.ReplayRuns); in this process or in a worker
// (Script.Worker); or on each gather of a host that batches its own lines,
// the script's joining them (Hook: telegraf --script). A run's metrics
// and kill outcomes are lines of the host's Encoder, buffered per run and
// written whole (Lines); a stdout whose reader has gone ends the run
// (WatchStdout).
//
// New builds all of it from one Options struct, for every mode: the
// script a name names, its limits and protected names checked (an
// OptionError names the flag of a bad one), its kills (procwalk's engine,
// or rehearsed on a replay's frames), its output, and the runtime in this
// process, the parent's side of its worker (Script.Worker), or the
// worker's own side serving its parent (Script.Serve). The host parses its
// flags into Options and injects what runner must not know: its line
// encoder (runner never imports plugin), its pipeline, its worker command.
package runner
