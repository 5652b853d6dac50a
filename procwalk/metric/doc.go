// Package metric is procwalk's metric catalogue: every number procwalk
// measures of a process or a session, once, with its one name, unit, kind
// (gauge, counter or rate), the /proc files it reads and how to get its
// value for a process and for a session (value, ok: absent is never 0).
//
// Every output is a view of this table: ps and sessions columns and sort
// keys, JSON, Telegraf fields (and their types in the compiled-in input),
// Lua fields, the live view's columns and every top-N ranking (kill's
// "biggest", pw.top, Telegraf's process_top). A name means the same for a
// process and for a session: a session's gauge or rate is the sum over its
// members, a session's counter is its own and never goes back when a member
// exits.
//
// One rule ranks by any metric (Compare): the larger value first, a value
// that is absent after every value that is present, ties by the lower pid
// (processes) or in the given order (sessions). The sort keys of ps and
// sessions (ProcessOrder, SessionOrder) are any metric's name, or pid.
//
// Growth smooths uss_growth_bytes_per_minute for a live view: the slope
// of a least-squares line through a minute of samples per process, owned
// by the caller, which feeds it each frame.
//
// It imports procwalk and procwalk/session; they never import it.
package metric
