// Package plugin turns procwalk gathers into metrics: Telegraf line
// protocol for `procwalk telegraf` (inputs.exec, inputs.execd) and
// Telegraf-accumulator calls for the compiled-in input (Input, registered as
// inputs.procwalk by the nested module plugin/telegraf).
//
// A Collector owns what persists between gathers (the scanner's buffers,
// the rate sampler, the session grouper, the encoder's buffer): call
// WriteBatch once per gather for line protocol, Accumulate for an
// Accumulator, or run an Execd for Telegraf's execd protocol. The schema
// (procwalk_session, procwalk_process, procwalk, procwalk_action, and
// Telegraf procstat's procstat and procstat_lookup) is documented in
// README.md beside this file.
//
// Strings from /proc are sanitized, and the encoder (line-protocol/v2) is
// never lax: whatever a process calls itself, every metric is one valid line.
package plugin
