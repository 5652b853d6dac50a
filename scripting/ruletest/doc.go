// Package ruletest runs rule tests: a Lua rule over input frames (a
// recording, or a few lines per frame describing sessions and processes
// over time), checked against the alerts, kills and metrics it is expected
// to make at given times. `procwalk test PATH...` runs them; every bundled
// script and example rule has one, run by `go test ./...`.
//
// A test file (NAME.ruletest: *.test is what Go's own test binaries are
// called, which .gitignore files leave out), one statement a line, #
// comments:
//
//	rule memory-guard -- limit=2GiB ticks=3   the script (bundled, or a file
//	                                          relative to the test) and its arguments
//	mode watch                                watch (default: one state across the
//	                                          frames) or run (a fresh run each frame)
//	user alice 1000                           user names (user=alice on a process)
//	host cpus=4 mem=16GiB                     the host's figures (these are the defaults)
//
//	at 0s                                     a frame, at a time from the first
//	  session tmux:build                      a session: the processes under it and
//	    100 bash rss=5MiB                     their descendants are its members
//	      101 make                            a child of 100 (indented below it)
//	        102 cc1 rss=1GiB cpu_time=12
//	at 10s                                    the next frame: the last one, changed
//	  102 rss=2.5GiB                          a known process takes new values
//	  exit 101                                ... or exits
//	every 10s until 2m                        frames like the last, 10s apart
//
//	expect 30s kill pid=102 outcome=dry_run
//	expect 30s alert severity=warning session=build message~"would kill cc1"
//	expect 1m emit my_metric session=build value=3
//	expect 0s print "2 zombies under 1 parent"
//	expect 0s log "over the 2.0 GiB limit"
//
// Instead of "at" blocks, "replay FILE" takes the frames of a recording
// (procwalk record), times counted from its first frame.
//
// A process line is PID, its name when new, then keys: ppid pgrp sid tty
// comm cmdline exe cwd cgroup user uid state threads kernel, sizes rss
// vsize shared swap pss uss read_bytes write_bytes (2GiB, 512M), cpu_time
// (seconds), fds oom_score, age (how long it has run at this frame: 3h).
// Rates are measured between frames by procwalk's Sampler, as on a host
// (cpu_time 60 then 90 a minute later is 50 % CPU; rss growing 1 GiB in a
// minute is a growth of 1 GiB/min); cpu (percent), growth, read_rate and
// write_rate set one by hand. A session line is KIND:NAME and keys: agent
// sessions take status (working, idle, blocked, rate_limited, error,
// ended), status_for (how long so far), why, model, context_percent,
// context_window, context_used and the token counts; cgroup sessions
// memory_limit, memory_usage (else
// the members' RSS) and cpu_quota (cores); any other key is an attribute
// (s.attrs.KEY).
//
// An expectation names a time, what (alert, kill, emit MEASUREMENT, print
// TEXT, log TEXT) and keys that must match (key=value, numbers compared as
// numbers; key~regexp): an alert's are its tags and fields (message,
// severity, kind, session, value, threshold, pid, comm ...), a kill's the
// fields of its procwalk_action line (pid, comm, outcome, signals, scope,
// session, reason). Alerts and kills are checked at every frame: one that
// no expectation names fails the test, so a test pins when a rule fires
// and when it does not. Emitted metrics are checked at the times an
// expectation names their measurement (every metric of it then must be
// expected); printed and logged lines only for the texts named (a line
// holding the text).
//
// The rule runs as under watch --replay: on the frames' clock (pw.now(),
// debounce durations), every kill rehearsed on its frame and reported as a
// dry run, never sent. A test passes when every expectation held, nothing
// unexpected happened and no run failed; otherwise Result.Diff lists, time
// by time, what was expected and not got (-) and what was got and not
// expected (+).
package ruletest
