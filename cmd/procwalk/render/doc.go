// Package render lays out what procwalk's commands print for people:
// numbers in short units ("12.3 MiB", "2h05m", "-" for what was not
// measured), tables fitted to a width (columns dropped by rank, long cells
// cut where they differ from their neighbours'), and wrapped text. It
// never escapes: callers pass cells already through procwalk.Printable.
package render
