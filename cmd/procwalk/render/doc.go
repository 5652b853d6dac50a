// Package render lays out what procwalk's commands print for people:
// numbers in short units ("12.3 MiB", "2h05m", "-" for what was not
// measured), tables fitted to a width (columns dropped by rank, long cells
// cut where they differ from their neighbours'), and wrapped text. It
// never escapes: callers pass cells already through procwalk.Printable.
//
// A listing also says what a gather must read for it, so that nothing
// else is read: ProcessQuery (ps's columns, order and filter: the fields
// of the scan, and smaps_rollup of the rows shown alone), TreeQuery (the
// processes a tree draws) and SessionsFields.
package render
