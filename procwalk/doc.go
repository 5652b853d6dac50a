// Package procwalk reads Linux processes from /proc in one pass and returns
// plain Go values: every visible process with its memory, CPU and IO, the
// process tree, and an account of what could not be seen. It imports only the
// standard library and golang.org/x/sys/unix, and knows nothing of Telegraf
// or Lua: emitters and rule engines build on its values.
//
// # Reading /proc: FS
//
// All access goes through an FS rooted at a path: NewFS("/proc") on a live
// host, NewFS("testdata/proc") in tests, which keep a fixture tree of plain
// files. FS.Host reads the host facts needed to turn /proc numbers into units:
// boot time (btime), USER_HZ (AT_CLKTCK from self/auxv, 100 when absent), page
// size, MemTotal, CPU count and the proc mount's hidepid option.
//
// # One scan: Scanner and Snapshot
//
// A Snapshot is one pass over the pid directories. Each process is read from
// its stat and statm files (comm, state, ppid, pgrp, session, tty, CPU ticks,
// threads, start time, sizes) and converted at the edge: CPU in seconds,
// memory in bytes, Start as an absolute time (btime + starttime/USER_HZ).
// Procs is sorted by pid. FS.Snapshot is a one-off; a Scanner reuses its
// buffers across scans and should be kept when scanning repeatedly.
//
// # What is read: Fields
//
// stat and statm are always read. Everything else costs extra system calls
// per process and is asked for with a Fields set: FieldStatus (uids, VmSwap,
// context switches), FieldCmdline, FieldExe, FieldCwd, FieldIO, FieldFDs,
// FieldCgroup, FieldOOMScore and FieldSmaps. AllFields is all of them except
// FieldSmaps, which stays opt-in: reading smaps_rollup walks the target's page
// tables under its mmap lock, which took seconds on a 200 GB process and
// stalls it meanwhile. Ask for FieldSmaps when you need PSS and USS, the only
// memory figures that add up without double-counting shared pages.
//
// Per process, Read holds the fields read, Denied those the kernel refused
// (io, exe, fds of other users' processes need ptrace access) and Malformed
// those that failed to parse. A field asked for but in none of the three does
// not apply: a kernel thread or a zombie has no exe and no smaps.
//
// # Partial data: Visibility
//
// Processes come and go while /proc is read; that is normal, never an error.
// Snapshot.Visibility counts the pid directories Listed, the processes Gone
// before or while being read, those with a Malformed file, the files Denied
// per field, and whether hidepid may hide other users' processes altogether
// (OthersHidden). Visibility.Partial reports whether anything was missed, so
// that totals are marked partial rather than silently low.
//
// # Identity: ProcID
//
// The kernel reuses pids. A ProcID is a pid with its start time in clock
// ticks since boot, which is unique within a boot. Use it to follow a
// process across snapshots (Snapshot.Lookup), for rates, for membership, and
// always before sending a signal.
//
// # The process tree
//
// The tree is built from the ppid of every process in the same scan; it never
// reads /proc/<pid>/task/<tid>/children, which most kernels lack. Parent,
// Children (in pid order), Ancestors, Descendants, Roots and Walk navigate
// it; Subtree sums a process and its descendants into Totals. A process whose
// parent is not in the snapshot (pid 1, kthreadd, a parent that just exited
// or is hidden) is a root. Totals.RSSBytes over-counts pages shared between
// members; Totals.PSSBytes does not, and covers Totals.SmapsRead members.
//
// # The pipeline: Monitor
//
// A Monitor is the one way to gather repeatedly: it plans what to read (its
// Fields and those its Stages need, such as a session.Grouper's), takes each
// snapshot from its Source (a Scanner of the FS), dates it by its Clock,
// fills Rates from the previous gather and reuses the storage of the one
// before. Commands, the Telegraf collector, Lua and the live view all gather
// through one; tests give it a Clock of their own.
//
// # Rates: Sampler
//
// A Snapshot holds counters. A Sampler (a Monitor keeps one) turns
// consecutive snapshots into Rates per process: CPU percent of one core, IO
// bytes per second and memory growth in bytes per minute (RSS, and PSS/USS
// when smaps was read both times). A process seen for the first time, a pid
// now held by another process, or a counter that went backwards gets no rate:
// Rates.Measured is false, and callers must not print that as a measured zero.
//
// # User names: Users
//
// ReadUsers reads a passwd(5) file, whose path the caller names (cmd/ uses
// /etc/passwd), in pure Go: no cgo and no NSS, so users known only to LDAP or
// sssd show as numbers. A nil *Users is valid and names every uid by number.
//
// # Sessions and safe signals
//
// Two packages build on these snapshots, imports running one way
// (kill -> session -> procwalk): procwalk/session groups processes into
// sessions (its Grouper is a Stage of the caller's Monitor), and
// procwalk/kill signals them safely. This package imports neither.
package procwalk
