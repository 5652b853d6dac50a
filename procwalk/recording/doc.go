// Package recording writes and reads recordings: the frames a procwalk
// pipeline gathered on a host (every process, its rates, the sessions,
// the host's figures, each at its time), kept in one file so that rules
// can be replayed on them later (run --replay, watch --replay), the live
// view can step through them (top --replay) and rule tests can take them
// as input. `procwalk record` makes them.
//
// A recording is bounded (Options.MaxBytes), versioned (a newer format or
// frame encoding is refused with a message saying so), and can be
// anonymized (Anonymizer) for a bug report.
package recording
