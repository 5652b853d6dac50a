package plugin

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/procwalk/procwalk/procwalk"
)

// LineLogger writes one line per message, prefixed with the level marker
// Telegraf's execd input reads from a plugin's stderr: "E! ", "W! ", "I! ",
// "D! ". A message's own newlines become spaces, so a message is never split
// into a line Telegraf would log as an unmarked error, and a line longer
// than procwalk.MaxLogLineBytes is cut (procwalk.CapLines): execd stops
// reading stderr for good at a line over 64 KiB.
type LineLogger struct {
	mu    sync.Mutex
	w     io.Writer
	debug bool
}

// NewLineLogger logs to w; Debugf writes only when debug is set.
func NewLineLogger(w io.Writer, debug bool) *LineLogger {
	return &LineLogger{w: procwalk.CapLines(w), debug: debug}
}

func (l *LineLogger) Errorf(format string, args ...interface{}) { l.log("E! ", format, args) }
func (l *LineLogger) Warnf(format string, args ...interface{})  { l.log("W! ", format, args) }
func (l *LineLogger) Infof(format string, args ...interface{})  { l.log("I! ", format, args) }
func (l *LineLogger) Debugf(format string, args ...interface{}) {
	if l.debug {
		l.log("D! ", format, args)
	}
}

func (l *LineLogger) log(prefix, format string, args []interface{}) {
	msg := prefix + strings.Map(noNewline, fmt.Sprintf(format, args...)) + "\n"
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, msg) // a logger has nowhere to report its own failure
}

func noNewline(r rune) rune {
	if r == '\n' || r == '\r' {
		return ' '
	}
	return r
}
