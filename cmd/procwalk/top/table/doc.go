// Package table is the live view's model of a table, with no terminal
// library: the rows of each view built from a frame (processes, sessions,
// AI agents, the process tree and a session's members), the columns they
// have, the values they sort by and their cells, formatted as ps and
// sessions print them (cmd/procwalk/render) when a row is first shown.
//
// A Builder makes the rows of one frame. A process row holds its sort
// values in an array of float32 (a table of 10,000 rows is one
// allocation, 120 bytes a row) and formats its cells only when asked
// (Row.Cells): most rows of a big host are never on screen. Sort orders
// rows by a column, Row.Matches says whether a row holds a search text.
//
// What the view does with the rows (selection, scrolling, folding,
// drawing, keys) stays in package top; what reads the rows on screen
// (Frame.ReadMore) is the caller's: Builder.SetValues takes what was read.
package table
