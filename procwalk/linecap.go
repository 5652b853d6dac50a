package procwalk

import (
	"bytes"
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// MaxLogLineBytes bounds every line procwalk writes to stderr, its newline
// and the cut mark included. Telegraf's execd input reads a plugin's
// stderr with a bufio.Scanner of 64 KiB: one longer line makes it log
// "token too long" and stop reading stderr for good, and the plugin then
// blocks on a full pipe. A script's print, log or error message can be of
// any length, so every line is cut here, well below that.
const MaxLogLineBytes = 4 << 10

// lineCutMark ends a line that was cut.
const lineCutMark = " ... [line cut at 4 KiB]"

// LineCap is a writer that passes lines through, cutting each one longer
// than MaxLogLineBytes to fit and marking the cut; the rest of a cut line
// is dropped up to its newline. A line may come in several writes. It is
// the one cap of procwalk's stderr: the CLI wraps its stderr once, the
// execd line logger its writer. Safe for concurrent use.
type LineCap struct {
	mu  sync.Mutex
	w   io.Writer
	n   int  // bytes of the current line written so far
	cut bool // the current line was cut: drop up to its newline
}

// CapLines returns w with its lines capped; w itself when it is a LineCap
// already, so that wrapping twice cuts once.
func CapLines(w io.Writer) *LineCap {
	if c, ok := w.(*LineCap); ok {
		return c
	}
	return &LineCap{w: w}
}

// Unwrap returns the writer the lines go to: a caller that hands the file
// itself to a child process (guard's command) passes its output unchanged.
func (c *LineCap) Unwrap() io.Writer { return c.w }

// keep is how much of a line is kept before the mark and the newline.
const keep = MaxLogLineBytes - len(lineCutMark) - 1

// Write writes b with every line capped. It reports len(b) written when
// what it kept was written: a cut is not a short write.
func (c *LineCap) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []byte   // what is written, once something is cut or dropped
	changed := false // b does not pass through whole
	pos := 0         // start of what is not yet copied to out
	rest := b
	for len(rest) > 0 {
		off := len(b) - len(rest)
		i := bytes.IndexByte(rest, '\n')
		line := rest
		if i >= 0 {
			line = rest[:i]
		}
		switch {
		case c.cut: // dropped up to the newline
			out = append(out, b[pos:off]...)
			pos, changed = off+len(line), true
		case c.n+len(line) > keep:
			room := keep - c.n
			// Cut at a rune's start: never half a UTF-8 sequence.
			for room > 0 && room < len(line) && !utf8.RuneStart(line[room]) {
				room--
			}
			out = append(out, b[pos:off+room]...)
			out = append(out, lineCutMark...)
			pos, changed = off+len(line), true
			c.cut = true
		default:
			c.n += len(line)
		}
		if i < 0 {
			break
		}
		c.n, c.cut = 0, false
		rest = rest[i+1:]
	}
	if !changed {
		_, err := c.w.Write(b)
		return len(b), err
	}
	out = append(out, b[pos:]...)
	_, err := c.w.Write(out)
	return len(b), err
}

// FileOf returns the file w writes to: w itself, or what a wrapper such
// as a LineCap writes to (an Unwrap method), so that a child process
// handed the file writes where w does.
func FileOf(w io.Writer) (*os.File, bool) {
	for {
		switch v := w.(type) {
		case *os.File:
			return v, v != nil
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return nil, false
		}
	}
}
