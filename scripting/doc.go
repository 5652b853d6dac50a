// Package scripting runs Lua (5.1, gopher-lua) scripts over procwalk's
// snapshots: rules and reports that read processes and sessions, emit
// metrics and alerts, and ask for kills.
//
// Scripts are compiled once (Compile, LoadFile) and run many times by a
// Runtime, which keeps the script's procwalk.state between runs. Every run
// is sandboxed: only the base, table, string, math, capped coroutine and a
// clock-only os library are there; no files, no io, no debug, no code
// loading; print goes to Config.Print, never stdout. A run stops at its
// deadline, when the heap grows past its budget, or at a call-depth, stack,
// string, pattern or coroutine limit, with an error naming the script's
// file:line.
//
// The host supplies what scripts act through, as small interfaces: a
// Killer (EngineKiller wraps procwalk's verified, protected terminate) and
// an Emitter for line protocol. The Lua API is documented in README.md in
// this directory.
//
// A host can run scripts in a worker process under limits the kernel
// enforces (Worker, the parent's side; AcceptWorker and WorkerConn.Serve,
// the worker's): the host re-executes its own binary, which runs the same
// command line and answers one request per run; a worker that dies costs
// the host one error and a new worker at the next run.
package scripting
